//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// reasonQueries reach the reason codes the evaluation set does not: a
// seat alone found in deep mode, a former court that matches and one that
// differs, a name that has the shape of an LEI (20 letters and digits
// ending in two digits) whose checksum fails.
var reasonQueries = []resolver.Request{
	{Query: "Kehl", Mode: resolver.ModeDeep},
	{Query: "Stendal früher Salzwedel VR 53"},
	{Query: "Stendal früher Gardelegen VR 53"},
	{Query: "Kraftsportverein 1898"},
}

// unreachableReasons are caps no query reaches under today's weights: a
// number without a court scores at most 0.73 (number, suffix, verified and
// a name with its seat), under NoCourtCap; and each path anchors at most
// one candidate (one LEI holder, the one live entry at the court, the one
// name at the seat), so no second exact candidate is capped. The caps stay
// as guards should the weights or paths change; the test says when one
// is reached.
var unreachableReasons = []string{resolver.ReasonNoCourtCap, resolver.ReasonSecondExactCap}

// TestEvaluationReasons walks the evaluation set and reasonQueries on the
// sample: every candidate's reason_details say its confidence_reasons,
// one by one, from what a client receives (the JSON of code and params);
// each code carries the params the table names; and every code of the
// table is produced by some real query.
func TestEvaluationReasons(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	requests := slices.Clone(reasonQueries)
	for _, c := range loadEval(t) {
		requests = append(requests, resolver.Request{Query: c.Query, Mode: c.Mode, Discover: c.Discover})
	}
	seen := map[string]string{} // code -> a query that produced it
	for _, req := range requests {
		req.Limit = resolver.MaxLimit
		res, err := resolver.Resolve(context.Background(), gen, req)
		if err != nil {
			t.Fatalf("%q: %v", req.Query, err)
		}
		for _, c := range res.Candidates {
			checkReasonDetails(t, req.Query, c)
			for _, d := range c.ReasonDetails {
				if _, ok := seen[d.Code]; !ok {
					seen[d.Code] = req.Query
				}
			}
		}
	}
	for _, code := range resolver.ReasonCodes() {
		_, reached := seen[code]
		switch unreachable := slices.Contains(unreachableReasons, code); {
		case unreachable && reached:
			t.Errorf("%s is reached by %q: take it out of unreachableReasons", code, seen[code])
		case !unreachable && !reached:
			t.Errorf("no query produces %s: add one to reasonQueries", code)
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d reason codes seen", len(seen))
	}
}

// checkReasonDetails checks one candidate: as many details as sentences,
// each sentence said again from its detail's JSON, and the params its
// code names, each of them found in the sentence.
func checkReasonDetails(t *testing.T, query string, c companydocs.Candidate) {
	t.Helper()
	if len(c.ReasonDetails) != len(c.ConfidenceReasons) {
		t.Errorf("%q %s: %d reason details for %d reasons", query, c.Name, len(c.ReasonDetails), len(c.ConfidenceReasons))
		return
	}
	for i, d := range c.ReasonDetails {
		raw, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var back companydocs.ReasonDetail
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if got := resolver.ReasonText(back); got != c.ConfidenceReasons[i] {
			t.Errorf("%q %s: %s says %q, the reason is %q", query, c.Name, raw, got, c.ConfidenceReasons[i])
		}
		checkReasonParams(t, query, d, c.ConfidenceReasons[i])
	}
}

func checkReasonParams(t *testing.T, query string, d companydocs.ReasonDetail, sentence string) {
	t.Helper()
	names, ok := resolver.ReasonParamNames(d.Code)
	if !ok {
		t.Errorf("%q: code %q is not in the table", query, d.Code)
		return
	}
	var params map[string]any
	raw, _ := json.Marshal(d.Params)
	if err := json.Unmarshal(raw, &params); err != nil {
		t.Fatal(err)
	}
	wanted := map[string]bool{}
	for _, n := range names {
		name, optional := strings.CutSuffix(n, "?")
		wanted[name] = true
		if _, ok := params[name]; !ok && !optional {
			t.Errorf("%q: %s params %s lack %s", query, d.Code, raw, name)
		}
	}
	for name, v := range params {
		if !wanted[name] {
			t.Errorf("%q: %s params %s carry %s, which the table does not name", query, d.Code, raw, name)
		}
		if name == "position" {
			continue // the register's German word; English names the common ones
		}
		for _, word := range words(v) {
			// name_conflict quotes the name as Go does (%q)
			if !strings.Contains(sentence, word) && !strings.Contains(sentence, strconv.Quote(word)) {
				t.Errorf("%q: %s param %s=%q is not in the sentence %q", query, d.Code, name, word, sentence)
			}
		}
	}
}

// words are a param's values as a sentence writes them.
func words(v any) []string {
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
