package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// oneTask is a store holding one delivery, to watch single attempts.
type oneTask struct {
	mu      sync.Mutex
	task    *companydocs.WebhookTask
	results chan companydocs.WebhookResult
}

func (s *oneTask) FanOutEvents(int) (int, error) { return 0, nil }
func (s *oneTask) DueWebhooks(time.Time, func(string) bool, int) ([]companydocs.WebhookTask, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.task == nil {
		return nil, time.Time{}, nil
	}
	t := *s.task
	s.task = nil
	return []companydocs.WebhookTask{t}, time.Time{}, nil
}
func (s *oneTask) RecordWebhookAttempt(r companydocs.WebhookResult) error {
	s.results <- r
	return nil
}
func (s *oneTask) PendingWebhooks() (int, error)        { return 0, nil }
func (s *oneTask) OutboxStats() (int, time.Time, error) { return 0, time.Time{}, nil }
func newTask(url string) *companydocs.WebhookTask {
	return &companydocs.WebhookTask{EndpointID: "wh_1", URL: url, Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", EventID: "evt_1",
		Body: []byte(`{"type":"order.paid"}`), Attempt: 1, CreatedAt: time.Now()}
}

func attemptOnce(t *testing.T, policy Policy, url string) companydocs.WebhookResult {
	t.Helper()
	return attemptWithin(t, policy, url, 5*time.Second)
}

// attemptWithin makes one attempt with the given timeout and returns
// what was recorded.
func attemptWithin(t *testing.T, policy Policy, url string, timeout time.Duration) companydocs.WebhookResult {
	t.Helper()
	store := &oneTask{task: newTask(url), results: make(chan companydocs.WebhookResult, 1)}
	d := New(store, Options{Policy: policy, Timeout: timeout})
	d.Start()
	defer d.Close()
	select {
	case r := <-store.results:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no attempt recorded")
	}
	return companydocs.WebhookResult{}
}

// TestRedirectIsNotFollowed: a 3xx is a failed attempt and its target
// is never called, so a public receiver cannot bounce us inside.
func TestRedirectIsNotFollowed(t *testing.T) {
	var followed atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Store(true) }))
	defer target.Close()
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer hop.Close()
	r := attemptOnce(t, Policy{AllowHTTP: true, AllowPrivate: true}, hop.URL)
	if r.State != companydocs.DeliveryPending || r.Attempt.StatusCode != 307 || !strings.Contains(r.Attempt.Error, "307") || followed.Load() {
		t.Errorf("after a redirect: %+v, followed %v", r, followed.Load())
	}
}

// TestSignedPerStandardWebhooks: the request verifies with the library
// and carries the event id as webhook-id.
func TestSignedPerStandardWebhooks(t *testing.T) {
	var verr atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wh, _ := standardwebhooks.NewWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
		body := make([]byte, r.ContentLength)
		r.Body.Read(body)
		if err := wh.Verify(body, r.Header); err != nil || r.Header.Get("webhook-id") != "evt_1" {
			verr.Store(err)
			w.WriteHeader(400)
		}
	}))
	defer srv.Close()
	if r := attemptOnce(t, Policy{AllowHTTP: true, AllowPrivate: true}, srv.URL); r.State != companydocs.DeliveryDelivered {
		t.Errorf("%+v, verify: %v", r, verr.Load())
	}
}

// TestNameResolvingInsideIsRefusedAtDial: "localhost" passes no name
// check at dial time; the address dialled is refused.
func TestNameResolvingInsideIsRefusedAtDial(t *testing.T) {
	var called atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Store(true) }))
	defer srv.Close()
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	r := attemptOnce(t, Policy{AllowHTTP: true}, url)
	if r.State != companydocs.DeliveryPending || !strings.Contains(r.Attempt.Error, "loopback") || called.Load() {
		t.Errorf("%+v, receiver called %v", r, called.Load())
	}
	if r := attemptOnce(t, Policy{}, srv.URL); !strings.Contains(r.Attempt.Error, "not https") {
		t.Errorf("http without --webhook-allow-http: %+v", r)
	}
}
