package index

import (
	"math"

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
}

func (u *union) open(segs *segments, groups [][]clause, docs uint64) error {
	u.shares = make([][]float64, len(groups))
	u.coords = sharesOf(len(groups))
	u.sums = make([]float64, len(groups))
	u.matched = make([]int, len(groups))
	u.touched = make([]int, 0, len(groups))
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
	}
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

// lowest returns the lowest current document of the readers.
func (u *union) lowest() (uint64, bool) {
	var low uint64
	found := false
	for _, d := range u.readers {
		if !d.done && (!found || d.doc < low) {
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
		if zp, ok := p.(*zap.Posting); ok {
			d.doc = d.segs.offsets[d.seg] + zp.Number()
			d.freq, d.norm = zp.Frequency(), zapNorm(zp)
			return
		}
		if p != nil {
			d.doc = d.segs.offsets[d.seg] + p.Number()
			d.freq, d.norm = p.Frequency(), p.Norm()
			return
		}
		d.seg++
	}
	d.done = true
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
