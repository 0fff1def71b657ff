package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
	"companydocs/textfold"
)

// textSearcher finds the same hits with the same scores as bleve's
// boolean searcher over the same clauses (referenceQuery), for the kinds of
// query the resolver sends: names as typed, with a typo, with the city
// appended, deep, filtered by court, with discovery profiles, one word,
// a city alone.
func TestTextQueryScoresLikeBleve(t *testing.T) {
	g, stats := sharedTermStats(t)
	compared, withScoreSide := 0, 0
	forEachTextQuery(t, stats, func(q companydocs.TextQuery, tq *textQuery) {
		got := textMatches(t, stats.r, tq)
		want := allMatches(t, g, stats.r, referenceQuery(tq))
		compareMatches(t, q, got, want)
		compared++
		if len(tq.score) > 0 && len(got) > 0 {
			withScoreSide++
		}
	})
	if compared < 200 || withScoreSide < compared/4 {
		t.Fatalf("compared %d queries, %d with score clauses and hits: too few to tell", compared, withScoreSide)
	}
}

// sharedTermStats returns the shared generation and term statistics of
// its index, closed when the test ends.
func sharedTermStats(t *testing.T) (*Generation, *termStats) {
	t.Helper()
	g := sharedGeneration(t)
	stats, err := g.newTermStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stats.close)
	return g, stats
}

// forEachTextQuery calls f with the query variants of every 97th real
// profile that make a text query.
func forEachTextQuery(t *testing.T, stats *termStats, f func(companydocs.TextQuery, *textQuery)) {
	ps := loadRealProfiles(t)
	for i := 0; i < len(ps); i += 97 {
		for _, q := range queryVariants(ps[i]) {
			if tq := buildQuery(q, stats); tq != nil {
				f(q, tq)
			}
		}
	}
}

// queryVariants returns the text queries the resolver would send for p,
// and some it sends for other inputs.
func queryVariants(p *companydocs.Profile) []companydocs.TextQuery {
	base := nameQueryOf(p.Name)
	if len(base.NameTerms) == 0 {
		return nil
	}
	tokens := append(append([]string(nil), base.NameTerms...), textfold.Tokens(textfold.Fold(p.Seat))...)
	withCity := companydocs.TextQuery{NameTerms: tokens, LegalFormTerms: base.LegalFormTerms, SeatWords: tokens, Fuzzy: true}
	deep := withCity
	deep.Deep = true
	court := base
	court.CourtCode = p.Ref.Court
	discover := base
	discover.Discover = true
	typoed := base
	typoed.Fuzzy = true
	typoed.NameTerms = append([]string(nil), base.NameTerms...)
	if i := longestTerm(typoed.NameTerms); len(typoed.NameTerms[i]) > 5 {
		typoed.NameTerms[i] = typo(typoed.NameTerms[i])
	}
	short := companydocs.TextQuery{NameTerms: base.NameTerms[:1], LegalFormTerms: base.LegalFormTerms, SeatWords: base.NameTerms[:1]}
	city := companydocs.TextQuery{SeatWords: strings.Fields(textfold.Fold(p.Seat))}
	formers := withCity
	formers.Only = companydocs.OnlyFormerNames
	if len(p.PreviousNames) > 0 {
		formers.NameTerms = nameQueryOf(p.PreviousNames[0]).NameTerms
	}
	officers := withCity
	officers.Only = companydocs.OnlyOfficers
	if len(p.Officers) > 0 {
		officers.NameTerms = textfold.Tokens(textfold.Fold(p.Officers[0].Name))
	}
	return []companydocs.TextQuery{base, withCity, deep, court, discover, typoed, short, city, formers, officers}
}

// textMatches returns the score of every hit of q by internal id.
func textMatches(t *testing.T, r bindex.IndexReader, q *textQuery) map[string]float64 {
	t.Helper()
	segs, err := segmentsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	s, err := q.newSearcher(segs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	b := newBatch()
	for {
		ok, err := s.next(b, math.Inf(-1))
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		for i, doc := range b.docs {
			if b.keep[i] {
				out[string(bindex.NewIndexInternalID(nil, doc))] = b.scores[i]
			}
		}
	}
}

// allMatches returns the score of every match of q by internal id.
func allMatches(t *testing.T, g *Generation, r bindex.IndexReader, q query.Query) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, d := range matches(t, g, r, q) {
		out[string(d.IndexInternalID)] = d.Score
	}
	return out
}

// matches returns every match of q in r, in index order.
func matches(t *testing.T, g *Generation, r bindex.IndexReader, q query.Query) []*bsearch.DocumentMatch {
	t.Helper()
	s, err := q.Searcher(context.Background(), r, g.idx.Mapping(), bsearch.SearcherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(s.DocumentMatchPoolSize(), 0)}
	var out []*bsearch.DocumentMatch
	for {
		d, err := s.Next(sctx)
		if err != nil {
			t.Fatal(err)
		}
		if d == nil {
			return out
		}
		out = append(out, &bsearch.DocumentMatch{IndexInternalID: append(bindex.IndexInternalID(nil), d.IndexInternalID...), Score: d.Score})
		sctx.DocumentMatchPool.Put(d)
	}
}

func compareMatches(t *testing.T, q companydocs.TextQuery, got, want map[string]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%+v: %d hits, bleve %d", q, len(got), len(want))
	}
	for id, w := range want {
		s, ok := got[id]
		if !ok {
			t.Fatalf("%+v: a hit of bleve is missing", q)
		}
		if math.Abs(s-w) > 1e-9*math.Max(1, math.Abs(w)) {
			t.Fatalf("%+v: score %v, bleve %v", q, s, w)
		}
	}
}

// Passing over documents that cannot make the cut changes nothing: the
// best matches and their ties are those of a full walk.
func TestCollectPruneKeepsTheBest(t *testing.T) {
	_, stats := sharedTermStats(t)
	compared := 0
	forEachTextQuery(t, stats, func(q companydocs.TextQuery, tq *textQuery) {
		for _, limit := range []int{1, 3, 30} {
			full := collectSorted(t, stats.r, tq, limit, false)
			pruned := collectSorted(t, stats.r, tq, limit, true)
			if fmt.Sprint(pruned) != fmt.Sprint(full) {
				t.Fatalf("%+v, limit %d: pruned %v, full %v", q, limit, pruned, full)
			}
			compared++
		}
	})
	if compared < 300 {
		t.Fatalf("compared %d collections: too few to tell", compared)
	}
}

// collectSorted returns the matches collect keeps, best first, ties by
// document number.
func collectSorted(t *testing.T, r bindex.IndexReader, q *textQuery, limit int, prune bool) []match {
	t.Helper()
	segs, err := segmentsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	_, top := collectWith(t, segs, q, limit, prune)
	return sortedMatches(append(append([]match(nil), top.best...), top.tied...))
}

// collectWith collects the best limit matches of q in segs, and returns
// the searcher too.
func collectWith(t *testing.T, segs *segments, q *textQuery, limit int, prune bool) (*textSearcher, *topMatches) {
	t.Helper()
	s, err := q.newSearcher(segs)
	if err != nil {
		t.Fatal(err)
	}
	top, err := collect(context.Background(), s, limit, prune)
	if err != nil {
		t.Fatal(err)
	}
	return s, top
}

// sortedMatches sorts matches best first, ties by document number.
func sortedMatches(out []match) []match {
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].doc < out[j].doc
	})
	return out
}

// batch.each finds exactly the batch's documents a clause holds, by
// leaping or by merging, whichever the densities choose: batches of one
// to batchSize documents over one to three roaring containers, against
// clauses from a handful of documents to most of the segment.
func TestBatchEachFindsTheSharedDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	b := newBatch()
	leapt, merged := 0, 0
	for round := range 2000 {
		span := uint32(1 + rng.IntN(3*65536))
		clause := roaring.New()
		density := []float64{0.0001, 0.001, 0.01, 0.1, 0.5}[round%5]
		for range int(density*float64(span)) + 1 {
			clause.Add(rng.Uint32N(span))
		}
		picked := roaring.New()
		for range 1 + rng.IntN(batchSize) {
			picked.Add(rng.Uint32N(span))
		}
		const offset = 1000
		b.reset()
		b.segment = 0
		for _, d := range picked.ToArray() {
			b.docs = append(b.docs, offset+uint64(d))
		}
		b.index(offset)
		if b.fewIn(clause) {
			leapt++
		} else {
			merged++
		}
		var got []int
		b.each(&postings{docs: []segmentDocs{{bitmap: clause}}}, func(i int) { got = append(got, i) })
		var want []int
		for i, d := range b.local {
			if clause.Contains(d) {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %d documents of %d in a span of %d: got %v, want %v", round, len(b.local), clause.GetCardinality(), span, got, want)
		}
	}
	if leapt < 200 || merged < 200 {
		t.Fatalf("leapt %d times and merged %d: both ways need testing", leapt, merged)
	}
}

func FuzzFirstAtLeast(f *testing.F) {
	f.Add([]byte{1, 5, 9}, uint32(4))
	f.Fuzz(func(t *testing.T, steps []byte, v uint32) {
		s := make([]uint32, 0, len(steps))
		var x uint32
		for _, d := range steps {
			x += uint32(d)
			s = append(s, x)
		}
		want, _ := slices.BinarySearch(s, v)
		if got := firstAtLeast(s, v); got != want {
			t.Fatalf("firstAtLeast(%v, %d) = %d, want %d", s, v, got, want)
		}
	})
}

// The drive skips the readers that cannot reach the floor (union.raise)
// and still keeps the best: for the query variants of real profiles, the
// pruned collection, which skips, equals the full one, and it does skip.
func TestDriveSkipsAndKeepsTheBest(t *testing.T) {
	_, stats := sharedTermStats(t)
	segs, err := segmentsOf(stats.r)
	if err != nil {
		t.Fatal(err)
	}
	compared, skipped := 0, 0
	forEachTextQuery(t, stats, func(q companydocs.TextQuery, tq *textQuery) {
		for _, limit := range []int{1, 3, 10} {
			s, top := collectWith(t, segs, tq, limit, true)
			if s.drive.skippable > 0 {
				skipped++
			}
			got := sortedMatches(append(top.best, top.tied...))
			want := collectSorted(t, stats.r, tq, limit, false)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%+v, limit %d: skipping %v, full %v", q, limit, got, want)
			}
			compared++
		}
	})
	if compared < 300 || skipped < compared/10 {
		t.Fatalf("compared %d collections, %d of them skipped readers: too few to tell", compared, skipped)
	}
}

// A match's tf times norm is at most 1, which the drive's bound on a
// reader's matches assumes (driveReader.most): in every text field of the
// shared generation, no term occurs in a field more often than the field
// has tokens.
func TestTermFrequencyBoundedByNorm(t *testing.T) {
	_, stats := sharedTermStats(t)
	segs, err := segmentsOf(stats.r)
	if err != nil {
		t.Fatal(err)
	}
	postings := 0
	for _, field := range append(slices.Clone(textFields), fieldNameKey, fieldNameBase) {
		for _, seg := range segs.snaps {
			dict, err := seg.Segment().Dictionary(field)
			if err != nil {
				t.Fatal(err)
			}
			terms := dict.AutomatonIterator(nil, nil, nil)
			for e, err := terms.Next(); e != nil || err != nil; e, err = terms.Next() {
				if err != nil {
					t.Fatal(err)
				}
				pl, err := dict.PostingsList([]byte(e.Term), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				it := pl.Iterator(true, true, false, nil)
				for p, err := it.Next(); p != nil || err != nil; p, err = it.Next() {
					if err != nil {
						t.Fatal(err)
					}
					if tfNorm := math.Sqrt(float64(p.Frequency())) * p.Norm(); tfNorm > 1+1e-6 {
						t.Fatalf("%s:%s in document %d: frequency %d, norm %g", field, e.Term, p.Number(), p.Frequency(), p.Norm())
					}
					postings++
				}
			}
		}
	}
	if postings < 10000 {
		t.Fatalf("checked %d postings: too few to tell", postings)
	}
}
