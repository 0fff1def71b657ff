package index

import (
	"bytes"
	"context"
	"math"

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
// the score clauses are postings readers without frequencies or norms, for
// which zap jumps straight to the hit in the term's bitmap.
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

// newSearcher opens the postings of q's clauses in r.
func (q *textQuery) newSearcher(ctx context.Context, r bindex.IndexReader) (*textSearcher, error) {
	s := &textSearcher{}
	if err := s.open(ctx, r, q); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// textSearcher finds the hits of a textQuery.
type textSearcher struct {
	drive   union
	groups  [][]*postings
	exclude []*postings
	filter  []*postings
	id      bindex.IndexInternalID // scratch
	err     error
	// scoreBound is at least the most the score clauses add to a hit.
	scoreBound float64
}

func (s *textSearcher) open(ctx context.Context, r bindex.IndexReader, q *textQuery) error {
	docs, err := r.DocCount()
	if err != nil {
		return err
	}
	if err := s.drive.open(ctx, r, q.drive, docs); err != nil {
		return err
	}
	for _, g := range q.score {
		group, err := openPostings(ctx, r, g, docs)
		s.groups = append(s.groups, group)
		if err != nil {
			return err
		}
	}
	if s.exclude, err = openPostings(ctx, r, q.exclude, docs); err != nil {
		return err
	}
	if s.filter, err = openPostings(ctx, r, q.filter, docs); err != nil {
		return err
	}
	s.setQueryNorm(1 / math.Sqrt(s.weight()))
	return nil
}

// next returns the next hit's document number and score, passing over
// documents whose score could not reach floor; ok is false at the end.
func (s *textSearcher) next(floor float64) (doc uint64, score float64, ok bool, err error) {
	for {
		doc, score, ok = s.drive.next(&s.err)
		if s.err != nil || !ok {
			return 0, 0, false, s.err
		}
		if score+s.scoreBound < floor {
			continue
		}
		s.id = bindex.NewIndexInternalID(s.id, doc)
		if !s.admits(s.id) {
			continue
		}
		score += s.scoreOf(s.id)
		return doc, score, s.err == nil, s.err
	}
}

// admits reports whether a document the drive matched is a hit.
func (s *textSearcher) admits(id bindex.IndexInternalID) bool {
	for _, p := range s.exclude {
		if p.at(id, &s.err) {
			return false
		}
	}
	if len(s.filter) == 0 {
		return true
	}
	for _, p := range s.filter {
		if p.at(id, &s.err) {
			return true
		}
	}
	return false
}

// scoreOf adds up the score groups' clauses that match document id: within
// a group and over the groups the sum of the matches times the share of
// clauses matched, as bleve's disjunction does.
func (s *textSearcher) scoreOf(id bindex.IndexInternalID) float64 {
	var sum float64
	matched := 0
	for _, g := range s.groups {
		var gsum float64
		gmatched := 0
		for _, p := range g {
			if p.at(id, &s.err) {
				gsum += p.score
				gmatched++
			}
		}
		if gmatched > 0 {
			sum += gsum * (float64(gmatched) / float64(len(g)))
			matched++
		}
	}
	if matched == 0 {
		return 0
	}
	return sum * (float64(matched) / float64(len(s.groups)))
}

// Close closes every postings reader.
func (s *textSearcher) Close() error {
	err := s.drive.close()
	for _, g := range s.groups {
		for _, p := range g {
			if e := p.reader.Close(); err == nil {
				err = e
			}
		}
	}
	for _, p := range append(s.exclude, s.filter...) {
		if e := p.reader.Close(); err == nil {
			err = e
		}
	}
	return err
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
	for _, g := range s.groups {
		for _, p := range g {
			p.setQueryNorm(qnorm)
			s.scoreBound += p.score
		}
	}
	// every clause of every group matching, with room for rounding
	s.scoreBound *= 1 + 1e-9
}

// postings reads the documents of one clause, without frequencies or
// norms, forward only.
type postings struct {
	reader bindex.TermFieldReader
	tfd    bindex.TermFieldDoc
	cur    bindex.IndexInternalID // the document read last
	done   bool
	scorer *scorer.TermQueryScorer
	norm   float64
	score  float64 // of a match, once the query norm is set
}

// openPostings opens the postings of each clause; on error it returns
// those it opened, for Close.
func openPostings(ctx context.Context, r bindex.IndexReader, clauses []clause, docs uint64) ([]*postings, error) {
	out := make([]*postings, 0, len(clauses))
	for _, c := range clauses {
		reader, err := r.TermFieldReader(ctx, []byte(c.value), c.field, false, false, false)
		if err != nil {
			return out, err
		}
		sc := scorer.NewTermQueryScorer([]byte(c.value), c.field, c.boost, docs, reader.Count(), 0, bsearch.SearcherOptions{})
		out = append(out, &postings{reader: reader, scorer: sc, norm: typicalNorm(c.field)})
	}
	return out, nil
}

// setQueryNorm computes the score of a match as bleve's term scorer does
// for a frequency of one and the field's typical norm.
func (p *postings) setQueryNorm(qnorm float64) {
	p.scorer.SetQueryNorm(qnorm)
	sctx := &bsearch.SearchContext{DocumentMatchPool: bsearch.NewDocumentMatchPool(1, 0)}
	p.score = p.scorer.Score(sctx, &bindex.TermFieldDoc{Freq: 1, Norm: p.norm}).Score
}

// at reports whether the clause matches document id; ids must not
// decrease from call to call. A read error is kept in *err.
func (p *postings) at(id bindex.IndexInternalID, err *error) bool {
	if p.done {
		return false
	}
	if p.cur != nil {
		if c := bytes.Compare(p.cur, id); c >= 0 {
			return c == 0
		}
	}
	m, e := p.reader.Advance(id, p.tfd.Reset())
	if e != nil {
		*err, p.done = e, true
		return false
	}
	if m == nil {
		p.done = true
		return false
	}
	p.cur = append(p.cur[:0], m.ID...)
	return bytes.Equal(p.cur, id)
}
