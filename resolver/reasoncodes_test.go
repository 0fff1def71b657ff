package resolver

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"companydocs/internal/reasoncodes"
)

var updateCodes = flag.Bool("update-codes", false, "rewrite "+reasoncodes.File+" from the tables")

// TestReasonCodesFile keeps the file the page's and the OpenAPI
// document's tests read equal to the tables of reason and note codes and
// of the verification gaps (the root package's TestGapCodesFile checks
// those).
func TestReasonCodesFile(t *testing.T) {
	kept, err := reasoncodes.Load()
	if err != nil {
		t.Fatal(err)
	}
	// the gaps section is the root package's (TestGapCodesFile)
	table := reasoncodes.Table{Reasons: map[string][]string{}, Notes: map[string][]string{}, Lines: map[string][]string{}, Gaps: kept.Gaps}
	for code, e := range reasonTable {
		table.Reasons[code] = e.params
	}
	for code, e := range noteTable {
		table.Notes[code] = e.params
	}
	for code, e := range lineTable {
		table.Lines[code] = e.params
	}
	want, err := json.MarshalIndent(table, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	path := "../" + reasoncodes.File
	if *updateCodes {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the tables in reasons.go: run go test ./resolver/ -run TestReasonCodesFile -update-codes", reasoncodes.File)
	}
}
