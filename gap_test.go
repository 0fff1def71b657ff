package companydocs

import (
	"companydocs/messages"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"companydocs/internal/reasoncodes"
)

// gapParamNames maps each gap code to the JSON names of its params.
func gapParamNames() map[string][]string {
	out := make(map[string][]string, len(gapTable))
	for code, e := range gapTable {
		out[code] = append([]string(nil), e.params...)
	}
	return out
}

// TestGapCodesFile keeps the gaps section of the file the resolver's, the
// page's and the OpenAPI document's tests read (reasoncodes.File) equal
// to the gap table; the resolver's TestReasonCodesFile keeps the rest.
func TestGapCodesFile(t *testing.T) {
	table, err := reasoncodes.Load()
	if err != nil {
		t.Fatal(err)
	}
	if want := gapParamNames(); !reflect.DeepEqual(table.Gaps, want) {
		t.Fatalf("the gaps of %s are %v, the gap table says %v: edit the file's gaps section", reasoncodes.File, table.Gaps, want)
	}
}

// TestGapTable checks that every gap code says itself in English from its
// params, and that the table names exactly JSON fields of GapParams.
func TestGapTable(t *testing.T) {
	fields := map[string]bool{}
	for f := range reflect.TypeFor[GapParams]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields[name] = true
	}
	for code, names := range gapParamNames() {
		for _, n := range names {
			if !fields[strings.TrimSuffix(n, "?")] {
				t.Errorf("%s names %s, which GapParams lacks", code, n)
			}
		}
		if s := (VerificationGap{Code: code}).String(); code != GapDescribed && s == "" {
			t.Errorf("%s says nothing", code)
		}
	}
}

// TestGapReadsOldSentence reads the gaps of a generation written before
// IndexVersion 7, stored as English sentences, as described gaps that say
// the same sentence.
func TestGapReadsOldSentence(t *testing.T) {
	var d Discovery
	if err := json.Unmarshal([]byte(`{"missing":["no register reference"]}`), &d); err != nil {
		t.Fatal(err)
	}
	if want := []VerificationGap{DescribedGap("no register reference")}; !reflect.DeepEqual(d.Missing, want) || GapsTextIn(messages.English, d.Missing) != "no register reference" {
		t.Errorf("read %+v, want %+v", d.Missing, want)
	}
	gap := VerificationGap{Code: GapRegisterNameDiffers, Params: GapParams{GLEIFName: "A GmbH", Entry: "Stendal HRB 573", Name: "B GmbH", Percent: 58}}
	b, _ := json.Marshal(gap)
	var back VerificationGap
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, gap) {
		t.Errorf("round trip of %s: %+v, %v", b, back, err)
	}
}
