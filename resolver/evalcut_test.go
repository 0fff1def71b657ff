//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
	"companydocs/textfold"
)

// TestEvaluationCutNamesFindTheirCompany cuts real names of the sample at
// each length at which systems cut a name (30, 35, 40 and 50 characters,
// wherever the cut falls, a space at its end trimmed as a cell's is) and
// asks for each: the company comes first as often as when its whole name
// is asked, within two points. A cut that starts another entry's name
// too names neither, and is not asked.
func TestEvaluationCutNamesFindTheirCompany(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	idx := mustSample(t)
	names := foldedNames(idx)
	for _, length := range []int{30, 35, 40, 50} {
		companies := namesToCut(idx, names, heldOut(loadEval(t)), length, 100)
		if len(companies) < 100 {
			t.Fatalf("%d names to cut at %d found, want 100", len(companies), length)
		}
		whole, cut := 0, 0
		for _, p := range companies {
			if firstIs(t, gen, p.Name, p.ID) {
				whole++
			}
			if q := cutAt(p.Name, length); firstIs(t, gen, q, p.ID) {
				cut++
			} else {
				t.Logf("cut at %d: %q does not find %s first", length, q, p.Name)
			}
		}
		t.Logf("cut at %d: %d of %d first, %d whole", length, cut, len(companies), whole)
		if cut < whole-2 {
			t.Errorf("names cut at %d: %d of %d first, want at least %d (the whole names: %d)", length, cut, len(companies), whole-2, whole)
		}
	}
}

// firstIs reports whether the query finds the profile id first.
func firstIs(t *testing.T, gen resolver.Index, query, id string) bool {
	t.Helper()
	res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: query})
	if err != nil {
		t.Fatalf("%q: %v", query, err)
	}
	return len(res.Candidates) > 0 && res.Candidates[0].ProfileID == id
}

// cutAt is a name as a field of length characters holds it, a space at
// its end trimmed.
func cutAt(name string, length int) string {
	return strings.TrimSpace(string([]rune(name)[:length]))
}

// foldedNames are the folded words of every name of the sample.
func foldedNames(idx *memIndex) [][]string {
	out := make([][]string, len(idx.all))
	for i, p := range idx.all {
		out[i] = textfold.Tokens(textfold.Fold(p.Name))
	}
	return out
}

// namesToCut are n live registry entries spread over the sample, not
// held out of the index, whose name is the only one of its kind (legal
// form aside), longer than length by more than a word's start, and cut
// at length starts no other name of the sample.
func namesToCut(idx *memIndex, names [][]string, out map[string]bool, length, n int) []*companydocs.Profile {
	counts := nameCounts(idx)
	var found []*companydocs.Profile
	for _, p := range idx.all {
		if out[p.ID] || p.Removed || p.Source != companydocs.SourceRegistryCache || counts[baseKey(p.Name)] != 1 ||
			len([]rune(p.Name)) <= length+3 {
			continue
		}
		if startingWith(names, textfold.Tokens(textfold.Fold(cutAt(p.Name, length)))) == 1 {
			found = append(found, p)
		}
	}
	step := max(1, len(found)/n)
	var spread []*companydocs.Profile
	for i := 0; i < len(found) && len(spread) < n; i += step {
		spread = append(spread, found[i])
	}
	return spread
}

// startingWith counts the names that start with the words of a cut name,
// its last word as the start of one.
func startingWith(names [][]string, cut []string) int {
	n := 0
	for _, name := range names {
		if len(cut) == 0 || len(name) < len(cut) || !strings.HasPrefix(name[len(cut)-1], cut[len(cut)-1]) {
			continue
		}
		if strings.Join(name[:len(cut)-1], " ") == strings.Join(cut[:len(cut)-1], " ") {
			n++
		}
	}
	return n
}
