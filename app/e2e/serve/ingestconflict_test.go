package serve

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"companydocs/data"
	"companydocs/internal/e2e"
)

// Real records of the embedded LEI sample: a verified discovery candidate
// and another company whose name a second record of the first LEI takes.
const (
	conflictLEI       = "213800QILIUD4ROSUO03" // Deutsche Bank Europe GmbH, Frankfurt am Main HRB 87506
	conflictOtherName = "Deutsche Factoring Bank GmbH & Co. KG"
	// conflictSpelling is conflictLEI as a file may spell it.
	conflictSpelling = "213800qiliud-4rosuo03"
)

// TestIngestConflictsOverHTTP ingests, with the real ingest, the embedded
// LEI sample plus a second record of Deutsche Bank Europe GmbH's LEI,
// spelled in lower case with a hyphen and naming another real company,
// and a real register record whose name and address carry bidirectional
// controls; then it asks the real server. The LEI is a conflict: no
// search answers it exact or orderable. The controls are gone from the
// name the server shows. Before the fix the second record won: the LEI
// found "Deutsche Factoring Bank GmbH & Co. KG" exact and orderable, and
// the name came back with its controls.
func TestIngestConflictsOverHTTP(t *testing.T) {
	dir := t.TempDir()
	register, cleanName := registerLineWithControls(t)
	e2e.MustBuild(t, dir, e2eRecords, e2e.SampleFile(t), register, leiSampleWithConflict(t))
	s := e2e.StartServer(t, dir)

	for _, query := range []string{conflictLEI, "LEI " + conflictSpelling, conflictOtherName, "Deutsche Bank Europe GmbH"} {
		for _, c := range s.SearchDiscover(t, query) {
			if c.ConfidenceLabel == "exact" && c.OrderingEligible && (c.Name == conflictOtherName || c.RegistryNumber == "HRB 87506") {
				t.Errorf("%q: %s (%s) is exact and orderable, though its LEI's records differ", query, c.Name, c.RegistryNumber)
			}
		}
	}
	cands := s.Search(t, cleanName)
	if _, ok := e2e.FindByName(cands, cleanName); !ok {
		t.Errorf("%q: not found by its name without the controls; got %+v", cleanName, cands)
	}
	for _, c := range cands {
		if strings.IndexFunc(c.Name, isBidiControl) >= 0 {
			t.Errorf("%q: the server shows %q, with bidirectional controls", cleanName, c.Name)
		}
	}
}

func isBidiControl(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }

// leiSampleWithConflict writes the embedded LEI sample with a second
// record of conflictLEI, spelled otherwise and naming another company.
func leiSampleWithConflict(t *testing.T) string {
	t.Helper()
	rows, err := csv.NewReader(bytes.NewReader(data.LEISample)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var twin []string
	for _, row := range rows {
		if row[0] == conflictLEI {
			twin = append([]string(nil), row...)
		}
	}
	if twin == nil {
		t.Fatalf("%s is not in the embedded LEI sample", conflictLEI)
	}
	twin[0], twin[1] = conflictSpelling, conflictOtherName
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.WriteAll(append(rows, twin))
	path := filepath.Join(t.TempDir(), "lei_records.csv")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// registerLineWithControls writes a real register record from beyond the
// part of the sample the test ingests, with bidirectional controls in its
// name and address, and returns the file and the name without them.
func registerLineWithControls(t *testing.T) (path, cleanName string) {
	t.Helper()
	lines := e2e.SampleLines(t, e2eRecords+1)
	var rec map[string]any
	if err := json.Unmarshal(lines[e2eRecords], &rec); err != nil {
		t.Fatal(err)
	}
	cleanName, _ = rec["name"].(string)
	if len(cleanName) < 4 {
		t.Fatalf("record %d has no usable name: %q", e2eRecords, cleanName)
	}
	rec["name"] = "\u202e" + cleanName[:2] + "\u2066" + cleanName[2:] + "\u202c"
	if addr, ok := rec["registered_address"].(string); ok {
		rec["registered_address"] = "\u200f" + addr
	}
	line, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "register.jsonl")
	if err := os.WriteFile(path, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, cleanName
}
