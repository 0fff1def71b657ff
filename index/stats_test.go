package index

import (
	"context"
	"errors"
	"strings"
	"testing"

	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
)

// failingReader is an index reader whose term lookups fail, as a damaged
// segment's do; it has no fuzzy dictionary either.
type failingReader struct{ bindex.IndexReader }

var errSegment = errors.New("segment unreadable")

func (failingReader) TermFieldReader(context.Context, []byte, string, bool, bool, bool) (bindex.TermFieldReader, error) {
	return nil, errSegment
}

// A read error while the query is built fails the search; it must not
// drop the clause the lookup would have decided and search on without it.
func TestStatsReadErrorIsKept(t *testing.T) {
	s := &termStats{ctx: context.Background(), r: failingReader{}, common: minCommonDocs}
	buildQuery(companydocs.TextQuery{NameTerms: []string{"rheinbahn"}, SeatWords: []string{"duesseldorf"}, Fuzzy: true}, s)
	if !errors.Is(s.err, errSegment) {
		t.Fatalf("stats error = %v, want the reader's error", s.err)
	}
}

func TestFuzzyTermsWithoutFuzzyDictionaryIsAnError(t *testing.T) {
	s := &termStats{ctx: context.Background(), r: failingReader{}, common: minCommonDocs}
	if got := s.fuzzyTerms(fieldName, "rheinbahn", 2, 2); got != nil {
		t.Fatalf("fuzzy terms = %v, want none", got)
	}
	if s.err == nil {
		t.Fatal("a reader without a fuzzy dictionary gave no error")
	}
}

// completions gives the terms a start completes, most frequent first,
// each with its document frequency, the start itself left out.
func TestCompletions(t *testing.T) {
	_, stats := sharedTermStats(t)
	for _, start := range []string{"rhein", "stadt", "bau", "zzzz"} {
		got := stats.completions(fieldName, start, 10, 5000)
		if stats.err != nil {
			t.Fatal(stats.err)
		}
		for i, c := range got {
			if !strings.HasPrefix(c.term, start) || c.term == start {
				t.Errorf("%q: completion %q", start, c.term)
			}
			if df := stats.docFreq(fieldName, c.term); df != c.docs || df == 0 {
				t.Errorf("%q: %q has %d documents, document frequency %d", start, c.term, c.docs, df)
			}
			if i > 0 && got[i-1].docs < c.docs {
				t.Errorf("%q: %q (%d) after %q (%d)", start, c.term, c.docs, got[i-1].term, got[i-1].docs)
			}
		}
		if start != "zzzz" && len(got) == 0 {
			t.Errorf("%q: no completions", start)
		}
	}
}

// TestHeldTermsOfLiveDocumentsOnly: on a generation built on another's,
// a term is held only while a live document holds it, whichever segment
// holds the document; a term only the deleted document of a renamed
// profile held is not (the typo walks and completions leave it out, as a
// full build's dictionary would not have it).
func TestHeldTermsOfLiveDocumentsOnly(t *testing.T) {
	ps := cloneProfiles(loadRealProfiles(t)[:300])
	ps[5].Name, ps[5].PreviousNames = "Quuxbarium Werke GmbH", nil
	ps[6].Name, ps[6].PreviousNames = "Plimbatorium Handel GmbH", nil
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	edited := cloneProfiles(ps)
	edited[5].Name = "Zorblatt Werke GmbH"
	if m := mustBuildWith(t, dataDir, edited, incrementalOpts); m.Build.Kind != BuildIncremental || m.Build.Segments != 2 {
		t.Fatalf("build %+v, want one on the first's segment, two segments", m.Build)
	}
	g := mustOpenCurrent(t, dataDir)
	s, err := g.newTermStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	for term, want := range map[string]bool{"quuxbarium": false, "zorblatt": true, "plimbatorium": true} {
		if got := s.held(fieldName, term); got != want || s.err != nil {
			t.Errorf("held(%q) = %v (%v), want %v", term, got, s.err, want)
		}
	}
}
