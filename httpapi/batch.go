package httpapi

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"
)

// Bounds of a search batch. MaxBatchQueries is what a spreadsheet of
// companies sends at once; BatchBodyLimit holds that many queries of
// MaxQueryRunes characters of mostly two-byte German text, each with
// every property filled (1,000 × 2,000 × 3 bytes plus properties stays
// under 8 MiB), where every other JSON route is held to Config.BodyLimit.
const (
	MaxBatchQueries = 1000
	BatchBodyLimit  = 8 << 20
)

// routeSearchBatch is the path of the batch search.
const routeSearchBatch = "/api/v1/documents/companies/search/batch"

// batchBody is the envelope of a batch; each query is decoded on its own
// (decodeSearch) so that one bad item does not refuse the others.
type batchBody struct {
	Queries []jsontext.Value `json:"queries"`
}

// BatchItem is one answer of a batch: the search's answer, or the error
// that one query got, in the error body's shape.
type BatchItem struct {
	*resolver.Result
	Error *ItemError `json:"error,omitempty"`
}

// ItemError is the error of one query of a batch.
type ItemError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	err     error  // as refused, for a caller that answers it whole
}

// BatchResult is the answer to a batch, its items in the order of the
// queries.
type BatchResult struct {
	Results []BatchItem `json:"results"`
}

func (s *Server) handleSearchBatch(c *fiber.Ctx) error {
	if ct := c.Get(fiber.HeaderContentType); ct != "" && !isJSONType(ct) {
		return invalidQuery("refusal.body_not_json_type", nil)
	}
	queries, err := decodeBatch(c.Body())
	if err != nil {
		return err
	}
	if err := s.limitSearches(c, len(queries)); err != nil {
		return err
	}
	reqs := make([]resolver.Request, len(queries))
	errs := make([]error, len(queries))
	for i, q := range queries {
		reqs[i], errs[i] = decodeSearch(q) // an item is a search body, refused in its words
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.config.BatchTimeout)
	defer cancel()
	res := s.SearchAll(ctx, reqs, errs)
	s.Metrics.observeBatch(res)
	res.sayErrorsIn(messages.Pick(c.Get(fiber.HeaderAcceptLanguage)))
	c.Vary(fiber.HeaderAcceptLanguage) // the items' errors are said in it
	return c.JSON(res)
}

// decodeBatch reads the envelope of a batch: an object whose queries hold
// 1 to MaxBatchQueries items. A malformed envelope is invalid_query, as a
// malformed search is; the items are decoded later, one by one.
func decodeBatch(body []byte) ([]jsontext.Value, error) {
	var b batchBody
	if r := decodeObjectAllowing(body, &b, `"queries"`, lineSeparator); r != nil {
		return nil, r.as(companydocs.EINVALIDQUERY)
	}
	switch {
	case b.Queries == nil:
		return nil, invalidQuery("refusal.batch_queries_missing", nil)
	case len(b.Queries) == 0:
		return nil, invalidQuery("refusal.batch_queries_empty", companydocs.Args{"max": MaxBatchQueries})
	case len(b.Queries) > MaxBatchQueries:
		return nil, invalidQuery("refusal.batch_too_many", companydocs.Args{"count": len(b.Queries), "max": MaxBatchQueries})
	}
	return b.Queries, nil
}

// SearchAll answers reqs in order, each with its own error where errs
// already holds one (a query that did not decode), on at most as many
// goroutines as there are cores, and server-wide at most as many batch
// queries at once as there are cores (batchSlots), so that batches from
// many clients leave single searches their share; what is not answered
// by ctx's deadline gets service_unavailable. It serves the routes that
// resolve a batch in another shape too (reconciliation).
func (s *Server) SearchAll(ctx context.Context, reqs []resolver.Request, errs []error) BatchResult {
	out := BatchResult{Results: make([]BatchItem, len(reqs))}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(reqs)) {
		wg.Go(func() {
			for i := range next {
				out.Results[i] = s.searchItem(ctx, reqs[i], errs[i])
			}
		})
	}
	for i := range reqs {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// searchItem answers one query of a batch.
func (s *Server) searchItem(ctx context.Context, req resolver.Request, err error) BatchItem {
	if err != nil {
		return itemError(err)
	}
	select {
	case s.batchSlots <- struct{}{}:
		defer func() { <-s.batchSlots }()
	case <-ctx.Done():
		return itemError(errBatchTooLong)
	}
	ctx, cancel := context.WithTimeout(ctx, s.config.SearchTimeout)
	defer cancel()
	res, err := s.Searcher.Search(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return itemError(errBatchTooLong)
	} else if err != nil {
		if companydocs.ErrorCode(err) == companydocs.EINTERNAL {
			s.logger.Error("batch search failed", "error", err)
		}
		return itemError(err)
	}
	if s.OnSearch != nil {
		s.OnSearch(res)
	}
	return BatchItem{Result: res}
}

var errBatchTooLong = companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.batch_item_late", nil)

// itemError is err in the error body's shape, its message said later in
// the language of the request (sayErrorsIn).
func itemError(err error) BatchItem {
	return BatchItem{Error: &ItemError{Code: companydocs.ErrorCode(err), err: err}}
}

// sayErrorsIn says the items' errors in lang, the language the batch's
// request asked for, as a single search's error is said; an error that is
// no *companydocs.Error is internal and its text is not shown.
func (r BatchResult) sayErrorsIn(lang string) {
	for _, item := range r.Results {
		if item.Error != nil {
			item.Error.Message, _ = companydocs.ErrorMessageIn(item.Error.err, lang)
		}
	}
}
