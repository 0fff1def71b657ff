package resolver_test

import (
	"context"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// TestEnglishAndWrittenRegisterLines pastes a real company's imprint
// whose register line is written as people write it, in German and in
// English, before and after the name line: the line is read as the
// register line, and the company is the exact answer.
func TestEnglishAndWrittenRegisterLines(t *testing.T) {
	idx := mustSample(t)
	const name = "Nutzfahrzeugtechnik Dufner GmbH"
	for _, lines := range [][]string{
		{"Registered in the commercial register of the Local Court of Freiburg under HRB 260632"},
		{"Register court: Local Court Freiburg / Registration number: HRB 260632"},
		{"Register court: Local Court Freiburg", "Registration number: HRB 260632"},
		{"Registry court: Freiburg", "Commercial register: HRB 260632"},
		{"Registration number: HRB 260632", "District Court Freiburg"},
		{"Handelsregister B 260632, Amtsgericht Freiburg"},
		{"Handelsregister Abteilung B 260632", "Amtsgericht Freiburg"},
		{"HR B 260632, AG Freiburg"},
		{"HRB-Nr. 260632", "AG Freiburg"},
		{"AG Freiburg", "HRB Nr. 260632"},
		{"AG Freiburg HRB 260632"},
	} {
		for _, before := range []bool{true, false} {
			block := append([]string{name}, lines...)
			if before {
				block = append(append([]string{}, lines...), name)
			}
			query := strings.Join(block, "\n")
			res, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: query})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) == 0 || res.Candidates[0].Name != name || res.Candidates[0].ConfidenceLabel != companydocs.LabelExact {
				t.Errorf("%q: first %+v, want %s exact", query, first(res), name)
			}
			for i, d := range res.Understanding.LineDetails {
				want := resolver.LineRegister
				if block[i] == name {
					want = resolver.LineName
				}
				if d.Code != want {
					t.Errorf("%q: line %q read as %s, want %s", query, block[i], d.Code, want)
				}
			}
		}
	}
}

// TestEnglishLabels pastes the other lines of an English imprint before
// and after the name: the managing director, represented by and board
// lines are persons, the VAT ID and phone lines are set aside.
func TestEnglishLabels(t *testing.T) {
	idx := mustSample(t)
	const name = "Nutzfahrzeugtechnik Dufner GmbH"
	for _, tc := range []struct{ line, code string }{
		{"Managing Director(s): Karl Josef Dufner", resolver.LinePerson},
		{"Managing Director: Karl Josef Dufner", resolver.LinePerson},
		{"Represented by: Karl Josef Dufner", resolver.LinePerson},
		{"Board: Karl Josef Dufner", resolver.LinePerson},
		{"VAT ID: DE 142 657 321", resolver.AsideVATID},
		{"Phone: +49 7641 93 35 0", resolver.AsidePhone},
	} {
		for _, query := range []string{name + "\n" + tc.line, tc.line + "\n" + name} {
			res, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: query})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) == 0 || res.Candidates[0].Name != name {
				t.Errorf("%q: first %+v, want %s", query, first(res), name)
			}
			codes := map[string]string{}
			for i, l := range strings.Split(query, "\n") {
				codes[l] = res.Understanding.LineDetails[i].Code
			}
			if codes[tc.line] != tc.code || codes[name] != resolver.LineName {
				t.Errorf("%q: lines read as %v, want %s and %s", query, codes, tc.code, resolver.LineName)
			}
		}
	}
}

func first(res *resolver.Result) companydocs.Candidate {
	if len(res.Candidates) == 0 {
		return companydocs.Candidate{}
	}
	return res.Candidates[0]
}

// TestTypedCourtIsAClue types a real company's name with its court named
// without a number: "AG <court>" after the name is the court, weighed as
// the court it is and no part of the name; "AG" after a name's word is
// its legal form.
func TestTypedCourtIsAClue(t *testing.T) {
	idx := mustSample(t)
	for _, query := range []string{"Nutzfahrzeugtechnik Dufner GmbH AG Freiburg", "AG Freiburg Nutzfahrzeugtechnik Dufner GmbH",
		"Nutzfahrzeugtechnik Dufner GmbH, Local Court of Freiburg"} {
		res, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: query})
		if err != nil {
			t.Fatal(err)
		}
		c := first(res)
		if c.Name != "Nutzfahrzeugtechnik Dufner GmbH" || !hasCode(&c, resolver.ReasonCourtMatches) {
			t.Errorf("%q: first %s with %v, want Nutzfahrzeugtechnik Dufner GmbH, its court matching", query, c.Name, c.ConfidenceReasons)
		}
		if got := strings.Join(res.Understanding.NameTokens, " "); got != "nutzfahrzeugtechnik dufner" || res.Understanding.LegalForm != "GmbH" {
			t.Errorf("%q: read as %q (%s), want the name without the court", query, got, res.Understanding.LegalForm)
		}
	}
	res, err := resolver.Resolve(context.Background(), idx, resolver.Request{Query: "LRP ASSET MANAGEMENT AG Freiburg"})
	if err != nil {
		t.Fatal(err)
	}
	c := first(res)
	if res.Understanding.LegalForm != "AG" || c.Name != "LRP ASSET MANAGEMENT AG" || hasCode(&c, resolver.ReasonCourtMatches) {
		t.Errorf("AG after a name: form %q, first %s with %v; want the form AG and no court", res.Understanding.LegalForm, c.Name, c.ConfidenceReasons)
	}
}
