package index

import (
	"cmp"
	"math"
	"slices"

	zap "github.com/blevesearch/zapx/v17"

	"github.com/blevesearch/bleve/v2/search/scorer"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// union walks the documents matching any clause of its groups in document
// order and scores each as bleve's term searchers and disjunctions do: a
// clause match scores tf-idf with the term's frequency and the field's
// norm; a group, the sum of its matches times the share of its clauses
// matched; the union, the sum of the groups times the share of groups
// matched.
type union struct {
	readers []*driveReader
	// byMost is the readers by the most a match of theirs scores, least
	// first; the first skippable of them are skipped (raise)
	byMost    []*driveReader
	skippable int
	threshold float64
	bounds    []float64 // scratch, per group
	counts    []int     // scratch, per group
	// shares[g][m] is the share of group g's clauses m of them are, and
	// coords[t] that of the groups t of them are: a lookup, where the
	// division was a tenth of the walk
	shares  [][]float64
	coords  []float64
	sums    []float64 // scratch, per group
	matched []int     // scratch, per group
	touched []int     // scratch, the groups matched
	started bool
}

// driveReader reads the postings of one drive clause, with frequencies
// and norms, from the postings iterator of each segment in turn, as
// scorch's term field reader does, without making each document number
// into an internal id and back.
type driveReader struct {
	segs        *segments
	iterators   []segment.PostingsIterator // per segment
	seg         int                        // the segment read
	doc         uint64                     // current document number
	freq        uint64
	norm        float64
	done        bool
	group       int
	boost, idf  float64
	queryWeight float64
	most        float64 // at least the most a match scores
	skipped     bool    // only brought up to the other readers' matches
}

func (u *union) open(segs *segments, groups [][]clause, docs uint64) error {
	u.shares = make([][]float64, len(groups))
	u.coords = sharesOf(len(groups))
	u.sums = make([]float64, len(groups))
	u.matched = make([]int, len(groups))
	u.touched = make([]int, 0, len(groups))
	u.bounds = make([]float64, len(groups))
	u.counts = make([]int, len(groups))
	u.threshold = math.Inf(-1)
	for g, clauses := range groups {
		u.shares[g] = sharesOf(len(clauses))
		for _, c := range clauses {
			d := &driveReader{segs: segs, group: g, boost: c.boost, queryWeight: 1}
			tp, err := segs.postings(c.field, c.value)
			if err != nil {
				return err
			}
			for _, pl := range tp.lists {
				d.iterators = append(d.iterators, pl.Iterator(true, true, false, nil))
			}
			// bleve's tf-idf inverse document frequency (scorer.TermQueryScorer)
			d.idf = 1.0 + math.Log(float64(docs)/float64(tp.count+1.0))
			u.readers = append(u.readers, d)
		}
	}
	u.byMost = slices.Clone(u.readers)
	return nil
}

// weight returns the sum of the squared clause weights.
func (u *union) weight() float64 {
	var w float64
	for _, d := range u.readers {
		x := d.boost * d.idf
		w += x * x
	}
	return w
}

func (u *union) setQueryNorm(qnorm float64) {
	for _, d := range u.readers {
		d.queryWeight = d.boost * d.idf * qnorm
		// tf times norm is at most 1: a term occurs in a field at most as
		// often as the field has tokens (TestTermFrequencyBoundedByNorm);
		// the margin covers the norm's float32 rounding
		d.most = d.idf * d.queryWeight * (1 + 1e-6)
	}
	slices.SortStableFunc(u.byMost, func(a, b *driveReader) int { return cmp.Compare(a.most, b.most) })
}

// raise tells the union that a match scoring below threshold is of no use.
// Its walk then skips the readers whose matches could not reach it on
// their own, the least scoring first (the MaxScore method): a document
// only they match is never read, and they are only brought up to the
// documents the other readers match. A common word's postings are then
// skipped over once the best matches hold the whole name as well.
func (u *union) raise(threshold float64) {
	if threshold <= u.threshold {
		return
	}
	u.threshold = threshold
	for u.skippable < len(u.byMost) && u.bound(u.byMost[:u.skippable+1]) < threshold {
		u.byMost[u.skippable].skipped = true
		u.skippable++
	}
}

// bound returns at least the most a document matched by some of readers,
// and by no other reader, scores: every reader matching, each group's
// share and the union's as large as they can be.
func (u *union) bound(readers []*driveReader) float64 {
	clear(u.bounds)
	clear(u.counts)
	groups := 0
	for _, d := range readers {
		if u.counts[d.group] == 0 {
			groups++
		}
		u.bounds[d.group] += d.most
		u.counts[d.group]++
	}
	var b float64
	for g, n := range u.counts {
		if n > 0 {
			b += u.bounds[g] * u.shares[g][n]
		}
	}
	return b * u.coords[groups] * (1 + 1e-9)
}

// next returns the next matching document and its score; ok is false at
// the end. A read error is kept in *err.
func (u *union) next(err *error) (doc uint64, score float64, ok bool) {
	if !u.started {
		u.started = true
		for _, d := range u.readers {
			d.next(err)
		}
	}
	doc, ok = u.lowest()
	if !ok {
		return 0, 0, false
	}
	for _, d := range u.byMost[:u.skippable] {
		if !d.done && d.doc < doc {
			d.advance(doc, err)
		}
	}
	u.touched = u.touched[:0]
	for _, d := range u.readers {
		if !d.done && d.doc == doc {
			if u.matched[d.group] == 0 {
				u.touched = append(u.touched, d.group)
			}
			u.sums[d.group] += d.score()
			u.matched[d.group]++
			d.next(err)
		}
	}
	for _, g := range u.touched {
		score += u.sums[g] * u.shares[g][u.matched[g]]
		u.sums[g], u.matched[g] = 0, 0
	}
	return doc, score * u.coords[len(u.touched)], true
}

// sharesOf returns m/n for every m from 0 to n, computed as bleve's
// disjunction computes its coordination factor.
func sharesOf(n int) []float64 {
	out := make([]float64, n+1)
	for m := range out {
		out[m] = float64(m) / float64(n)
	}
	return out
}

// lowest returns the lowest current document of the readers not skipped.
func (u *union) lowest() (uint64, bool) {
	var low uint64
	found := false
	for _, d := range u.readers {
		if !d.done && !d.skipped && (!found || d.doc < low) {
			low, found = d.doc, true
		}
	}
	return low, found
}

func (d *driveReader) next(err *error) {
	for d.seg < len(d.iterators) {
		p, e := d.iterators[d.seg].Next()
		if e != nil {
			*err, d.done = e, true
			return
		}
		if p != nil {
			d.read(p)
			return
		}
		d.seg++
	}
	d.done = true
}

// advance moves to the first posting of document target or after it.
func (d *driveReader) advance(target uint64, err *error) {
	for ; d.seg < len(d.iterators); d.seg++ {
		if d.seg+1 < len(d.iterators) && d.segs.offsets[d.seg+1] <= target {
			continue // the segment ends before target
		}
		start := d.segs.offsets[d.seg]
		p, e := d.iterators[d.seg].Advance(target - min(target, start))
		if e != nil {
			*err, d.done = e, true
			return
		}
		if p != nil {
			d.read(p)
			return
		}
	}
	d.done = true
}

// read takes the document, frequency and norm of p, of the current
// segment.
func (d *driveReader) read(p segment.Posting) {
	if zp, ok := p.(*zap.Posting); ok {
		d.doc = d.segs.offsets[d.seg] + zp.Number()
		d.freq, d.norm = zp.Frequency(), zapNorm(zp)
		return
	}
	d.doc = d.segs.offsets[d.seg] + p.Number()
	d.freq, d.norm = p.Frequency(), p.Norm()
}

// zapNorm returns p.Norm(), the field norm zap computes from the field's
// token count for every posting (a square root and a division, a tenth of
// a search walking a common word's postings), from a table for the counts
// names have. zap's postings are asked for by their type, not by an
// interface: the assertion to an interface was a twentieth of the walk.
func zapNorm(p *zap.Posting) float64 {
	if tokens := p.NormUint64(); tokens < uint64(len(fieldNorms)) {
		return fieldNorms[tokens]
	}
	return p.Norm()
}

// fieldNorms holds zap's norm of a field of each token count below 64.
var fieldNorms = func() (norms [64]float64) {
	for n := range norms {
		norms[n] = float64(float32(1.0 / math.Sqrt(float64(n))))
	}
	return norms
}()

// score returns the tf-idf score of the current match, as bleve's
// TermQueryScorer computes it.
func (d *driveReader) score() float64 {
	var tf float64
	if d.freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(d.freq)]
	} else {
		tf = math.Sqrt(float64(d.freq))
	}
	s := tf * d.norm * d.idf
	if d.queryWeight != 1.0 {
		s *= d.queryWeight
	}
	return s
}
