package ingest

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"companydocs/messages"

	"companydocs"
	"companydocs/register"
)

// The real pairs between the GLEIF samples and the OffeneRegister chunks
// (found by looking up every German RAEntityID in the chunks): eleven link,
// two are the same number used by a differently named company.
var realLinks = map[string]string{
	"B8535_HRA104441":  "0SK1ILSPWNVBNQWU0W18", // Landeskreditbank Baden-Württemberg -Förderbank-, Mannheim
	"W1215_HRB2823":    "15957LLM4WNLQOOS3V21", // Stendal: the live entry, not "früher Bitterfeld"
	"R3201_VR2125":     "15958WDG0RKO4TDRAB95",
	"X1321R_HRB1279ME": "159597J39OBC4VY3PW28", // Pinneberg HRB 1279 ME among IZ, PI, EL
	"M1114_GnR236":     "1595FMURQU2HE8PSOH15",
	"U1104_HRB2840":    "1595FQ3S8BO01TPHRT80", // "Bau Stein" / "Bau-Stein"
	"B8534_HRA212219":  "1595L0URICYR1EXSTG61", // "Co.KG" / "Co. KG"
	"B8534_HRA212222":  "1595VOX04DLD2P477B48",
	"R2604_VR777":      "1595P6VEB41JGGDF5791", // "(bbz) e. V." / "e.V."
	"D3304V_GnR181":    "1595QODB05K4MNKJQN43",
	"D4201V_HRA2078":   "1595UCBCTOR1OK0NIT95",
}

var realConflicts = map[register.LEI]string{
	"1595OF0DUL28A4QDJ487": ReasonNameDiffers, // Berufsbildungsakademie "Altmark" vs Stendal HRB 573 Schweißausbildungsstätte "Altmark"
	"1595VS2FY610RNGWOF28": ReasonNameDiffers, // EssKultur Events vs Freiburg HRB 714327 Hotel Consulting Sprießler
}

func TestGLEIFLinksRealPairs(t *testing.T) {
	sink, sum := fullRun(t)
	// 400 API lines (210 German) + 210 CSV rows, the same 210 LEIs.
	want := GLEIFCounts{Read: 610, Linked: 11, Discovery: 197, DiscoveryVerified: 20, Conflicts: 2, Merged: 210, NotGerman: 190}
	if sum.GLEIF != want {
		t.Errorf("GLEIF counts = %+v, want %+v", sum.GLEIF, want)
	}
	for number, lei := range realLinks {
		p := sink.mustGet(t, profileByNumber(t, number))
		if len(p.LEIs) != 1 || string(p.LEIs[0].LEI) != lei || p.LEIs[0].Method != LinkMethod || p.LEIs[0].Status != "ISSUED" {
			t.Errorf("%s (%s): LEIs = %+v, want one link to %s", number, p.Name, p.LEIs, lei)
		}
		if d, _ := sink.Get(companydocs.DiscoveryID(register.LEI(lei))); d != nil {
			t.Errorf("linked LEI %s also became a discovery candidate", lei)
		}
	}
	for _, number := range []string{"X1321R_HRB1279IZ", "X1321R_HRB1279PI", "X1321R_HRB1279EL", "W1215_W1209_HRB2823", "W1215_HRB573", "B1204_HRB714327"} {
		if p := sink.mustGet(t, profileByNumber(t, number)); len(p.LEIs) != 0 {
			t.Errorf("%s (%s) must not be linked, has %+v", number, p.Name, p.LEIs)
		}
	}
	if len(sum.Conflicts) != len(realConflicts) {
		t.Errorf("conflicts = %+v", sum.Conflicts)
	}
	for _, c := range sum.Conflicts {
		if realConflicts[c.LEI] != c.Reason {
			t.Errorf("conflict %s: %s (%s)", c.LEI, c.Reason, c.Detail)
		}
		d := sink.mustGet(t, companydocs.DiscoveryID(c.LEI))
		if d.Verified || d.OrderingEligible() || len(d.Documents) != 0 || len(d.Discovery.Missing) == 0 {
			t.Fatalf("conflict %s stored as %+v, want an unverified discovery candidate saying why", c.LEI, d.Discovery)
		}
		// the gap names the register entry the ingest summary names, and
		// both names
		gap := d.Discovery.Missing[len(d.Discovery.Missing)-1]
		said := gap.String()
		if gap.Code != companydocs.GapRegisterNameDiffers || !strings.Contains(c.Detail, gap.Params.Entry) || !strings.Contains(said, gap.Params.Entry) ||
			!strings.Contains(said, gap.Params.GLEIFName) || !strings.Contains(said, gap.Params.Name) {
			t.Errorf("conflict %s (%s): gap %+v says %q, want %s naming the entry and both names", c.LEI, c.Detail, gap, said, companydocs.GapRegisterNameDiffers)
		}
	}
}

func TestGLEIFDiscoveryProfiles(t *testing.T) {
	sink, _ := fullRun(t)

	t.Run("fully corroborated, issued, active, parsed reference: verified", func(t *testing.T) {
		p := sink.mustGet(t, companydocs.DiscoveryID("213800QILIUD4ROSUO03"))
		court, _ := register.CourtByRA("RA000242")
		want := register.Ref{Court: court.Code, Type: register.HRB, Number: "87506"}
		if p.Source != companydocs.SourceDiscovery || p.Name != "Deutsche Bank Europe GmbH" || p.Seat != "Frankfurt am Main" || p.Ref != want || !p.Verified {
			t.Errorf("profile = %+v", p)
		}
		if !p.OrderingEligible() || !reflect.DeepEqual(p.Documents, []companydocs.DocumentType{"AD", "CD"}) || len(p.Discovery.Missing) != 0 {
			t.Errorf("documents %v, missing %v", p.Documents, p.Discovery.Missing)
		}
		if len(p.LEIs) != 1 || p.LEIs[0].LEI != "213800QILIUD4ROSUO03" || p.Discovery.RegistrationRaw != "RA000242 HRB 87506" {
			t.Errorf("LEIs %+v, raw %q", p.LEIs, p.Discovery.RegistrationRaw)
		}
	})
	t.Run("partially corroborated: unverified, says why", func(t *testing.T) {
		p := sink.mustGet(t, companydocs.DiscoveryID("159502PNRK20C8WNRW95")) // AMD Invest GmbH, Wetzlar HRB 8076
		if p.Verified || len(p.Documents) != 0 || p.Ref.Number != "8076" {
			t.Errorf("profile = %+v", p)
		}
		want := []companydocs.VerificationGap{{Code: companydocs.GapNotFullyCorroborated, Params: companydocs.GapParams{ValidationSources: "PARTIALLY_CORROBORATED"}}}
		if !reflect.DeepEqual(p.Discovery.Missing, want) {
			t.Errorf("missing = %+v, want %+v", p.Discovery.Missing, want)
		}
		if got := companydocs.GapsTextIn(messages.English, p.Discovery.Missing); got != "GLEIF's validation: partly corroborated, not fully corroborated" {
			t.Errorf("in English %q", got)
		}
	})
	t.Run("foreign authority and unparsable reference", func(t *testing.T) {
		p := sink.mustGet(t, companydocs.DiscoveryID("529900IH9V4I3VHQVO92")) // Deutsche Bank AG, Paris RA000192 "310 327 481"
		missing := companydocs.GapsTextIn(messages.English, p.Discovery.Missing)
		if p.Verified || !strings.Contains(missing, "GLEIF's registration authority RA000192 is not a German register court") ||
			!strings.Contains(missing, "GLEIF's register number “310 327 481” cannot be read") || p.Ref != (register.Ref{}) {
			t.Errorf("profile = %+v, missing %q", p, missing)
		}
		want := []companydocs.VerificationGap{
			{Code: companydocs.GapCourtUnknown, Params: companydocs.GapParams{RACode: "RA000192"}},
			{Code: companydocs.GapRegisterReferenceUnparsed, Params: companydocs.GapParams{Reference: "310 327 481"}},
		}
		if !reflect.DeepEqual(p.Discovery.Missing[:min(2, len(p.Discovery.Missing))], want) {
			t.Errorf("gaps %+v, want %+v first", p.Discovery.Missing, want)
		}
	})
	t.Run("foundation without register reference", func(t *testing.T) {
		p := sink.mustGet(t, companydocs.DiscoveryID("3912007KGGUR8HY25C94"))
		if p.Verified || !slices.ContainsFunc(p.Discovery.Missing, func(g companydocs.VerificationGap) bool { return g.Code == companydocs.GapNoRegisterReference }) ||
			!strings.Contains(companydocs.GapsTextIn(messages.English, p.Discovery.Missing), "GLEIF gives no register number") {
			t.Errorf("missing = %+v", p.Discovery.Missing)
		}
	})
}

func TestGLEIFOrderDoesNotMatter(t *testing.T) {
	first, _ := fullRun(t) // sample, fixtures, GLEIF API, GLEIF CSV
	second := newMemSink()
	// GLEIF files first, the registry files last: a re-ingest in another
	// order must give the same profiles under the same ids.
	mustRun(t, second, Options{}, gleifAPIFile(t), gleifCSVFile(t), sampleFile, fixturesFile(t))
	if !reflect.DeepEqual(first.byID, second.byID) {
		t.Errorf("sink contents differ: %d vs %d profiles", len(first.byID), len(second.byID))
		for id, b := range first.byID {
			if !bytes.Equal(b, second.byID[id]) {
				t.Errorf("%s:\n%s\n%s", id, b, second.byID[id])
				break
			}
		}
	}
}

// writeGoldenCopy writes rows under the real golden-copy header to a temp file.
func writeGoldenCopy(t *testing.T, rows ...map[string]string) string {
	t.Helper()
	f, err := os.Open(gleifCSVFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header, err := csv.NewReader(f).Read()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(header)
	for _, row := range rows {
		rec := make([]string, len(header))
		for i, col := range header {
			rec[i] = row[col]
		}
		w.Write(rec)
	}
	w.Flush()
	path := filepath.Join(t.TempDir(), "goldencopy.csv")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func gleifRow(lei, name, ra, id string) map[string]string {
	return map[string]string{
		colLEI: lei, colLegalName: name, colRACode: ra, colRAEntityID: id, colJurisdiction: "DE", colCountry: "DE",
		colEntityStatus: "ACTIVE", colRegistrationStatus: "ISSUED", colValidationSources: "FULLY_CORROBORATED",
	}
}

// Rows made for the cases the real GLEIF samples lack, against real
// register entries of the sample (made-up LEIs with valid checksums).
func TestGLEIFSuffixRules(t *testing.T) {
	registry, _ := fullRun(t)
	sink := registry.clone()
	path := writeGoldenCopy(t,
		// Charlottenburg: GLEIF writes "HRB 145575 B", the dump "HRB 145575".
		gleifRow("529900SUFFIXCASE0196", "CoBe GmbH", "RA000217", "HRB 145575 B"),
		// Pinneberg HRB 1279 without a suffix: four entries (IZ, ME, PI, EL), two live.
		gleifRow("529900SUFFIXCASE0293", "HKS GmbH", "RA000320", "HRB 1279"),
		// Kiel HRB 53 RD exists, HRB 53 XY does not: no link, a discovery candidate.
		gleifRow("529900SUFFIXCASE0390", "Anything GmbH", "RA000277", "HRB 53 XY"),
	)
	sum := mustRun(t, sink, Options{}, path)
	if p := sink.mustGet(t, profileByNumber(t, "F1103R_HRB145575")); len(p.LEIs) != 1 || p.LEIs[0].LEI != "529900SUFFIXCASE0196" {
		t.Errorf("Charlottenburg HRB 145575 B not linked: %+v", p.LEIs)
	}
	if sum.GLEIF.Linked != 1 || sum.GLEIF.Conflicts != 1 || sum.GLEIF.Discovery != 1 || sum.Reason(KindConflict, ReasonSeveralEntries) != 1 {
		t.Errorf("GLEIF counts = %+v\n%s", sum.GLEIF, sum)
	}
	if d := sink.mustGet(t, companydocs.DiscoveryID("529900SUFFIXCASE0293")); len(sum.Conflicts) == 1 && len(d.Discovery.Missing) == 1 {
		gap, c := d.Discovery.Missing[0], sum.Conflicts[0]
		want := "HRB 1279 at Pinneberg names 4 register entries, 2 of them live: " + strings.Join(gap.Params.Listed, ", ")
		if gap.Code != companydocs.GapSeveralRegisterEntries || gap.String() != want || !strings.Contains(c.Detail, "Pinneberg HRB 1279") ||
			gap.Params.Entries != 4 || gap.Params.Live != 2 || len(gap.Params.Listed) != 4 {
			t.Errorf("Pinneberg HRB 1279 gap %#v says %q (the summary %q), want %q", gap, gap.String(), c.Detail, want)
		}
	} else {
		t.Errorf("Pinneberg HRB 1279 discovery gaps %+v, conflicts %+v", d.Discovery.Missing, sum.Conflicts)
	}
	if d := sink.mustGet(t, companydocs.DiscoveryID("529900SUFFIXCASE0390")); !d.Verified || d.Ref.Suffix != "XY" {
		t.Errorf("Kiel HRB 53 XY discovery = %+v", d)
	}
}

func TestNameSimilarityOnRealPairs(t *testing.T) {
	tests := []struct {
		gleif, register string
		same            bool
	}{
		{"Bau Stein Hoch- und Tiefbau GmbH", "Bau-Stein Hoch- und Tiefbau GmbH", true},
		{"Nürk, Funk GmbH & Co.KG", "Nürk, Funk GmbH & Co. KG", true},
		{"Berufsbildungszentrum der Kreishandwerkerschaft Märkischer Kreis (bbz) e. V.", "Berufsbildungszentrum der Kreishandwerkerschaft Märkischer Kreis e.V.", true},
		{"Landeskreditbank Baden-Württemberg -Förderbank-", "Landeskreditbank Baden-Württemberg -Förderbank-", true},
		{"DEKABANK DEUTSCHE GIROZENTRALE", "DekaBank Deutsche Girozentrale", true},
		{"EssKultur Events GmbH", "Hotel Consulting Sprießler GmbH", false},
		{`Berufsbildungsakademie "Altmark" GmbH`, `Schweißausbildungsstätte "Altmark" GmbH`, false},
		{`Fahrschule der Berufsbildungsakademie "Altmark" GmbH`, "TREU-KAPITAL Agentur für Berlin-Darlehen GmbH", false},
		{"HKS GmbH", "Kurt Pahl GmbH", false},
	}
	for _, tt := range tests {
		sim := nameSimilarity(tt.gleif, tt.register)
		if got := sim >= NameMatchThreshold; got != tt.same {
			t.Errorf("nameSimilarity(%q, %q) = %.2f: same = %v, want %v", tt.gleif, tt.register, sim, got, tt.same)
		}
	}
}

func TestGLEIFCSVRowWithWrongColumnsIsSkipped(t *testing.T) {
	path := writeGoldenCopy(t, gleifRow("159551A2EG8V6QRNUY72", "CoBe GmbH", "RA000217", "HRB 145575 B"))
	b, _ := os.ReadFile(path)
	b = append(b, "529900A2NLSL4WEHU340,too,few\n"...)
	os.WriteFile(path, b, 0o644)
	sum := mustRun(t, newMemSink(), Options{}, path)
	if sum.GLEIF.Read != 2 || sum.GLEIF.Skipped != 1 || sum.Reason(KindSkipped, ReasonWrongColumns) != 1 {
		t.Errorf("GLEIF counts = %+v", sum.GLEIF)
	}
	if ex := sum.reasonIndex[KindSkipped+"\x00"+ReasonWrongColumns].Examples[0]; ex.Line != 3 {
		t.Errorf("skipped row reported at line %d, want 3", ex.Line)
	}
}
