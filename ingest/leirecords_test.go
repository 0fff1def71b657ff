package ingest

import (
	"encoding/csv"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
)

// realGoldenRow returns the row of lei in the real golden copy, by column.
func realGoldenRow(t *testing.T, lei string) map[string]string {
	t.Helper()
	f, err := os.Open(gleifCSVFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			t.Fatalf("%s is not in the golden copy", lei)
		} else if err != nil {
			t.Fatal(err)
		}
		if rec[0] == lei {
			row := make(map[string]string, len(header))
			for i, col := range header {
				row[col] = rec[i]
			}
			return row
		}
	}
}

// respelled is a copy of row with its LEI spelled otherwise and the
// given columns changed.
func respelled(row map[string]string, lei string, changes map[string]string) map[string]string {
	out := maps.Clone(row)
	out[colLEI] = lei
	maps.Copy(out, changes)
	return out
}

// TestGLEIFRecordsOfOneLEIThatDiffer feeds real golden-copy rows followed
// by the same LEI spelled in lower case with hyphens or spaces, once with
// the same data (a plain duplicate) and once with another real company's
// name or another register number. Records that differ are a conflict:
// neither wins, the LEI is on no registry profile and its discovery
// candidate is unverified and not orderable. Before the fix the later row
// won silently: the differing LEI stayed linked to the register entry (so
// a search by it was exact), or replaced the verified candidate's name.
func TestGLEIFRecordsOfOneLEIThatDiffer(t *testing.T) {
	const (
		bauStein     = "1595FQ3S8BO01TPHRT80" // links to Dresden HRB 2840 (U1104_HRB2840)
		deutscheBank = "213800QILIUD4ROSUO03" // verified discovery candidate, Frankfurt HRB 87506
	)
	otherName := realGoldenRow(t, "39120012QMNN2NSCP866")[colLegalName] // Deutsche Factoring Bank GmbH & Co. KG
	bau, bank := realGoldenRow(t, bauStein), realGoldenRow(t, deutscheBank)
	cases := []struct {
		name       string
		lei        register.LEI
		rows       []map[string]string
		differ     bool
		wantCounts GLEIFCounts
	}{
		{"linked, then spelled 1595fq3s-... with another name", bauStein,
			[]map[string]string{bau, respelled(bau, "1595fq3s-8bo0-1tph-rt80", map[string]string{colLegalName: otherName})},
			true, GLEIFCounts{Read: 2, Conflicts: 2}},
		{"verified discovery, then spelled with spaces and another name", deutscheBank,
			[]map[string]string{bank, respelled(bank, "213800 qiliud 4rosuo03", map[string]string{colLegalName: otherName})},
			true, GLEIFCounts{Read: 2, Conflicts: 2}},
		{"verified discovery, then another register number, a repeat of the first, a third name", deutscheBank,
			[]map[string]string{bank, respelled(bank, "213800-QILIUD-4ROSUO03", map[string]string{colRAEntityID: "HRB 87507"}),
				respelled(bank, "213800qiliud4rosuo03", nil), respelled(bank, deutscheBank, map[string]string{colLegalName: otherName})},
			true, GLEIFCounts{Read: 4, Conflicts: 3, Merged: 1}},
		{"linked, then the same record spelled 1595fq3s-...", bauStein,
			[]map[string]string{bau, respelled(bau, "1595fq3s-8bo0-1tph-rt80", nil)},
			false, GLEIFCounts{Read: 2, Linked: 1, Merged: 1}},
		{"verified discovery, then the same record spelled with spaces", deutscheBank,
			[]map[string]string{bank, respelled(bank, "213800 qiliud 4rosuo03", nil)},
			false, GLEIFCounts{Read: 2, Discovery: 1, DiscoveryVerified: 1, Merged: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sink := newMemSink()
			sum := mustRun(t, sink, Options{}, sampleFile, fixturesFile(t), writeGoldenCopy(t, c.rows...))
			if sum.GLEIF != c.wantCounts {
				t.Errorf("GLEIF counts %+v, want %+v\n%s", sum.GLEIF, c.wantCounts, sum)
			}
			if !c.differ {
				if n := sum.Reason(KindConflict, ReasonLEIRecordsDiffer); n != 0 || sum.Reason(KindMerged, ReasonDuplicateLEI) != 1 {
					t.Errorf("a plain repeat: %d conflicts, want 0, and one merged duplicate\n%s", n, sum)
				}
				return
			}
			checkLEIConflictReported(t, sum, c.lei, c.wantCounts.Conflicts)
			checkLEINotVerified(t, sink, c.lei, c.rows[0][colLegalName])
		})
	}
}

// checkLEIConflictReported wants the summary to list every record of lei
// as a conflict and to say so in its text.
func checkLEIConflictReported(t *testing.T, sum *Summary, lei register.LEI, records int) {
	t.Helper()
	if n := sum.Reason(KindConflict, ReasonLEIRecordsDiffer); n != records {
		t.Errorf("%d records counted as %q, want %d", n, ReasonLEIRecordsDiffer, records)
	}
	listed := 0
	for _, c := range sum.Conflicts {
		if c.LEI == lei && c.Reason == ReasonLEIRecordsDiffer {
			listed++
		}
	}
	if out := sum.String(); listed != records || !strings.Contains(out, ReasonLEIRecordsDiffer) || !strings.Contains(out, string(lei)) {
		t.Errorf("%d conflicts listed for %s, want %d; summary:\n%s", listed, lei, records, out)
	}
}

// checkLEINotVerified wants lei on no registry profile and its discovery
// candidate unverified, not orderable, with the first record's name and a
// gap that names the differing records.
func checkLEINotVerified(t *testing.T, sink *memSink, lei register.LEI, firstName string) {
	t.Helper()
	for _, id := range sink.ids() {
		p := sink.mustGet(t, id)
		if p.Source == companydocs.SourceRegistryCache && slices.ContainsFunc(p.LEIs, func(l companydocs.LEILink) bool { return l.LEI == lei }) {
			t.Errorf("registry profile %s %q still carries %s: %+v", p.ID, p.Name, lei, p.LEIs)
		}
	}
	d := sink.mustGet(t, companydocs.DiscoveryID(lei))
	if d.Verified || d.OrderingEligible() || len(d.Documents) != 0 || d.Name != firstName {
		t.Errorf("discovery candidate %q verified %v, documents %v; want %q, unverified, none", d.Name, d.Verified, d.Documents, firstName)
	}
	if len(d.Discovery.Missing) == 0 {
		t.Fatalf("discovery candidate %q has no gap", d.Name)
	}
	gap := d.Discovery.Missing[len(d.Discovery.Missing)-1]
	if gap.Code != companydocs.GapLEIRecordsDiffer || len(gap.Params.Listed) != 2 || !strings.Contains(gap.String(), firstName) {
		t.Errorf("last gap %+v says %q", gap, gap.String())
	}
}
