package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/messages"
	"companydocs/metrics"
	"companydocs/resolver"
)

const batchPath = "/api/v1/documents/companies/search/batch"

// batchServer serves searches resolved on the real fixture profiles with
// the given search budget (rate per second, burst).
func batchServer(tb testing.TB, rate float64, burst int) (*Server, *metrics.Registry) {
	tb.Helper()
	profiles, _, _ := loadOrderProfiles(tb)
	cfg := DefaultConfig()
	cfg.SearchRate, cfg.SearchBurst = rate, burst
	m := metrics.New()
	return newTestServerWith(tb, cfg, Deps{Searcher: fuzzSearcher{fuzzIndex{profiles}}, Metrics: m.HTTP}), m
}

// postBatch sends body to the batch route and returns the status, the
// Retry-After header and the decoded body.
func postBatch(tb testing.TB, s *Server, body string) (int, string, map[string]any) {
	tb.Helper()
	return postBatchIn(tb, s, body, "")
}

// postBatchIn posts a batch asking for the answer in acceptLanguage.
func postBatchIn(tb testing.TB, s *Server, body, acceptLanguage string) (int, string, map[string]any) {
	tb.Helper()
	req := httptest.NewRequest(http.MethodPost, batchPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		tb.Fatalf("body %.200q is not a JSON object: %v", raw, err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// batchOf builds a batch of n copies of one query object.
func batchOf(n int, item string) string {
	return `{"queries":[` + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`
}

func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// A batch of n takes n from the address's search budget: with a burst of
// 5, a batch of 5 passes, the next single search is refused with a
// Retry-After, and a batch larger than the burst is admitted on a full
// bucket but makes the address wait for all it took.
func TestSearchBatchIsChargedPerQuery(t *testing.T) {
	s, m := batchServer(t, 1, 5)
	item := `{"query":"Müller Bau GmbH"}`
	if status, _, body := postBatch(t, s, batchOf(5, item)); status != http.StatusOK {
		t.Fatalf("a batch of 5 on a budget of 5: status %d, %v", status, body)
	}
	status, retry, body := postBatch(t, s, batchOf(1, item))
	if status != http.StatusTooManyRequests || errorCode(body) != companydocs.ERATELIMITED || retry == "" {
		t.Fatalf("after a batch of 5 on a budget of 5: status %d, Retry-After %q, %v; want 429 rate_limited", status, retry, body)
	}
	if n := metricValue(t, m, "search_rate_limited_total"); n != 1 {
		t.Errorf("search_rate_limited_total = %v, want 1", n)
	}

	big, _ := batchServer(t, 1, 5)
	if status, _, body := postBatch(t, big, batchOf(20, item)); status != http.StatusOK {
		t.Fatalf("a batch of 20 on a full bucket of 5: status %d, %v", status, body)
	}
	_, retry, _ = postBatch(t, big, batchOf(1, item))
	if secs, _ := strconv.Atoi(retry); secs < 15 {
		t.Fatalf("after a batch of 20 at 1 search/s with a burst of 5, Retry-After is %q; want at least 15 s (the 15 borrowed)", retry)
	}
}

// An invalid item gets its own error in the error body's shape; the
// others are answered, in order.
func TestSearchBatchAnswersEachItem(t *testing.T) {
	s, m := batchServer(t, 0, 0)
	body := `{"queries":[{"query":"Müller Bau GmbH"},{"query":""},{"query":"Bau","mode":"fast"},{"query":"Bau","properties":{"town":"Köln"}},{"query":"Bau","limit":3,"properties":{"city":"Köln"}},7]}`
	status, _, out := postBatch(t, s, body)
	if status != http.StatusOK {
		t.Fatalf("status %d, %v", status, out)
	}
	results, _ := out["results"].([]any)
	if len(results) != 6 {
		t.Fatalf("%d results for 6 queries: %v", len(results), out)
	}
	wantError := []bool{false, true, true, true, false, true}
	for i, r := range results {
		item := r.(map[string]any)
		_, hasCandidates := item["candidates"]
		if code := errorCode(item); wantError[i] != (code == companydocs.EINVALIDQUERY) || wantError[i] == hasCandidates {
			t.Errorf("item %d = %v; want error %v", i, item, wantError[i])
		}
	}
	msg := results[3].(map[string]any)["error"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "town") {
		t.Errorf("the unknown property's message %q does not name it", msg)
	}
	if n := metricValue(t, m, "search_batch_items_total", "outcome", companydocs.EINVALIDQUERY); n != 4 {
		t.Errorf("search_batch_items_total{outcome=invalid_query} = %v, want 4", n)
	}
	if n := metricValue(t, m, "search_batch_items_total", "outcome", "answered"); n != 2 {
		t.Errorf("search_batch_items_total{outcome=answered} = %v, want 2", n)
	}
}

// An item's error is said in the language the batch asked for, as a
// single search's is.
func TestSearchBatchItemErrorsInTheRequestsLanguage(t *testing.T) {
	s, _ := batchServer(t, 0, 0)
	for _, lang := range []string{messages.English, messages.German} {
		_, _, out := postBatchIn(t, s, `{"queries":[{"mode":"fast"}]}`, lang)
		results, _ := out["results"].([]any)
		if len(results) != 1 {
			t.Fatalf("%s: %v", lang, out)
		}
		msg, _ := results[0].(map[string]any)["error"].(map[string]any)["message"].(string)
		if want := messages.Say(lang, "refusal.search_query_missing", nil); msg != want {
			t.Errorf("%s: item error %q, want %q", lang, msg, want)
		}
	}
}

// A malformed envelope is invalid_query with a sentence; an empty batch,
// one over the bound and a body over the batch's size cap are refused.
func TestSearchBatchRefusesMalformedEnvelopes(t *testing.T) {
	s, _ := batchServer(t, 0, 0)
	for _, body := range []string{
		``, `[]`, `{"queries":[]}`, `{"queries":{"query":"Bau"}}`, `{"query":"Bau"}`, `{"queries":[{"query":"Bau"}],"mode":"deep"}`,
		batchOf(MaxBatchQueries+1, `{"query":"Bau"}`),
	} {
		status, _, out := postBatch(t, s, body)
		if status != http.StatusBadRequest || errorCode(out) != companydocs.EINVALIDQUERY {
			t.Errorf("%.60s: status %d, %v; want 400 invalid_query", body, status, out)
		}
	}
	if status, _, out := postBatch(t, s, batchOf(MaxBatchQueries, `{"query":"Bau"}`)); status != http.StatusOK || len(out["results"].([]any)) != MaxBatchQueries {
		t.Errorf("a batch of %d: status %d", MaxBatchQueries, status)
	}
	long := `{"query":"` + strings.Repeat("ä", resolver.MaxQueryRunes) + `"}`
	if len(batchOf(MaxBatchQueries, long)) > BatchBodyLimit {
		t.Fatalf("%d queries of %d two-byte characters (%d bytes) do not fit the batch's cap of %d bytes",
			MaxBatchQueries, resolver.MaxQueryRunes, len(batchOf(MaxBatchQueries, long)), BatchBodyLimit)
	}
	big := batchOf(200, `{"query":"`+strings.Repeat("ä", resolver.MaxQueryRunes-4)+` Bau"}`)
	if status, _, out := postBatch(t, s, big); status != http.StatusOK || len(out["results"].([]any)) != 200 {
		t.Errorf("a batch of %d bytes, over the other routes' 64 KiB: status %d", len(big), status)
	}
	over := fmt.Sprintf(`{"queries":[{"query":"%s"}]}`, strings.Repeat("a", BatchBodyLimit))
	if status, _, out := postBatch(t, s, over); status != http.StatusRequestEntityTooLarge || errorCode(out) != companydocs.ETOOLARGE {
		t.Errorf("a body over the batch's cap: status %d, %v; want 413", status, out)
	}
	single := fmt.Sprintf(`{"query":"%s"}`, strings.Repeat("a", 70<<10))
	req := httptest.NewRequest(http.MethodPost, "/api/v1/documents/companies/search/", strings.NewReader(single))
	if resp, err := s.app.Test(req, -1); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a single search of 70 KiB is not refused by the 64 KiB cap: %v %v", resp.StatusCode, err)
	}
}

// The single search decodes properties too: an unknown name, a value
// that is no string, a properties field that is no object are each
// invalid_query naming what is wrong; known properties are accepted.
func TestSearchDecodesProperties(t *testing.T) {
	s, _ := batchServer(t, 0, 0)
	for body, says := range map[string]string{
		`{"query":"Bau","properties":{"town":"Köln"}}`:                                                        "town",
		`{"query":"Bau","properties":{"city":50667}}`:                                                         "city",
		`{"query":"Bau","properties":["Köln"]}`:                                                               "properties",
		`{"query":"Bau","properties":{"city":"Köln\u0007"}}`:                                                  "control",
		`{"query":"Bau","properties":{"officer":"` + strings.Repeat("x", resolver.MaxPropertyRunes+1) + `"}}`: "officer",
	} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/documents/companies/search/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(raw), companydocs.EINVALIDQUERY) || !strings.Contains(string(raw), says) {
			t.Errorf("%.80s: %d %s; want 400 invalid_query saying %s", body, resp.StatusCode, raw, says)
		}
	}
	req := httptest.NewRequest(http.MethodPost, "/api/v1/documents/companies/search/", strings.NewReader(
		`{"query":"Bau","properties":{"city":"Köln","postal_code":"50667","address":"Hohe Straße 1","court":"Köln","register_number":"HRB 1","lei":"","officer":"Erika Mustermann","legal_form":"GmbH"}}`))
	resp, err := s.app.Test(req, -1)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("every known property: %v %v", resp.StatusCode, err)
	}
}

// countingSearcher resolves on the real fixture profiles and records how
// many searches ran at once at most; while hold is open, searches wait
// for it to close.
type countingSearcher struct {
	fuzzSearcher
	hold      chan struct{}
	mu        sync.Mutex
	now, peak int
}

func (c *countingSearcher) Search(ctx context.Context, req resolver.Request) (*resolver.Result, error) {
	c.mu.Lock()
	c.now++
	c.peak = max(c.peak, c.now)
	c.mu.Unlock()
	defer func() { c.mu.Lock(); c.now--; c.mu.Unlock() }()
	if c.hold != nil {
		<-c.hold
	}
	time.Sleep(time.Millisecond) // long enough for the workers to overlap
	return c.fuzzSearcher.Search(ctx, req)
}

// postBatchFrom posts a batch as the client address addr (behind the
// trusted proxy the test server's requests come from).
func postBatchFrom(tb testing.TB, s *Server, addr, body string, headers ...string) (int, string, map[string]any) {
	tb.Helper()
	req := httptest.NewRequest(http.MethodPost, batchPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		tb.Fatalf("answer is not a JSON object: %v", err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

// sharingServer is a server whose client addresses come from
// X-Forwarded-For (the test requests' peer, 0.0.0.0, a trusted proxy),
// searching with counter.
func sharingServer(t *testing.T, counter *countingSearcher) *Server {
	profiles, _, _ := loadOrderProfiles(t)
	counter.fuzzSearcher = fuzzSearcher{fuzzIndex{profiles}}
	cfg := DefaultConfig()
	cfg.SearchRate = 0
	cfg.TrustedProxies = []string{"0.0.0.0"} // the test requests' peer
	return newTestServerWith(t, cfg, Deps{Searcher: counter})
}

// Batches from four addresses at once resolve no more queries at once
// than half the cores (at least one), and each is answered whole; while
// they run, a second batch of one of the addresses is refused 429 and a
// fifth address's 503, both with Retry-After and before their body is
// read; a single search is answered meanwhile.
func TestSearchBatchesShareTheCores(t *testing.T) {
	counter := &countingSearcher{hold: make(chan struct{})}
	s := sharingServer(t, counter)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			if status, _, out := postBatchFrom(t, s, fmt.Sprintf("10.0.0.%d", i), batchOf(50, `{"query":"Müller Bau GmbH"}`)); status != http.StatusOK || len(out["results"].([]any)) != 50 {
				t.Errorf("a batch of 50 among 4: status %d", status)
			}
		})
	}
	waitFor(t, "four batches running", func() bool { return s.batches.count() == 4 })
	for addr, want := range map[string]int{"10.0.0.1": http.StatusTooManyRequests, "10.0.0.9": http.StatusServiceUnavailable} {
		status, retry, out := postBatchFrom(t, s, addr, batchOf(1, `{"query":"Bau"}`))
		if status != want || retry != strconv.Itoa(batchRetryAfter) {
			t.Errorf("a batch from %s while four run: %d, Retry-After %q, %v; want %d with Retry-After", addr, status, retry, out, want)
		}
	}
	close(counter.hold)
	wg.Wait()
	if cores := batchCores(); counter.peak > cores || counter.peak == 0 {
		t.Errorf("%d batch searches ran at once, with %d for batches", counter.peak, cores)
	}
	if status, _, _ := postBatchFrom(t, s, "10.0.0.1", batchOf(1, `{"query":"Bau"}`)); status != http.StatusOK {
		t.Errorf("a batch after the others ended: %d", status)
	}
}

// count is the number of slots held in all.
func (s *slots[K]) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}
