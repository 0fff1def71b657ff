// Package reasoncodes reads the codes of search reasons, notes and
// verification gaps, with their params, from the file the resolver's tests
// keep equal to its tables, so that the tests of the page and of the OpenAPI document check
// against the same list without the resolver exporting it; and Words,
// with which the tests of the resolver and of the ordering service check
// that a sentence says each param. It is test support only.
package reasoncodes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
)

// File is the file, relative to the repository's root.
const File = "resolver/testdata/reason_codes.json"

// Table maps each code to the JSON names of its params (a trailing ? on one
// that is left out when empty).
type Table struct {
	Reasons map[string][]string `json:"reasons"`
	Notes   map[string][]string `json:"notes"`
	// Lines are the codes of what a line of a pasted block was used as
	// or why it was set aside (query_understanding's line_details).
	Lines map[string][]string `json:"lines"`
	// Gaps are the codes of what keeps a discovery record from being
	// verified (companydocs.VerificationGap), the gaps param of
	// discovery_unverified.
	Gaps map[string][]string `json:"gaps"`
}

// Load reads the file.
func Load() (*Table, error) {
	_, here, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", File))
	if err != nil {
		return nil, err
	}
	t := new(Table)
	return t, json.Unmarshal(b, t)
}

// ReasonCodes returns the reason codes, sorted.
func (t *Table) ReasonCodes() []string { return sortedKeys(t.Reasons) }

// NoteCodes returns the note codes, sorted.
func (t *Table) NoteCodes() []string { return sortedKeys(t.Notes) }

// LineCodes returns the line codes of pasted blocks, sorted.
func (t *Table) LineCodes() []string { return sortedKeys(t.Lines) }

// GapCodes returns the verification gap codes, sorted.
func (t *Table) GapCodes() []string { return sortedKeys(t.Gaps) }

// GapParams returns the params of a gap code; ok is false for an unknown
// code.
func (t *Table) GapParams(code string) (names []string, ok bool) {
	names, ok = t.Gaps[code]
	return slices.Clone(names), ok
}

// Params returns the params of a reason or note code; ok is false for an
// unknown code.
func (t *Table) Params(code string) (names []string, ok bool) {
	if names, ok = t.Reasons[code]; !ok {
		names, ok = t.Notes[code]
	}
	if !ok {
		names, ok = t.Lines[code]
	}
	return slices.Clone(names), ok
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Words are a param's values as a sentence writes them: each element of a
// list, or the value itself.
func Words(v any) []string {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return []string{fmt.Sprint(v)}
	}
	var out []string
	for i := range rv.Len() {
		out = append(out, fmt.Sprint(rv.Index(i).Interface()))
	}
	return out
}
