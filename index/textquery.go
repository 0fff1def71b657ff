package index

import (
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
)

// textQuery is the query of a text search. Its hits are the documents
// matching a clause of a drive group, less those matching an exclude
// clause, and, if there is a filter, only those matching one of its
// clauses. The score groups only add to the score of a hit. A group holds
// the clauses of one name token, of the city, or a single whole-name
// clause.
//
// It scores exactly like the bleve BooleanQuery whose must clause is a
// disjunction of one disjunction of term queries per drive group, whose
// should clauses are one disjunction per score group (of scoreOnlyTerm
// queries), with the exclude clauses as must-not and the filter as filter
// (referenceQuery in the tests). It exists because bleve's searchers cost
// several times more per hit: each level of nested disjunctions compares
// ids and takes match objects from a pool, and a term searcher advanced to
// a hit steps through every posting before it to keep frequencies and
// norms in step. Here the drive is one flat union of postings readers, and
// the score clauses are intersected with a batch of its hits at a time
// through their terms' postings bitmaps.
type textQuery struct {
	drive   [][]clause
	score   [][]clause
	exclude []clause
	filter  []clause
}

// A clause matches one term of one field.
type clause struct {
	field, value string
	boost        float64
	typo         bool
}

// typicalNorm returns the field norm (1/sqrt of the field's token count) a
// score clause match in field is scored with, since its postings are read
// without norms: that of a seat of one token, of a name of three, of four
// tokens in the other fields (an address, two officers).
func typicalNorm(field string) float64 {
	switch field {
	case fieldSeat, fieldSeatKey, fieldNameKey, fieldNameBase, fieldCourt, fieldSource:
		return 1
	case fieldName, fieldNamePlain, fieldNameForm, fieldPhonetic:
		return 0.577
	}
	return 0.5
}

// newSearcher opens the postings of q's clauses in segs. Nothing it opens
// needs closing: the postings lists live as long as the reader.
func (q *textQuery) newSearcher(segs *segments) (*textSearcher, error) {
	s := &textSearcher{segs: segs}
	if err := s.open(q); err != nil {
		return nil, err
	}
	return s, nil
}

// textSearcher finds the hits of a textQuery.
type textSearcher struct {
	drive   union
	groups  [][]*postings
	shares  [][]float64 // per group, sharesOf its clauses
	coords  []float64   // sharesOf the groups
	exclude []*postings
	filter  []*postings
	segs    *segments
	held    heldMatch
	err     error
	// scoreBound is at least the most the score clauses add to a hit.
	scoreBound float64
}

func (s *textSearcher) open(q *textQuery) error {
	docs, err := s.segs.r.DocCount()
	if err != nil {
		return err
	}
	if err := s.drive.open(s.segs, q.drive, docs); err != nil {
		return err
	}
	for _, g := range q.score {
		group, err := openPostings(s.segs, g, docs)
		if err != nil {
			return err
		}
		s.groups = append(s.groups, group)
		s.shares = append(s.shares, sharesOf(len(group)))
	}
	s.coords = sharesOf(len(s.groups))
	if s.exclude, err = openPostings(s.segs, q.exclude, docs); err != nil {
		return err
	}
	if s.filter, err = openPostings(s.segs, q.filter, docs); err != nil {
		return err
	}
	s.setQueryNorm(1 / math.Sqrt(s.weight()))
	return nil
}

// next fills b with the next drive matches that could reach floor, at
// most batchSize of one segment, scored and each marked kept or not; ok
// is false at the end. Deleted documents are among them: collect passes
// over those.
func (s *textSearcher) next(b *batch, floor float64) (ok bool, err error) {
	b.reset()
	s.drive.raise(floor - s.scoreBound)
	for len(b.docs) < batchSize {
		doc, score, ok := s.held.doc, s.held.score, s.held.ok
		if ok {
			s.held.ok = false
		} else if doc, score, ok = s.drive.next(&s.err); s.err != nil {
			return false, s.err
		}
		if !ok {
			break
		}
		if score+s.scoreBound < floor {
			continue
		}
		seg, _ := s.segs.locate(doc)
		if len(b.docs) > 0 && seg != b.segment {
			s.held = heldMatch{doc, score, true}
			break
		}
		b.segment = seg
		b.docs = append(b.docs, doc)
		b.scores = append(b.scores, score)
	}
	if len(b.docs) == 0 {
		return false, nil
	}
	s.score(b)
	return true, nil
}

// batchSize is the drive matches scored together. The floor that passes
// over matches which cannot make the cut rises only between batches.
const batchSize = 512

// A heldMatch is a drive match read but left for the next batch, being of
// another segment.
type heldMatch struct {
	doc   uint64
	score float64
	ok    bool
}

// score adds the score clauses to the matches of b and marks those the
// exclude clauses and the filter let through. A clause's documents are
// intersected with the batch's (batch.each), where a lookup per match
// costs every match times every clause.
func (s *textSearcher) score(b *batch) {
	b.index(s.segs.offsets[b.segment])
	for i := range b.keep {
		b.keep[i] = len(s.filter) == 0
	}
	for _, p := range s.filter {
		b.each(p, func(i int) { b.keep[i] = true })
	}
	for _, p := range s.exclude {
		b.each(p, func(i int) { b.keep[i] = false })
	}
	// within a group and over the groups: the sum of the matches times
	// the share of clauses matched, as bleve's disjunction does
	for gi, g := range s.groups {
		b.touched = b.touched[:0]
		for _, p := range g {
			b.each(p, func(i int) {
				if b.gmatched[i] == 0 {
					b.touched = append(b.touched, i)
				}
				b.gsum[i] += p.score
				b.gmatched[i]++
			})
		}
		for _, i := range b.touched {
			b.sum[i] += b.gsum[i] * s.shares[gi][b.gmatched[i]]
			b.matched[i]++
			b.gsum[i], b.gmatched[i] = 0, 0
		}
	}
	for i, m := range b.matched {
		if m > 0 {
			b.scores[i] += b.sum[i] * s.coords[m]
		}
	}
}

// A batch is drive matches of one segment, in document order, scored
// together.
type batch struct {
	docs    []uint64
	scores  []float64
	keep    []bool
	segment int
	offset  uint64   // the segment's first document number
	local   []uint32 // the documents' numbers in the segment
	// the same as a bitmap, made when a clause first needs it
	set    *roaring.Bitmap
	hasSet bool
	clause roaring.IntIterator
	// per document, over the groups and within the current one
	sum, gsum         []float64
	matched, gmatched []int
	touched           []int
}

func newBatch() *batch {
	return &batch{set: roaring.New()}
}

func (b *batch) reset() {
	b.docs, b.scores = b.docs[:0], b.scores[:0]
}

// index numbers the batch's documents within their segment and zeroes
// its sums.
func (b *batch) index(offset uint64) {
	b.offset = offset
	b.local = b.local[:0]
	for _, d := range b.docs {
		b.local = append(b.local, uint32(d-offset))
	}
	b.hasSet = false
	n := len(b.docs)
	b.keep = resize(b.keep, n)
	b.sum, b.gsum = resize(b.sum, n), resize(b.gsum, n)
	b.matched, b.gmatched = resize(b.matched, n), resize(b.gmatched, n)
	clear(b.sum)
	clear(b.gsum)
	clear(b.matched)
	clear(b.gmatched)
}

// resize returns s with length n, reusing its array where it is long
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// each calls fn with the index of every document of b the clause of p
// matches, in document order.
func (b *batch) each(p *postings, fn func(i int)) {
	d := p.docs[b.segment]
	switch {
	case d.hasOne:
		if i, ok := slices.BinarySearch(b.docs, b.offset+d.one); ok {
			fn(i)
		}
	case d.bitmap != nil && (len(b.local) <= fewMatches || b.fewIn(d.bitmap)):
		b.leapfrog(d.bitmap, fn)
	case d.bitmap != nil:
		b.merge(d.bitmap, fn)
	}
}

// fewMatches is the size of a batch that leaps through every clause: the
// last batch of a segment is most often short (the few matches of a
// generation's second segment), and making a bitmap of it and
// intersecting each clause with it cost more than leaping.
const fewMatches = 64

// fewIn reports whether docs holds at most a quarter as many documents as
// b between b's first and last. Most clauses do: a city's or a word's
// documents among a batch of a common word's. Leaping costs a few
// comparisons a document of the sparser side and merging one a document
// of both; a quarter is where they cost the same on 5M profiles.
func (b *batch) fewIn(docs *roaring.Bitmap) bool {
	first, last := b.local[0], b.local[len(b.local)-1]
	return 4*(docs.Rank(last)-docs.Rank(first)) <= uint64(len(b.local))
}

// leapfrog calls fn with the index of every document of b in docs,
// leaping from one of docs to the next of b and back.
func (b *batch) leapfrog(docs *roaring.Bitmap, fn func(i int)) {
	it := &b.clause
	it.Initialize(docs)
	for i := 0; i < len(b.local); {
		it.AdvanceIfNeeded(b.local[i])
		if !it.HasNext() {
			return
		}
		if d := it.PeekNext(); d != b.local[i] {
			i += 1 + firstAtLeast(b.local[i+1:], d)
			continue
		}
		fn(i)
		i++
	}
}

// merge calls fn with the index of every document of b in docs, through
// roaring's intersection, which merges two arrays unless one is 64 times
// the other.
func (b *batch) merge(docs *roaring.Bitmap, fn func(i int)) {
	if !b.hasSet {
		b.set.Clear()
		b.set.AddMany(b.local)
		b.hasSet = true
	}
	it := roaring.And(b.set, docs).Iterator()
	i := 0
	for it.HasNext() {
		d := it.Next()
		for b.local[i] != d {
			i++
		}
		fn(i)
	}
}

// firstAtLeast returns the index of the first value of the sorted s that
// is at least v, or len(s). It looks near the start first, doubling its
// stride, since the next match is most often close.
func firstAtLeast(s []uint32, v uint32) int {
	lo, hi := 0, 1
	for hi < len(s) && s[hi] < v {
		lo, hi = hi, 2*hi
	}
	hi = min(hi, len(s))
	j, _ := slices.BinarySearch(s[lo:hi], v)
	return lo + j
}

// weight returns the squared weight of the drive and score clauses, as
// bleve's boolean searcher computes it.
func (s *textSearcher) weight() float64 {
	w := s.drive.weight()
	for _, g := range s.groups {
		for _, p := range g {
			w += p.scorer.Weight()
		}
	}
	return w
}

// setQueryNorm sets the query norm of the drive and the score clauses.
func (s *textSearcher) setQueryNorm(qnorm float64) {
	s.drive.setQueryNorm(qnorm)
	s.scoreBound = 0
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(1, 0)}
	for _, g := range s.groups {
		for _, p := range g {
			p.setQueryNorm(sctx, qnorm)
			s.scoreBound += p.score
		}
	}
	// every clause of every group matching, with room for rounding
	s.scoreBound *= 1 + 1e-9
}

// postings holds the documents of one score, exclude or filter clause's
// term, which need no frequencies or norms: the term's postings bitmap in
// each segment, which a batch of drive matches is intersected with
// (index/DESIGN.md, "What is relied on in bleve").
type postings struct {
	docs   []segmentDocs // per segment
	scorer *scorer.TermQueryScorer
	norm   float64
	score  float64 // of a match, once the query norm is set
}

// segmentDocs is the documents of a term in one segment: a bitmap, or the
// one document of a term zap stores without one.
type segmentDocs struct {
	bitmap *roaring.Bitmap
	one    uint64
	hasOne bool
}

// openPostings opens the postings of each clause in segs.
func openPostings(segs *segments, clauses []clause, docs uint64) ([]*postings, error) {
	out := make([]*postings, 0, len(clauses))
	for _, c := range clauses {
		tp, err := segs.postings(c.field, c.value)
		if err != nil {
			return nil, err
		}
		p := &postings{docs: make([]segmentDocs, len(tp.lists)), norm: typicalNorm(c.field)}
		for i, pl := range tp.lists {
			if p.docs[i], err = docsOf(pl); err != nil {
				return nil, err
			}
		}
		p.scorer = scorer.NewTermQueryScorer([]byte(c.value), c.field, c.boost, docs, tp.count, 0, bsearch.SearcherOptions{})
		out = append(out, p)
	}
	return out, nil
}

// docsOf returns the documents of a postings list, less the except it
// was opened with.
func docsOf(pl segment.PostingsList) (segmentDocs, error) {
	it := pl.Iterator(false, false, false, nil)
	opt, ok := it.(segment.OptimizablePostingsIterator)
	if !ok {
		return segmentDocs{}, fmt.Errorf("postings iterator %T has no bitmap", it)
	}
	if n, ok := opt.DocNum1Hit(); ok {
		return segmentDocs{one: n, hasOne: true}, nil
	}
	return segmentDocs{bitmap: opt.ActualBitmap()}, nil
}

// setQueryNorm computes the score of a match as bleve's term scorer does
// for a frequency of one and the field's typical norm, with a document
// match from sctx's pool, which it puts back.
func (p *postings) setQueryNorm(sctx *bsearch.SearchContext, qnorm float64) {
	p.scorer.SetQueryNorm(qnorm)
	m := p.scorer.Score(sctx, &bindex.TermFieldDoc{Freq: 1, Norm: p.norm})
	p.score = m.Score
	sctx.DocumentMatchPool.Put(m)
}
