package httpapi

import (
	"bufio"
	"context"
	"errors"
	"sync"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
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

// BatchResult is the answer to a batch of queries, its items in the order
// of the queries (the search batch writes its own as they come,
// streambatch.go).
type BatchResult struct {
	Results []BatchItem `json:"results"`
}

// handleSearchBatch resolves a batch: its slots are taken (admitBatch)
// before its body is read, the budget must cover its queries before they
// are resolved, and its answer is written as they are (writeBatch), which
// charges what was answered (batchcharge.go).
func (h batchHandlers) handleSearchBatch(c *fiber.Ctx) error {
	key := utils.CopyString(c.Get("Idempotency-Key"))
	if err := companydocs.CheckIdempotencyKey(key); err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	release, err := h.s.admitBatch(c)
	if err != nil {
		return err
	}
	job, err := h.batchJob(c, key)
	if err != nil {
		release()
		return err
	}
	job.release = release
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Vary(fiber.HeaderAcceptLanguage) // the items' errors are said in it
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { h.writeBatch(w, job) })
	return nil
}

// batchJob reads and decodes a batch's body and admits its queries on the
// client address's budget: those not charged before under key.
func (h batchHandlers) batchJob(c *fiber.Ctx, key string) (batchJob, error) {
	s := h.s
	if err := readBody(c, BatchBodyLimit); err != nil {
		return batchJob{}, err
	}
	queries, err := decodeBatch(c.Body())
	if err != nil {
		return batchJob{}, err
	}
	budget, err := s.searchBudgetOf(c)
	if err != nil {
		return batchJob{}, err
	}
	keyed, err := s.charged.recall(budget.id, key, c.Body(), len(queries))
	if err != nil {
		return batchJob{}, err
	}
	if err := s.admitSearches(c, budget, s.charged.uncharged(keyed, len(queries))); err != nil {
		return batchJob{}, err
	}
	job := batchJob{reqs: make([]resolver.Request, len(queries)), errs: make([]error, len(queries)), keyed: keyed,
		budget: budget, lang: messages.Pick(c.Get(fiber.HeaderAcceptLanguage))}
	for i, q := range queries {
		job.reqs[i], job.errs[i] = decodeSearch(q) // an item is a search body, refused in its words
	}
	return job, nil
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
// already holds one (a query that did not decode), server-wide at most
// batchCores queries of all batches at once (batchSlots), so that single
// searches keep the other half of the cores; what is not answered by
// ctx's deadline gets service_unavailable. It serves the routes that
// resolve a batch in another shape too (reconciliation).
func (s *Server) SearchAll(ctx context.Context, reqs []resolver.Request, errs []error) BatchResult {
	out := BatchResult{Results: make([]BatchItem, len(reqs))}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(cap(s.batchSlots), len(reqs)) {
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
