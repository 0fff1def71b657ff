package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/metrics"
	"companydocs/resolver"
)

// failingSearcher answers on the real fixture profiles but fails, with
// service_unavailable, each query holding "down" the first time it sees
// it, as an index that is not ready or a search past its deadline does.
type failingSearcher struct {
	fuzzSearcher
	mu   sync.Mutex
	seen map[string]bool
}

func (f *failingSearcher) Search(ctx context.Context, req resolver.Request) (*resolver.Result, error) {
	f.mu.Lock()
	failed := f.seen[req.Query]
	f.seen[req.Query] = true
	f.mu.Unlock()
	if strings.Contains(req.Query, "down") && !failed {
		return nil, companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.search_too_slow", nil)
	}
	return f.fuzzSearcher.Search(ctx, req)
}

// chargeServer has a search budget of burst queries (refilled at one an
// hour, so the test sees what was taken) and fails "down" queries once.
func chargeServer(t *testing.T, burst int) (*Server, *metrics.Registry) {
	profiles, _, _ := loadOrderProfiles(t)
	cfg := DefaultConfig()
	cfg.SearchRate, cfg.SearchBurst = 1.0/3600, burst
	cfg.TrustedProxies = []string{"0.0.0.0"}
	m := metrics.New()
	return newTestServerWith(t, cfg, Deps{Searcher: &failingSearcher{fuzzSearcher: fuzzSearcher{fuzzIndex{profiles}}, seen: map[string]bool{}}, Metrics: m.HTTP}), m
}

// mixedBatch is a batch of answered queries and queries the service
// fails once ("down"), and one the client got wrong (empty).
func mixedBatch(answered, down int) string {
	var items []string
	for i := range answered {
		items = append(items, fmt.Sprintf(`{"query":"Müller Bau GmbH %d"}`, i))
	}
	for i := range down {
		items = append(items, fmt.Sprintf(`{"query":"down %d"}`, i))
	}
	items = append(items, `{"query":""}`)
	return `{"queries":[` + strings.Join(items, ",") + `]}`
}

// An item the service failed is not charged: a batch of 6 answered, 4
// failed and 1 invalid query takes 7 of a budget of 11, and the 4 may be
// sent again; the answer lists the items not charged.
func TestSearchBatchChargesWhatWasAnswered(t *testing.T) {
	s, m := chargeServer(t, 11)
	status, _, out := postBatchFrom(t, s, "10.0.0.1", mixedBatch(6, 4))
	if status != http.StatusOK || out["charged"] != 7.0 {
		t.Fatalf("a batch of 6 answered, 4 failed and 1 invalid: %d, charged %v; want 200, charged 7", status, out["charged"])
	}
	var failed []any
	for i, item := range out["results"].([]any) {
		if errorCode(item.(map[string]any)) == companydocs.EUNAVAILABLE {
			failed = append(failed, float64(i))
		}
	}
	if fmt.Sprint(out["not_charged"]) != fmt.Sprint(failed) || len(failed) != 4 {
		t.Errorf("not_charged %v, want the 4 items that failed: %v", out["not_charged"], failed)
	}
	if status, retry, out := postBatchFrom(t, s, "10.0.0.1", batchOf(4, `{"query":"Müller Bau GmbH"}`)); status != http.StatusOK {
		t.Errorf("the 4 left of the budget: %d, Retry-After %q, %v", status, retry, out)
	}
	if status, _, _ := postBatchFrom(t, s, "10.0.0.1", batchOf(1, `{"query":"Müller Bau GmbH"}`)); status != http.StatusTooManyRequests {
		t.Errorf("past the budget: %d, want 429", status)
	}
	if got := metricValue(t, m, "search_batch_charged_total", "charged", "false"); got != 4 {
		t.Errorf("search_batch_charged_total{charged=false} = %v, want 4", got)
	}
}

// A batch sent again with its Idempotency-Key is charged only for the
// items not charged before: the 4 failed the first time, now answered. A
// key used for another batch is refused, and charges nothing.
func TestSearchBatchRetriedWithItsKeyIsChargedOnce(t *testing.T) {
	s, _ := chargeServer(t, 20)
	batch, key := mixedBatch(6, 4), []string{"Idempotency-Key", "sheet-2026-11-28"}
	if _, _, out := postBatchFrom(t, s, "10.0.0.1", batch, key...); out["charged"] != 7.0 {
		t.Fatalf("first try: charged %v, want 7", out["charged"])
	}
	status, _, out := postBatchFrom(t, s, "10.0.0.1", batch, key...)
	if status != http.StatusOK || out["charged"] != 4.0 {
		t.Fatalf("the same batch again with its key: %d, charged %v; want 4 (the failed ones, answered now)", status, out["charged"])
	}
	if _, _, out := postBatchFrom(t, s, "10.0.0.1", batch, key...); out["charged"] != 0.0 {
		t.Errorf("a third time: charged %v, want 0", out["charged"])
	}
	status, _, out = postBatchFrom(t, s, "10.0.0.1", mixedBatch(5, 0), key...)
	if status != http.StatusUnprocessableEntity || errorCode(out) != companydocs.EVALIDATION {
		t.Errorf("the key with another batch: %d %v, want 422 validation_error", status, out)
	}
	// 11 of 20 taken: a batch of 9 passes, then nothing
	if status, _, out := postBatchFrom(t, s, "10.0.0.1", batchOf(9, `{"query":"Bau"}`)); status != http.StatusOK {
		t.Errorf("the 9 left: %d %v", status, out)
	}
	if status, _, _ := postBatchFrom(t, s, "10.0.0.1", batchOf(1, `{"query":"Bau"}`)); status != http.StatusTooManyRequests {
		t.Errorf("past the budget: %d, want 429", status)
	}
	// another address's key of the same name is its own
	if _, _, out := postBatchFrom(t, s, "10.0.0.2", mixedBatch(5, 0), key...); out["charged"] != 6.0 {
		t.Errorf("another address with the same key: charged %v, want 6", out["charged"])
	}
}
