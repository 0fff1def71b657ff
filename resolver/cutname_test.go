//go:build !race

package resolver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// TestCutNamesAreSearchedAsStarts types real names cut at a field length
// in the middle of a word, as ERP exports cut them: the last word is
// searched as a start, or set aside when too short to start one. A name
// cut before the words that tell it from others ("Förderverein der
// Freiwilligen Feuer...") may still rank after them; one cut after them
// is among the first three.
func TestCutNamesAreSearchedAsStarts(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, tc := range []struct {
		query, want, aside string
		ranked             bool
	}{
		{"Deutscher Verband der Gebrauch", "Deutscher Verband der Gebrauchshund-Sportvereine e.V. Sportverband für das Polizei- u. Schutzhundwesen e.V. Zweigverein Münster-Neutor e.V. von 1949", "", true},
		{"Haus-und Grundeigentümerverein im K", "Haus-und Grundeigentümerverein im Kreis Altenkirchen und Westerwaldkreis e.V., Betzdorf", "k", false},
	} {
		res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: tc.query})
		if err != nil {
			t.Fatal(err)
		}
		rank := slices.IndexFunc(res.Candidates, func(c companydocs.Candidate) bool { return c.Name == tc.want })
		if tc.ranked && (rank < 0 || rank > 2) {
			t.Errorf("%q: %q is #%d, want among the first three", tc.query, tc.want, rank+1)
		}
		if aside := strings.Join(res.Understanding.IgnoredWords, " "); aside != tc.aside {
			t.Errorf("%q: set aside %q, want %q", tc.query, aside, tc.aside)
		}
	}
}
