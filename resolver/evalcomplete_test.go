//go:build !race

// Like the evaluation, this builds a real bleve index of the sample (the
// completion of a word being typed is the index's); make test runs it
// without the race detector, with the evaluation.

package resolver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
	"companydocs/textfold"
)

// A name typed into an autocompletion box is found before the word being
// typed is whole (Request.Completes): the evaluation's real names, typed
// up to their first word of eight letters or more and that word cut to
// its first five, are among the first ten candidates, twice as often as
// with a search of the same text without completion.
func TestEvaluationCompletesAWordBeingTyped(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	tried, completed, plain := 0, 0, 0
	for _, c := range loadEval(t) {
		if !slices.Contains([]string{"name_exact", "name_no_form", "name_form_variant"}, c.Kind) || c.Want == "" {
			continue
		}
		query, ok := typedSoFar(textfold.Tokens(textfold.Fold(c.Query)))
		if !ok {
			continue
		}
		tried++
		if hasCandidate(mustResolve(t, gen, resolver.Request{Query: query, Completes: true, Limit: 10}), c.Want) {
			completed++
		} else {
			t.Logf("%q: %s is not among the first ten", query, c.WantName)
		}
		if hasCandidate(mustResolve(t, gen, resolver.Request{Query: query, Limit: 10}), c.Want) {
			plain++
		}
	}
	t.Logf("%d names typed in part: %d completed, %d found without completion", tried, completed, plain)
	if tried < 30 {
		t.Fatalf("only %d names to type in part: too few to tell", tried)
	}
	// many starts are shared by hundreds of names ("Freiw", "Verein zur
	// Förd"), of which ten are shown
	if 2*completed < tried || completed < 2*plain {
		t.Errorf("%d of %d names typed in part completed (%d without completion), want half of them and twice as many as without", completed, tried, plain)
	}
}

// typedSoFar returns the words up to the first of eight letters or more,
// that one cut to its first five.
func typedSoFar(words []string) (string, bool) {
	for i, w := range words {
		if r := []rune(w); len(r) >= 8 {
			return strings.Join(append(words[:i:i], string(r[:5])), " "), true
		}
	}
	return "", false
}

func hasCandidate(res *resolver.Result, id string) bool {
	return slices.ContainsFunc(res.Candidates, func(c companydocs.Candidate) bool { return c.ProfileID == id })
}

// TestCutNamesAreSearchedAsStarts types real names cut at a field length
// in the middle of a word, as ERP exports cut them: the last word is
// searched as a start, and the company is among the first three. A
// typed name and seat that fill a field length by chance keep their
// seat, however short.
func TestCutNamesAreSearchedAsStarts(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, tc := range []struct{ query, want, seat string }{
		{"Deutscher Verband der Gebrauch", "Deutscher Verband der Gebrauchshund-Sportvereine e.V. Sportverband für das Polizei- u. Schutzhundwesen e.V. Zweigverein Münster-Neutor e.V. von 1949", ""},
		{"Central-Theater Verwaltungsgesellschaft mbH in Hof", "Central-Theater Verwaltungsgesellschaft mbH", "Hof"},
		{"Radfahrverein 1912 Elz aus Elz", "Radfahrverein 1912 Elz", "Elz"},
	} {
		res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		rank := slices.IndexFunc(res.Candidates, func(c companydocs.Candidate) bool { return c.Name == tc.want })
		if rank < 0 || rank > 2 {
			t.Errorf("%q: %q is #%d, want among the first three", tc.query, tc.want, rank+1)
		}
		if tc.seat != "" && (rank != 0 || res.Understanding.City != tc.seat) {
			t.Errorf("%q: %q is #%d with the seat %q, want first with %q", tc.query, tc.want, rank+1, res.Understanding.City, tc.seat)
		}
	}
}
