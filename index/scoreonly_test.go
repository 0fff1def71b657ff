package index

import (
	"context"
	"encoding/binary"
	"strings"
	"testing"

	bsearch "github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
	"companydocs/textfold"
)

// A scoreOnlyTerm matches exactly the documents of the term query it
// replaces, through Next and through Advance, and gives every match the
// same positive score.
func TestScoreOnlyTermMatchesLikeTermQuery(t *testing.T) {
	g, stats := sharedTermStats(t)
	seat := commonestSeat(loadRealProfiles(t))
	want := matches(t, g, stats.r, term(fieldSeat, seat, boostSeat))
	if len(want) < 50 {
		t.Fatalf("seat %q matches %d documents; the test needs a common term", seat, len(want))
	}
	got := matches(t, g, stats.r, scoreOnlyQuery(fieldSeat, seat, boostSeat))
	if len(got) != len(want) {
		t.Fatalf("score-only term matches %d documents, term query %d", len(got), len(want))
	}
	for i := range want {
		if string(got[i].IndexInternalID) != string(want[i].IndexInternalID) {
			t.Fatalf("match %d differs", i)
		}
		if got[i].Score <= 0 || got[i].Score != got[0].Score {
			t.Fatalf("match %d scores %v, first %v: want one positive score", i, got[i].Score, got[0].Score)
		}
	}

	s, err := scoreOnlyQuery(fieldSeat, seat, boostSeat).Searcher(context.Background(), stats.r, g.idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(2, 0)}
	for i := 3; i < len(want); i += 17 {
		// Advancing to one past the previous match lands on the match.
		target := make(bindex.IndexInternalID, 8)
		binary.BigEndian.PutUint64(target, binary.BigEndian.Uint64(want[i-1].IndexInternalID)+1)
		d, err := s.Advance(sctx, target)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil || string(d.IndexInternalID) != string(want[i].IndexInternalID) {
			t.Fatalf("advance past match %d did not land on match %d", i-1, i)
		}
		sctx.DocumentMatchPool.Put(d)
	}
}

// commonestSeat returns the folded seat most profiles share.
func commonestSeat(ps []*companydocs.Profile) string {
	counts := map[string]int{}
	best := ""
	for _, p := range ps {
		s := textfold.Fold(p.Seat)
		if counts[s]++; !strings.Contains(s, " ") && counts[s] > counts[best] {
			best = s
		}
	}
	return best
}
