package index

import (
	"context"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
)

// typicalNorm returns the field norm (1/sqrt of the field's token count) a
// scoreOnlyTerm match in field is scored with: that of a seat of one token,
// of a name of three, of four tokens in the other fields (an address, two
// officers).
func typicalNorm(field string) float64 {
	switch field {
	case fieldSeat, fieldSeatKey, fieldNameKey, fieldNameBase, fieldCourt, fieldSource:
		return 1
	case fieldName, fieldNamePlain, fieldNameForm, fieldPhonetic:
		return 0.577
	}
	return 0.5
}

// scoreOnlyTerm is a term query for clauses that only add to the score of
// hits another clause found (the common name words and the city). Its
// matches score like a bleve term match of frequency one in a field of
// typical length, so it reads no frequencies or norms: without them zap
// jumps to the next hit in the term's bitmap, while with them it steps
// through every posting before it (the larger part of a search's CPU when
// the term is common). The cost is that the score of these clauses ignores
// the length of the matched name, which only the required clauses weigh.
type scoreOnlyTerm struct {
	field, term string
	boost       float64
}

// scoreOnlyQuery is the scoreOnlyTerm counterpart of term.
func scoreOnlyQuery(field, value string, boost float64) query.Query {
	return &scoreOnlyTerm{field: field, term: value, boost: boost}
}

// Searcher implements query.Query.
func (q *scoreOnlyTerm) Searcher(ctx context.Context, r bindex.IndexReader, _ mapping.IndexMapping, opts bsearch.SearcherOptions) (bsearch.Searcher, error) {
	reader, err := r.TermFieldReader(ctx, []byte(q.term), q.field, false, false, false)
	if err != nil {
		return nil, err
	}
	docs, err := r.DocCount()
	if err != nil {
		reader.Close()
		return nil, err
	}
	sc := scorer.NewTermQueryScorer([]byte(q.term), q.field, q.boost, docs, reader.Count(), 0, opts)
	return &scoreOnlySearcher{reader: reader, scorer: sc, norm: typicalNorm(q.field)}, nil
}

// scoreOnlySearcher walks the postings of a scoreOnlyTerm.
type scoreOnlySearcher struct {
	reader bindex.TermFieldReader
	scorer *scorer.TermQueryScorer
	tfd    bindex.TermFieldDoc
	norm   float64
}

func (s *scoreOnlySearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	m, err := s.reader.Next(s.tfd.Reset())
	return s.score(ctx, m, err)
}

func (s *scoreOnlySearcher) Advance(ctx *bsearch.SearchContext, id bindex.IndexInternalID) (*bsearch.DocumentMatch, error) {
	m, err := s.reader.Advance(id, s.tfd.Reset())
	return s.score(ctx, m, err)
}

func (s *scoreOnlySearcher) score(ctx *bsearch.SearchContext, m *bindex.TermFieldDoc, err error) (*bsearch.DocumentMatch, error) {
	if err != nil || m == nil {
		return nil, err
	}
	m.Freq, m.Norm = 1, s.norm
	return s.scorer.Score(ctx, m), nil
}

func (s *scoreOnlySearcher) Close() error               { return s.reader.Close() }
func (s *scoreOnlySearcher) Weight() float64            { return s.scorer.Weight() }
func (s *scoreOnlySearcher) SetQueryNorm(qnorm float64) { s.scorer.SetQueryNorm(qnorm) }
func (s *scoreOnlySearcher) Count() uint64              { return s.reader.Count() }
func (s *scoreOnlySearcher) Min() int                   { return 0 }
func (s *scoreOnlySearcher) DocumentMatchPoolSize() int { return 1 }
func (s *scoreOnlySearcher) Size() int                  { return s.reader.Size() + s.scorer.Size() }
