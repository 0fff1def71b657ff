//go:build !race

// Like the evaluation, this builds a real bleve index of the sample (the
// completion of a word being typed is the index's); make test runs it
// without the race detector, with the evaluation.

package resolver_test

import (
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
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
		query, ok := typedSoFar(companydocs.Tokens(companydocs.Fold(c.Query)))
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
