package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/ordering"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// crashEndpoints are the receiver's paths: a client's endpoint (its own
// orders) and the operator's (every account's).
const (
	crashClientHook   = "/client"
	crashOperatorHook = "/ops"
	crashHookClient   = "crash-0"
)

// CrashEvent is what one delivery reports: an order reached a status.
type CrashEvent struct{ order, typ string }

// CrashReceiver is a webhook receiver on 127.0.0.1 that outlives the
// killed servers. It verifies every signature with the Standard Webhooks
// library, answers every tenth first attempt with 500 (so retries, which
// must keep the webhook-id, are in flight when the server dies), and
// remembers which event each webhook-id carried.
type CrashReceiver struct {
	Srv *httptest.Server

	mu                             sync.Mutex
	Secrets                        map[string]string
	Got                            map[string]map[string]CrashEvent // path -> webhook-id -> event
	Refusals                       map[string]bool                  // path + webhook-id answered 500 once
	delivered, duplicates, refused int
	failures                       []string
}

// CrashReceipt sums up what the receiver saw.
type CrashReceipt struct{ Delivered, Distinct, Duplicates, Refused int }

// Serve receives one delivery: it checks the signature and the event,
// and records it.
func (r *CrashReceiver) Serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	fail := func(format string, args ...any) {
		r.failures = append(r.failures, req.URL.Path+": "+fmt.Sprintf(format, args...))
		w.WriteHeader(http.StatusBadRequest)
	}
	if err != nil {
		w.WriteHeader(http.StatusBadRequest) // the sender was killed mid-body
		return
	}
	if err := VerifyDelivery(r.Secrets, req, body); err != nil {
		fail("the signature of %s does not verify: %v", req.Header.Get("webhook-id"), err)
		return
	}
	var msg struct {
		Type string `json:"type"`
		Data struct{ ID, Status string }
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Type != crashEventOf(msg.Data.Status) {
		fail("event %q with an order in %q: %v", msg.Type, msg.Data.Status, err)
		return
	}
	id, e := req.Header.Get("webhook-id"), CrashEvent{msg.Data.ID, msg.Type}
	if !r.Refusals[req.URL.Path+id] && len(id) > 0 && id[len(id)-1]%10 == 0 {
		r.Refusals[req.URL.Path+id] = true
		r.refused++
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.record(req.URL.Path, id, e)
	w.WriteHeader(http.StatusNoContent)
}

// VerifyDelivery checks a delivery's Standard Webhooks signature with the
// secret of the endpoint its path stands for.
func VerifyDelivery(secrets map[string]string, req *http.Request, body []byte) error {
	wh, err := standardwebhooks.NewWebhook(secrets[req.URL.Path])
	if err != nil {
		return err
	}
	return wh.Verify(body, req.Header)
}

func (r *CrashReceiver) record(path, id string, e CrashEvent) {
	r.delivered++
	seen := r.Got[path]
	if seen == nil {
		seen = map[string]CrashEvent{}
		r.Got[path] = seen
	}
	if prev, ok := seen[id]; ok {
		r.duplicates++
		if prev != e {
			r.failures = append(r.failures, fmt.Sprintf("%s: webhook-id %s carried %v and %v", path, id, prev, e))
		}
		return
	}
	seen[id] = e
}

// crashEventOf is the event type of reaching status.
func crashEventOf(status string) string {
	if status == companydocs.OrderStatusPreviewReady {
		return ordering.EventOrderCreated
	}
	return "order." + strings.ToLower(status)
}

// RegisterWebhooks registers the client's and the operator's endpoints.
func (s *CrashServer) RegisterWebhooks(t *testing.T, r *CrashReceiver, keys map[string]string) {
	t.Helper()
	tokens := s.Login(t, keys)
	for path, account := range map[string]string{crashClientHook: crashHookClient, crashOperatorHook: CrashOperator} {
		var ep companydocs.WebhookEndpoint
		body := fmt.Sprintf(`{"url":%q}`, r.Srv.URL+path)
		if status := s.Post(t, "/api/v1/webhooks/", tokens[account], body, "", &ep); status != http.StatusCreated || ep.Secret == "" {
			t.Fatalf("register %s for %s: status %d", path, account, status)
		}
		r.mu.Lock()
		r.Secrets[path] = ep.Secret
		r.mu.Unlock()
	}
}

// crashExpected is every event the endpoints must get: one per history
// entry, the client's endpoint only for its account's orders.
func crashExpected(orders map[string]*companydocs.Order) map[string]map[CrashEvent]bool {
	want := map[string]map[CrashEvent]bool{crashClientHook: {}, crashOperatorHook: {}}
	for id, o := range orders {
		for _, h := range o.History {
			e := CrashEvent{id, crashEventOf(h.Status)}
			want[crashOperatorHook][e] = true
			if o.Account == crashHookClient {
				want[crashClientHook][e] = true
			}
		}
	}
	return want
}

// WaitForAll waits until both endpoints got every event of orders (the
// deadline only guards against a hang), then checks that they got
// nothing else and that no event came under two webhook-ids.
func (r *CrashReceiver) WaitForAll(t *testing.T, orders map[string]*companydocs.Order) {
	t.Helper()
	want := crashExpected(orders)
	deadline := time.Now().Add(crashDrainLimit)
	for {
		missing := r.missing(want)
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(missing)
			t.Fatalf("%d committed events never arrived, e.g. %v", len(missing), missing[:min(len(missing), 10)])
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for path, seen := range r.Got {
		ids := map[CrashEvent]string{}
		for id, e := range seen {
			if !want[path][e] {
				t.Errorf("%s got %v, which is not in the committed histories", path, e)
			}
			if prev, ok := ids[e]; ok {
				t.Errorf("%s got %v under two webhook-ids, %s and %s", path, e, prev, id)
			}
			ids[e] = id
		}
	}
	for _, f := range r.failures {
		t.Error(f)
	}
}

// missing lists the wanted events not received yet.
func (r *CrashReceiver) missing(want map[string]map[CrashEvent]bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for path, events := range want {
		have := map[CrashEvent]bool{}
		for _, e := range r.Got[path] {
			have[e] = true
		}
		for e := range events {
			if !have[e] {
				out = append(out, path+" "+e.order+" "+e.typ)
			}
		}
	}
	return out
}

// Report sums up the deliveries received so far.
func (r *CrashReceiver) Report() CrashReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, seen := range r.Got {
		n += len(seen)
	}
	return CrashReceipt{Delivered: r.delivered, Distinct: n, Duplicates: r.duplicates, Refused: r.refused}
}
