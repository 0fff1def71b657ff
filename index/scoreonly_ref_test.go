package index

import (
	"context"

	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/blevesearch/bleve/v2/search/scorer"
	bindex "github.com/blevesearch/bleve_index_api"
)

// scoreOnlyTerm is the bleve term query a textQuery's score clause stands
// for: its matches score like a term match of frequency one in a field of
// typical length. With it, referenceQuery expresses a textQuery in bleve's
// own searchers, against which the tests check textSearcher.
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

// referenceQuery returns the bleve BooleanQuery that q scores like.
func referenceQuery(q *textQuery) query.Query {
	var should []query.Query
	for _, g := range q.score {
		should = append(should, scoreOnlyDisjunction(g))
	}
	var drive query.Query
	if len(q.drive) == 1 {
		drive = disjunction(q.drive[0])
	} else {
		groups := make([]query.Query, len(q.drive))
		for i, g := range q.drive {
			groups[i] = disjunction(g)
			if len(g) == 1 {
				groups[i] = term(g[0].field, g[0].value, g[0].boost)
			}
		}
		drive = query.NewDisjunctionQuery(groups)
	}
	bq := query.NewBooleanQuery([]query.Query{drive}, should, nil)
	if len(q.exclude) > 0 {
		bq.AddMustNot(scoreOnlyDisjunction(q.exclude))
	}
	if len(q.filter) > 0 {
		bq.AddFilter(scoreOnlyDisjunction(q.filter))
	}
	return bq
}

func scoreOnlyDisjunction(clauses []clause) query.Query {
	out := make([]query.Query, len(clauses))
	for i, c := range clauses {
		out[i] = scoreOnlyQuery(c.field, c.value, c.boost)
	}
	return query.NewDisjunctionQuery(out)
}

// disjunction returns the bleve query matching any of the clauses.
func disjunction(clauses []clause) query.Query {
	out := make([]query.Query, len(clauses))
	for i, c := range clauses {
		out[i] = term(c.field, c.value, c.boost)
	}
	return query.NewDisjunctionQuery(out)
}

func term(field, value string, boost float64) query.Query {
	tq := query.NewTermQuery(value)
	tq.SetField(field)
	tq.SetBoost(boost)
	return tq
}
