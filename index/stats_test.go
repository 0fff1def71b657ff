package index

import (
	"context"
	"errors"
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
