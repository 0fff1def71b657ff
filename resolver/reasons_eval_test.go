//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/reasoncodes"
	"companydocs/messages"
	"companydocs/register"
	"companydocs/resolver"
)

// reasonQueries reach the reason and note codes the evaluation set does
// not: a seat alone found in deep mode, a former court that matches and
// one that differs, a name that has the shape of an LEI (20 letters and
// digits ending in two digits) whose checksum fails; a valid LEI no record
// carries, a register number no entry has (with and without a court), a
// number known at other courts only; a pasted block with an LEI line;
// properties that contradict what they are given for; queries that find
// no candidate: name words no company bears, a legal form alone.
var reasonQueries = []resolver.Request{
	{Query: "Landeskreditbank Baden-Württemberg -Förderbank-\nLEI: 0SK1ILSPWNVBNQWU0W18", Discover: true},
	{Query: "Kehl", Mode: resolver.ModeDeep},
	{Query: "Stendal früher Salzwedel VR 53"},
	{Query: "Stendal früher Gardelegen VR 53"},
	{Query: "Kraftsportverein 1898"},
	{Query: "391200PCHLV827FDZZ88"},
	{Query: "HRB 999999"},
	{Query: "Düsseldorf HRB 999999"},
	{Query: "HRB 562 Kiel"},
	// properties: a register entry whose seat, address and officer
	// differ from those given; a number no entry has and a form that is
	// none; an LEI of another company
	{Query: "Rheinbahn AG", Properties: resolver.Properties{RegisterNumber: "HRB 562", Court: "Düsseldorf", City: "Köln",
		Address: "Hohe Straße 1", PostalCode: "50667", Officer: "Erika Mustermann"}},
	{Query: "Rheinbahn AG Düsseldorf", Properties: resolver.Properties{RegisterNumber: "HRB 999999", LegalForm: "Firma"}},
	{Query: "Rheinbahn AG Düsseldorf", Properties: resolver.Properties{LEI: "0SK1ILSPWNVBNQWU0W18"}, Discover: true},
	{Query: "Quarkbrötchen Zwiebelkuchen Xylophon"},
	{Query: "GmbH"},
}

// unreachableReasons are caps no query reaches under today's weights: a
// number without a court scores at most 0.73 (number, suffix, verified and
// a name with its seat), under NoCourtCap; and each path anchors at most
// one candidate (one LEI holder, the one live entry at the court, the one
// name at the seat), so no second exact candidate is capped. The caps stay
// as guards should the weights or paths change; the test says when one
// is reached. words_too_common is said when name words too common or
// too short to find a company by find none; the whole sample's names hold
// every letter and common word, so such a query finds weak candidates
// there (a smaller register of the sample, as the command's resolve tests
// build, reaches it with "q").
var unreachableReasons = []string{resolver.ReasonNoCourtCap, resolver.ReasonSecondExactCap, resolver.NoteWordsTooCommon}

// TestEvaluationReasons walks the evaluation set and reasonQueries on the
// sample: every candidate's reason_details say its confidence_reasons,
// one by one, from what a client receives (the JSON of code and params),
// and the understanding's note_details its notes; each code carries the
// params the table names; and every code of the tables is produced by
// some real query.
func TestEvaluationReasons(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	requests := slices.Clone(reasonQueries)
	for _, c := range loadEval(t) {
		requests = append(requests, c.request())
	}
	seen := map[string]string{} // code -> a query that produced it
	for _, req := range requests {
		req.Limit = resolver.MaxLimit
		res, err := resolver.Resolve(context.Background(), gen, req)
		if err != nil {
			t.Fatalf("%q: %v", req.Query, err)
		}
		u := res.Understanding
		checkDetails(t, req.Query+" notes", u.NoteDetails, u.Notes, resolver.NoteText)
		checkDetails(t, req.Query+" lines", u.LineDetails, u.Lines, resolver.LineText)
		details := append(u.NoteDetails, u.LineDetails...)
		for _, c := range res.Candidates {
			checkDetails(t, req.Query+" "+c.Name, c.ReasonDetails, c.ConfidenceReasons, func(d companydocs.ReasonDetail) string { return resolver.ReasonTextIn(messages.English, d) })
			details = append(details, c.ReasonDetails...)
		}
		for _, d := range details {
			if _, ok := seen[d.Code]; !ok {
				seen[d.Code] = req.Query
			}
		}
	}
	for _, code := range slices.Concat(resolver.ReasonCodes(), resolver.NoteCodes(), resolver.LineCodes()) {
		_, reached := seen[code]
		switch unreachable := slices.Contains(unreachableReasons, code); {
		case unreachable && reached:
			t.Errorf("%s is reached by %q: take it out of unreachableReasons", code, seen[code])
		case !unreachable && !reached:
			t.Errorf("no query produces %s: add one to reasonQueries", code)
		}
	}
	if len(seen) < 35 {
		t.Errorf("only %d reason codes seen", len(seen))
	}
}

// checkDetails checks the reasons of a candidate or the notes of an
// understanding: as many details as sentences, each sentence said again
// from its detail's JSON, and the params its code names, each of them
// found in the sentence.
func checkDetails(t *testing.T, where string, details []companydocs.ReasonDetail, sentences []string, say func(companydocs.ReasonDetail) string) {
	t.Helper()
	if len(details) != len(sentences) {
		t.Errorf("%s: %d details for %d sentences", where, len(details), len(sentences))
		return
	}
	for i, d := range details {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back companydocs.ReasonDetail
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got := say(back); got != sentences[i] {
			t.Errorf("%s: %s says %q, the sentence is %q", where, raw, got, sentences[i])
		}
		checkReasonParams(t, where, d, sentences[i])
	}
}

func checkReasonParams(t *testing.T, where string, d companydocs.ReasonDetail, sentence string) {
	t.Helper()
	names, ok := resolver.ReasonParamNames(d.Code)
	if !ok {
		t.Errorf("%s: code %q is not in the tables", where, d.Code)
		return
	}
	params := checkParamNames(t, where+": "+d.Code, d.Params, names)
	for name, v := range params {
		if name == "position" {
			continue // the register's German word; English names the common ones
		}
		if name == "gaps" {
			checkGaps(t, where, d.Params.Gaps, sentence)
			continue
		}
		if name == "entries" && fmt.Sprint(v) == "1" && strings.Contains(sentence, " once ") {
			continue // one entry is said in words (the catalog's reason.times.one)
		}
		if name == "register_number" && d.Code == resolver.LineRegister {
			// the line says the number as it writes it ("Handelsregister
			// Abteilung B 2795"), the param as registers do ("HRB 2795")
			if ref, _, ok := register.FindRef(sentence); !ok || ref.NumberKey() != fmt.Sprint(v) {
				t.Errorf("%s: %s param %s=%q is not the reference of the sentence %q", where, d.Code, name, v, sentence)
			}
			continue
		}
		for _, word := range reasoncodes.Words(v) {
			// name_conflict quotes the name as Go does (%q)
			if !strings.Contains(sentence, word) && !strings.Contains(sentence, strconv.Quote(word)) {
				t.Errorf("%s: %s param %s=%q is not in the sentence %q", where, d.Code, name, word, sentence)
			}
		}
	}
}

// checkGaps checks the gaps of discovery_unverified: each gap's code is
// in the table with the params it names, and its English is part of the
// sentence.
func checkGaps(t *testing.T, where string, gaps []companydocs.VerificationGap, sentence string) {
	t.Helper()
	table, err := reasoncodes.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gaps {
		names, ok := table.GapParams(g.Code)
		if !ok {
			t.Errorf("%s: gap code %q is not in the table", where, g.Code)
			continue
		}
		checkParamNames(t, where+": gap "+g.Code, g.Params, names)
		if !strings.Contains(sentence, g.String()) {
			t.Errorf("%s: gap %s says %q, not part of %q", where, g.Code, g.String(), sentence)
		}
	}
}

// checkParamNames checks that params, as JSON, carry every name of the
// table (a trailing ? marks one that may be left out) and no other, and
// returns them decoded.
func checkParamNames(t *testing.T, what string, params any, names []string) map[string]any {
	t.Helper()
	var got map[string]any
	raw, _ := json.Marshal(params)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	wanted := map[string]bool{}
	for _, n := range names {
		name, optional := strings.CutSuffix(n, "?")
		wanted[name] = true
		if _, ok := got[name]; !ok && !optional {
			t.Errorf("%s: params %s lack %s", what, raw, name)
		}
	}
	for name := range got {
		if !wanted[name] {
			t.Errorf("%s: params %s carry %s, which the table does not name", what, raw, name)
		}
	}
	return got
}
