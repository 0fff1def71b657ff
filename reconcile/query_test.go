package reconcile

import (
	"fmt"
	"strings"
	"testing"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"
)

// A query's properties become the resolver's, whatever kind of value a
// spreadsheet's column gives: a number (a postcode), an entity reconciled
// before, a list; a query of properties only is its identifier.
func TestDecodeQueriesMapsProperties(t *testing.T) {
	items, err := DecodeQueries(`{
		"q1": {"query": "Rheinbahn AG", "type": ["company"], "limit": 3, "type_strict": "should", "properties": [
			{"pid": "city", "v": "Düsseldorf"}, {"pid": "postal_code", "v": 40231},
			{"pid": "officer", "v": {"id": "p1", "name": "Lars Asmus"}}, {"pid": "register_number", "v": ["", "HRB 562"]},
			{"pid": "court", "v": "Düsseldorf"}, {"pid": "legal_form", "v": "AG"}, {"pid": "address", "v": "Lierenfelder Straße 42"},
			{"pid": "lei", "v": "0SK1ILSPWNVBNQWU0W18"}, {"pid": "city", "v": "Köln"}]},
		"q0": {"properties": [{"pid": "register_number", "v": "HRB 562"}, {"pid": "court", "v": "Düsseldorf"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Key != "q0" || items[1].Key != "q1" {
		t.Fatalf("items %+v, want q0 and q1 in key order", items)
	}
	if items[0].Request.Query != "HRB 562 Düsseldorf" {
		t.Errorf("a query of properties only reads %q, want its register number and court", items[0].Request.Query)
	}
	want := resolver.Properties{City: "Düsseldorf", PostalCode: "40231", Address: "Lierenfelder Straße 42", Court: "Düsseldorf",
		RegisterNumber: "HRB 562", LEI: "0SK1ILSPWNVBNQWU0W18", Officer: "Lars Asmus", LegalForm: "AG"}
	if got := items[1].Request; got.Properties != want || got.Limit != 3 || got.Query != "Rheinbahn AG" {
		t.Errorf("request %+v, want properties %+v and limit 3 (the first value of a property given twice)", got, want)
	}
}

// Every malformed batch is invalid_query with a sentence naming what is
// wrong.
func TestDecodeQueriesRefusesWithASentence(t *testing.T) {
	for raw, says := range map[string]string{
		`[]`:                               "JSON object",
		`{"q0": {"query": "x"}} {}`:        "JSON object",
		`{}`:                               "no query",
		`{"q0": "Rheinbahn"}`:              "JSON object",
		`{"q0": {"query": "x", "foo": 1}}`: `"foo"`,
		`{"q0": {"query": "x", "type": "human"}}`:                               "“human”",
		`{"q0": {"query": "x", "type": 7}}`:                                     "type id",
		`{"q0": {"query": "x", "limit": 2.5}}`:                                  "limit",
		`{"q0": {"query": "x", "properties": [{"pid": "vat_id", "v": "DE1"}]}}`: "vat_id",
		`{"q0": {"query": "x", "properties": [{"pid": "city", "v": null}]}}`:    "", // no value
		`{"q0": {"query": "x", "properties": [{"pid": "city", "v": [[1]]}]}}`:   "", // nothing to say
		`{"q0": {"query": ["x"]}}`:                                              "query",
	} {
		_, err := DecodeQueries(raw)
		if says == "" {
			if err != nil {
				t.Errorf("%s: %v, want it accepted as no value", raw, err)
			}
			continue
		}
		if companydocs.ErrorCode(err) != companydocs.EINVALIDQUERY || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want invalid_query saying %s", raw, err, says)
		}
		// every word of the refusal comes from the catalog: in German, no
		// English sentence is spliced in
		en, _ := companydocs.ErrorMessageIn(err, messages.English)
		de, _ := companydocs.ErrorMessageIn(err, messages.German)
		if de == en || strings.Contains(de, " must ") || strings.Contains(de, " a query ") {
			t.Errorf("%s: German %q says English %q", raw, de, en)
		}
	}
	keys := make([]string, MaxQueries+1)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d": {"query": "x"}`, i)
	}
	if _, err := DecodeQueries("{" + strings.Join(keys, ", ") + "}"); err == nil || !strings.Contains(err.Error(), "at most 1000") {
		t.Errorf("1001 queries: %v", err)
	}
}

// match is exact and orderable, nothing else; a candidate without a
// profile id (an unverified discovery record) is not offered.
func TestCandidatesMatchOnlyExactAndOrderable(t *testing.T) {
	res := &resolver.Result{Candidates: []companydocs.Candidate{
		{ProfileID: "a", Name: "A", ConfidenceLabel: companydocs.LabelExact, OrderingEligible: true, Confidence: 0.99,
			ReasonDetails: []companydocs.ReasonDetail{{Code: "register_number_matches"}, {Code: "register_number_matches"}}},
		{ProfileID: "b", Name: "B", ConfidenceLabel: companydocs.LabelExact, OrderingEligible: false, Confidence: 0.99},
		{ProfileID: "c", Name: "C", ConfidenceLabel: companydocs.LabelPossible, OrderingEligible: true, Confidence: 0.9},
		{DiscoveryCandidateID: "d", Name: "D", ConfidenceLabel: companydocs.LabelNeedsVerification, Confidence: 0.5},
	}}
	got := Candidates(res)
	if len(got) != 3 || !got[0].Match || got[1].Match || got[2].Match || got[0].Score != 99 || got[2].Score != 90 {
		t.Fatalf("candidates %+v", got)
	}
	ids := map[string]bool{}
	for _, f := range got[0].Features {
		if ids[f.ID] {
			t.Errorf("feature %s twice", f.ID)
		}
		ids[f.ID] = true
	}
	if !ids["register_number_matches"] || !ids["confidence"] || !ids["ordering_eligible"] {
		t.Errorf("features %+v", got[0].Features)
	}
}

// An unknown member of a query is named, quoted, from the query's own
// members (not from a decoder's English text): the first by name when
// there are several; members are matched ignoring case, as decoding
// matches them.
func TestDecodeQueriesNamesUnknownMembers(t *testing.T) {
	for _, c := range []struct{ batch, says string }{
		{`{"q0": {"query": "Rheinbahn AG", "colour": "blue"}}`, `Query “q0”: unknown field "colour";`},
		{`{"q0": {"query": "Rheinbahn AG", "zeta": 1, "alpha": 2}}`, `unknown field "alpha";`},
		{`{"q0": {"query": "Rheinbahn AG", "` + strings.Repeat("ß", 60) + `": 1}}`, `unknown field "` + strings.Repeat("ß", 38) + `…;`},
	} {
		_, err := DecodeQueries(c.batch)
		msg, _ := companydocs.ErrorMessageIn(err, messages.English)
		if companydocs.ErrorCode(err) != companydocs.EINVALIDQUERY || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %v, want invalid_query saying %s", c.batch, msg, c.says)
		}
	}
	items, err := DecodeQueries(`{"q0": {"Query": "Rheinbahn AG", "LIMIT": 2}}`)
	if err != nil || items[0].Request.Query != "Rheinbahn AG" || items[0].Request.Limit != 2 {
		t.Errorf("members in other case: %+v, %v; want them read", items, err)
	}
}
