package index

import (
	"slices"
	"testing"

	"github.com/blevesearch/vellum"
)

// TestTypoWalkOfNovelTerms builds a generation of chunk 53's first 3,000
// profiles, then one on it that adds 200 profiles of chunk 13, whose
// names and officers bring words chunk 53 lacks. The typo walk of the
// largest segment and the novel terms finds, for typos of novel terms and
// of terms across the dictionary, every term and distance the walk of
// every segment finds; and the novel terms are those the second segment
// holds and the first does not.
func TestTypoWalkOfNovelTerms(t *testing.T) {
	a := chunk53Profiles(t)[:3000]
	b := append(slices.Clone(a), readChunk(t, "ocdata.chunk13.jsonl.bz2", 200)...)
	dataDir := t.TempDir()
	mustBuild(t, dataDir, a)
	if m := mustBuildWith(t, dataDir, b, incrementalOpts); m.Build == nil || m.Build.Kind != BuildIncremental || m.Build.Segments != 2 {
		t.Fatalf("build %+v, want incremental on two segments", m.Build)
	}
	g := mustOpenCurrent(t, dataDir)
	stats, err := g.newTermStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer stats.close()
	segs, err := stats.segments()
	if err != nil {
		t.Fatal(err)
	}
	lookups, onlyNovel := 0, 0
	for _, field := range []string{fieldName, fieldOfficers} {
		novel := novelOf(t, segs, field)
		largest := segmentTerms(t, segs, segs.largestFirst()[0], field)
		second := segmentTerms(t, segs, segs.largestFirst()[1], field)
		if want := without(second, largest); !slices.Equal(novel, want) || len(novel) < 20 {
			t.Fatalf("%s: %d novel terms, want the %d the second segment holds alone (at least 20)", field, len(novel), len(want))
		}
		terms := append(spread(novel, 20), spread(dictionaryOf(t, segs.r, field), 20)...)
		for i, term := range terms {
			for _, typo := range typosOf(term, i) {
				for _, c := range []struct{ distance, prefix int }{{1, 0}, {1, 1}, {2, 1}} {
					prefix := prefixOf(typo, c.prefix)
					got, err := segs.fuzzy(field, typo, c.distance, prefix)
					if err != nil {
						t.Fatal(err)
					}
					want, err := dictFuzzy(segs.r, field, typo, c.distance, prefix)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s %q at %d edits, prefix %q:\nlargest and novel %v\nevery segment     %v", field, typo, c.distance, prefix, got, want)
					}
					lookups++
					for _, f := range got {
						if _, ok := slices.BinarySearch(novel, f.term); ok {
							onlyNovel++
							break
						}
					}
				}
			}
		}
	}
	if onlyNovel < 50 {
		t.Fatalf("%d of %d lookups found a novel term: too few to tell", onlyNovel, lookups)
	}
	t.Logf("%d lookups, %d of them finding a novel term, alike", lookups, onlyNovel)
}

// novelOf returns the novel terms of field in segs, in order.
func novelOf(t *testing.T, segs *segments, field string) []string {
	t.Helper()
	fst, err := segs.novel.of(segs, field)
	if err != nil || fst == nil {
		t.Fatalf("%s: novel terms %v, %v", field, fst, err)
	}
	var out []string
	it, err := fst.Iterator(nil, nil)
	for ; err == nil; err = it.Next() {
		term, _ := it.Current()
		out = append(out, string(term))
	}
	if err != vellum.ErrIteratorDone {
		t.Fatal(err)
	}
	return out
}

// segmentTerms returns the terms of field in segment i, in order.
func segmentTerms(t *testing.T, segs *segments, i int, field string) []string {
	t.Helper()
	dict, err := segs.snaps[i].Segment().Dictionary(field)
	if err != nil {
		t.Fatal(err)
	}
	var all vellum.AlwaysMatch
	var out []string
	it := dict.AutomatonIterator(&all, nil, nil)
	e, err := it.Next()
	for ; err == nil && e != nil; e, err = it.Next() {
		out = append(out, e.Term)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// without returns the terms of a that b, in order, lacks.
func without(a, b []string) []string {
	var out []string
	for _, t := range a {
		if _, ok := slices.BinarySearch(b, t); !ok {
			out = append(out, t)
		}
	}
	return out
}
