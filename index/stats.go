package index

import (
	"context"
	"fmt"

	bindex "github.com/blevesearch/bleve_index_api"
)

// A token in more than max(minCommonDocs, documents/commonDivisor) documents
// of a field is common: "&", "fuer", "bau", "service". Matching a common
// name token alone would make a query walk tens of thousands of postings, so
// common tokens only add to the score of hits that match a rare token (or
// the whole name); a query of common tokens only still matches them all.
// Fuzzy expansion is skipped for common tokens: they are spelled right, and
// their neighbours in the dictionary are common too.
const (
	minCommonDocs = 1000
	commonDivisor = 50
)

// A name token found in at least fuzzySkipDocs names is taken as spelled
// right in standard mode: building the Levenshtein automaton of every token
// costs more than the rest of a typical search. Deep mode expands every
// token that is not common.
const fuzzySkipDocs = 5

// termStats reads document frequencies from one snapshot of the index.
type termStats struct {
	ctx    context.Context
	r      bindex.IndexReader
	common uint64
}

func (g *Generation) newTermStats(ctx context.Context) (*termStats, error) {
	adv, err := g.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index reader: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("index reader: %w", err)
	}
	docs, err := r.DocCount()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("document count: %w", err)
	}
	return &termStats{ctx: ctx, r: r, common: max(minCommonDocs, docs/commonDivisor)}, nil
}

func (s *termStats) close() {
	if s != nil {
		s.r.Close()
	}
}

// docFreq returns the number of documents holding term in field; 0 when
// unknown.
func (s *termStats) docFreq(field, term string) uint64 {
	if s == nil {
		return 0
	}
	tfr, err := s.r.TermFieldReader(s.ctx, []byte(term), field, false, false, false)
	if err != nil {
		return 0
	}
	defer tfr.Close()
	return tfr.Count()
}

func (s *termStats) isCommon(field, term string) bool {
	return s.docFreq(field, term) > s.threshold()
}

func (s *termStats) threshold() uint64 {
	if s == nil {
		return ^uint64(0)
	}
	return s.common
}

// splitCommon separates common name tokens from the rest. When every token
// is common, all of them are returned as rare, so that they still match.
func (s *termStats) splitCommon(terms []string) (rare, common []string) {
	for _, t := range terms {
		if s.isCommon(fieldName, t) {
			common = append(common, t)
		} else {
			rare = append(rare, t)
		}
	}
	if len(rare) == 0 {
		return common, nil
	}
	return rare, common
}

// fuzzyWorthwhile reports whether a name token should also be matched with
// typos.
func (s *termStats) fuzzyWorthwhile(term string, deep bool) bool {
	df := s.docFreq(fieldName, term)
	if df > s.threshold() {
		return false
	}
	return deep || s == nil || df+s.docFreq(fieldNamePlain, term) < fuzzySkipDocs
}
