package e2e

import (
	"encoding/json"
	"io"
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

// Hit is one request a test receiver got.
type Hit struct {
	ID, Typ string
	Order   map[string]any
	status  int
}

// Receiver is a webhook receiver on 127.0.0.1. Each path is an endpoint
// with a behaviour; every request's signature is verified with the
// Standard Webhooks library against the secret the endpoint got.
type Receiver struct {
	t       *testing.T
	srv     *httptest.Server
	Down    atomic.Bool   // "down" paths answer 503 while set
	release chan struct{} // closed to free hanging requests

	Mu      sync.Mutex
	Secrets map[string]string
	modes   map[string]string
	Hits    map[string][]Hit
	Hanging map[string]int
}

// NewReceiver starts a webhook receiver, closed at the end of the test.
func NewReceiver(t *testing.T) *Receiver {
	r := &Receiver{t: t, release: make(chan struct{}), Secrets: map[string]string{}, modes: map[string]string{},
		Hits: map[string][]Hit{}, Hanging: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.free()
		r.srv.Close()
	})
	return r
}

func (r *Receiver) free() {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.Mu.Lock()
	secret, mode := r.Secrets[req.URL.Path], r.modes[req.URL.Path]
	r.Mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.t.Errorf("%s: signature of %s does not verify: %v", req.URL.Path, req.Header.Get("webhook-id"), err)
	}
	var msg struct {
		Type      string         `json:"type"`
		Timestamp time.Time      `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Timestamp.IsZero() {
		r.t.Errorf("%s: body %s: %v", req.URL.Path, body, err)
	}
	h := Hit{ID: req.Header.Get("webhook-id"), Typ: msg.Type, Order: msg.Data, status: 200}
	n := 1 + r.Attempts(req.URL.Path, h.ID)
	switch {
	case mode == "flaky" && n <= 2, mode == "down" && r.Down.Load():
		h.status = 500
	case mode == "slow" && n == 1 && r.firstHang(req.URL.Path), mode == "hang":
		r.Mu.Lock()
		r.Hanging[req.URL.Path]++
		r.Mu.Unlock()
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
		h.status = 0 // the sender gave up, or the test ended
	}
	r.Mu.Lock()
	r.Hits[req.URL.Path] = append(r.Hits[req.URL.Path], h)
	r.Mu.Unlock()
	if h.status != 0 {
		w.WriteHeader(h.status)
	}
}

// Attempts counts the deliveries with webhook-id id that path got.
func (r *Receiver) Attempts(path, id string) int {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	n := 0
	for _, h := range r.Hits[path] {
		if h.ID == id {
			n++
		}
	}
	return n
}

// firstHang reports whether path has not hung yet: the slow endpoint
// times out once, on its first event, so that a loaded machine's slow
// answers are not mistaken for it.
func (r *Receiver) firstHang(path string) bool {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return r.Hanging[path] == 0
}

// Count returns the number of requests path got.
func (r *Receiver) Count(path string) int {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	return len(r.Hits[path])
}

// Delivered returns the hits of path answered 2xx.
func (r *Receiver) Delivered(path string) []Hit {
	r.Mu.Lock()
	defer r.Mu.Unlock()
	var out []Hit
	for _, h := range r.Hits[path] {
		if h.status == 200 {
			out = append(out, h)
		}
	}
	return out
}

// Register creates an endpoint for path with the given behaviour.
func (r *Receiver) Register(t *testing.T, ts *TestServer, token, path, mode string) companydocs.WebhookEndpoint {
	t.Helper()
	var ep companydocs.WebhookEndpoint
	status, raw := ts.Call(t, "POST", "/api/v1/webhooks/", token, map[string]string{"url": r.srv.URL + path, "description": mode}, &ep)
	if status != http.StatusCreated || !strings.HasPrefix(ep.ID, "wh_") || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("register %s: %d %s", path, status, raw)
	}
	r.Mu.Lock()
	r.Secrets[path], r.modes[path] = ep.Secret, mode
	r.Mu.Unlock()
	return ep
}

// Eventually waits for cond; the deadline only guards against a hang.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SettledDeliveries waits until no delivery of the endpoint is pending
// (the receiver answers before the dispatcher records) and returns them.
func (s *TestServer) SettledDeliveries(t *testing.T, token, id string) []companydocs.WebhookDelivery {
	t.Helper()
	var res struct {
		Deliveries []companydocs.WebhookDelivery `json:"deliveries"`
	}
	Eventually(t, "the deliveries of "+id+" to settle", func() bool {
		res.Deliveries = nil
		s.Call(t, "GET", "/api/v1/webhooks/"+id+"/deliveries/", token, nil, &res)
		for _, d := range res.Deliveries {
			if d.State == companydocs.DeliveryPending {
				return false
			}
		}
		return true
	})
	return res.Deliveries
}
