package companydocs

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestGapTable checks that every gap code says itself in English from its
// params, and that the table names exactly JSON fields of GapParams.
func TestGapTable(t *testing.T) {
	fields := map[string]bool{}
	for f := range reflect.TypeFor[GapParams]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields[name] = true
	}
	for code, names := range GapParamNames() {
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
	if want := []VerificationGap{DescribedGap("no register reference")}; !reflect.DeepEqual(d.Missing, want) || GapsText(d.Missing) != "no register reference" {
		t.Errorf("read %+v, want %+v", d.Missing, want)
	}
	gap := VerificationGap{Code: GapRegisterNameDiffers, Params: GapParams{GLEIFName: "A GmbH", Entry: "Stendal HRB 573", Name: "B GmbH", Percent: 58}}
	b, _ := json.Marshal(gap)
	var back VerificationGap
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, gap) {
		t.Errorf("round trip of %s: %+v, %v", b, back, err)
	}
}
