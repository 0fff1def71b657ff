package app

import (
	"encoding/json"
	"fmt"
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

// hit is one request a test receiver got.
type hit struct {
	id, typ string
	order   map[string]any
	status  int
}

// receiver is a webhook receiver on 127.0.0.1. Each path is an endpoint
// with a behaviour; every request's signature is verified with the
// Standard Webhooks library against the secret the endpoint got.
type receiver struct {
	t       *testing.T
	srv     *httptest.Server
	down    atomic.Bool   // "down" paths answer 503 while set
	release chan struct{} // closed to free hanging requests

	mu      sync.Mutex
	secrets map[string]string
	modes   map[string]string
	hits    map[string][]hit
	hanging map[string]int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, release: make(chan struct{}), secrets: map[string]string{}, modes: map[string]string{},
		hits: map[string][]hit{}, hanging: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.free()
		r.srv.Close()
	})
	return r
}

func (r *receiver) free() {
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case <-r.release:
	default:
		close(r.release)
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	secret, mode := r.secrets[req.URL.Path], r.modes[req.URL.Path]
	r.mu.Unlock()
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
	h := hit{id: req.Header.Get("webhook-id"), typ: msg.Type, order: msg.Data, status: 200}
	n := 1 + r.attempts(req.URL.Path, h.id)
	switch {
	case mode == "flaky" && n <= 2, mode == "down" && r.down.Load():
		h.status = 500
	case mode == "slow" && n == 1 && r.firstHang(req.URL.Path), mode == "hang":
		r.mu.Lock()
		r.hanging[req.URL.Path]++
		r.mu.Unlock()
		select {
		case <-req.Context().Done():
		case <-r.release:
		}
		h.status = 0 // the sender gave up, or the test ended
	}
	r.mu.Lock()
	r.hits[req.URL.Path] = append(r.hits[req.URL.Path], h)
	r.mu.Unlock()
	if h.status != 0 {
		w.WriteHeader(h.status)
	}
}

func (r *receiver) attempts(path, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.hits[path] {
		if h.id == id {
			n++
		}
	}
	return n
}

// firstHang reports whether path has not hung yet: the slow endpoint
// times out once, on its first event, so that a loaded machine's slow
// answers are not mistaken for it.
func (r *receiver) firstHang(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hanging[path] == 0
}

// count returns the number of requests path got.
func (r *receiver) count(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.hits[path])
}

// delivered returns the hits of path answered 2xx.
func (r *receiver) delivered(path string) []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []hit
	for _, h := range r.hits[path] {
		if h.status == 200 {
			out = append(out, h)
		}
	}
	return out
}

// register creates an endpoint for path with the given behaviour.
func (r *receiver) register(t *testing.T, ts *testServer, token, path, mode string) companydocs.WebhookEndpoint {
	t.Helper()
	var ep companydocs.WebhookEndpoint
	status, raw := ts.call(t, "POST", "/api/v1/webhooks/", token, map[string]string{"url": r.srv.URL + path, "description": mode}, &ep)
	if status != http.StatusCreated || !strings.HasPrefix(ep.ID, "wh_") || !strings.HasPrefix(ep.Secret, "whsec_") {
		t.Fatalf("register %s: %d %s", path, status, raw)
	}
	r.mu.Lock()
	r.secrets[path], r.modes[path] = ep.Secret, mode
	r.mu.Unlock()
	return ep
}

// eventually waits for cond; the deadline only guards against a hang.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// event is what a receiver should see: the order, the event type and
// the status the payload shows.
type event struct{ order, typ, status string }

// seen reduces delivered hits to events, checking that each carries one
// webhook-id and that no id names two events.
func seen(t *testing.T, hits []hit) map[event]string {
	t.Helper()
	out := map[event]string{}
	ids := map[string]event{}
	for _, h := range hits {
		e := event{fmt.Sprint(h.order["id"]), h.typ, fmt.Sprint(h.order["status"])}
		if prev, ok := ids[h.id]; ok && prev != e {
			t.Errorf("webhook-id %s names %v and %v", h.id, prev, e)
		}
		ids[h.id] = e
		out[e] = h.id
	}
	return out
}

func webhookServer(t *testing.T, extra ...string) (*testServer, string) {
	return flowServer(t, append([]string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "1s",
		"--webhook-retry-base", "20ms"}, extra...)...)
}

// TestWebhooksEndToEnd drives orders through every transition over the
// API and checks what three receivers of the client, one of another
// client and one of an operator get: signed, with the payload of each
// transition, retried with the same webhook-id after a 500 and after a
// timeout, a client's endpoint only its own orders, the operator's all.
func TestWebhooksEndToEnd(t *testing.T) { forEachServerStore(t, testWebhooksEndToEnd) }

func testWebhooksEndToEnd(t *testing.T, storeFlags ...string) {
	ts, _ := webhookServer(t, storeFlags...)
	rcv := newReceiver(t)
	profile := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, other, op := ts.session(t, "acme", 10), ts.session(t, "other", 10), ts.operatorSession(t, "ops")
	acme := rcv.register(t, ts, client, "/acme", "ok")
	flaky := rcv.register(t, ts, client, "/acme-flaky", "flaky")
	slow := rcv.register(t, ts, client, "/acme-slow", "slow")
	rcv.register(t, ts, other, "/other", "ok")
	rcv.register(t, ts, op, "/ops", "ok")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"

	var want []event
	one := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "AD", "ad-single"))
	ts.act(t, 200, "POST", operator+one.ID+"/pay", op, nil)
	ts.act(t, 200, "POST", operator+one.ID+"/request", op, nil)
	ts.act(t, 200, "PUT", operator+one.ID+"/document", op, string(lifecyclePDF), "Content-Type", "application/pdf")
	want = append(want, event{one.ID, "order.created", "PREVIEW_READY"}, event{one.ID, "order.paid", "PAID"},
		event{one.ID, "order.requested", "REQUESTED"}, event{one.ID, "order.delivered", "DELIVERED"})
	credit := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "subscription-basic"))
	ts.act(t, 200, "POST", orders+credit.ID+"/cancel", client, nil)
	want = append(want, event{credit.ID, "order.created", "PREVIEW_READY"}, event{credit.ID, "order.paid", "PAID"},
		event{credit.ID, "order.cancelled", "CANCELLED"})
	failed := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "subscription-basic"))
	ts.act(t, 200, "POST", operator+failed.ID+"/fail", op, `{"reason":"The register does not answer."}`)
	want = append(want, event{failed.ID, "order.created", "PREVIEW_READY"}, event{failed.ID, "order.paid", "PAID"},
		event{failed.ID, "order.failed", "FAILED"})
	theirs := ts.act(t, 201, "POST", orders, other, orderJSON(profile, "AD", "ad-single"))
	wantOther := []event{{theirs.ID, "order.created", "PREVIEW_READY"}}

	for _, path := range []string{"/acme", "/acme-flaky", "/acme-slow", "/other", "/ops"} {
		n := len(want)
		switch path {
		case "/other":
			n = 1
		case "/ops":
			n = len(want) + 1
		}
		eventually(t, "the deliveries to "+path, func() bool { return len(seen(t, rcv.delivered(path))) >= n })
	}
	got := seen(t, rcv.delivered("/acme"))
	if len(got) != len(want) {
		t.Errorf("/acme got %d events, want %d: %v", len(got), len(want), got)
	}
	for _, e := range want {
		id, ok := got[e]
		if !ok {
			t.Errorf("/acme did not get %v", e)
		}
		for _, path := range []string{"/acme-flaky", "/acme-slow", "/ops"} {
			if other := seen(t, rcv.delivered(path))[e]; other != id {
				t.Errorf("%s got %v with webhook-id %q, /acme with %q", path, e, other, id)
			}
		}
	}
	if got := seen(t, rcv.delivered("/other")); len(got) != 1 || got[wantOther[0]] == "" {
		t.Errorf("/other got %v, want only its own %v", got, wantOther)
	}
	if _, ok := seen(t, rcv.delivered("/ops"))[wantOther[0]]; !ok {
		t.Errorf("the operator's endpoint did not get the other account's order")
	}
	checkPayload(t, ts, rcv, client, one.ID)
	checkRetries(t, ts, rcv, client, flaky.ID, slow.ID, len(want))
	checkWebhookRoutes(t, ts, client, other, acme.ID)
	if n, _ := ts.metric(t, "companydocs_webhook_deliveries_total", "outcome", "retry"); n < float64(2*len(want)) {
		t.Errorf("webhook_deliveries_total{retry} = %v, want at least %d", n, 2*len(want))
	}
	if n, _ := ts.metric(t, "companydocs_webhook_deliveries_total", "outcome", "delivered"); n < float64(4*len(want)) {
		t.Errorf("webhook_deliveries_total{delivered} = %v", n)
	}
	for _, name := range []string{"companydocs_outbox_events", "companydocs_outbox_oldest_event_age_seconds", "companydocs_webhook_deliveries_pending"} {
		if _, found := ts.metric(t, name); !found {
			t.Errorf("metric %s missing", name)
		}
	}
	eventually(t, "an empty outbox in the metrics", func() bool {
		n, found := ts.metric(t, "companydocs_outbox_events")
		return found && n == 0
	})
	rcv.mu.Lock()
	for path, secret := range rcv.secrets {
		if strings.Contains(ts.logs.String(), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("the secret of %s is in the log", path)
		}
	}
	rcv.mu.Unlock()
	ts.checkAgainstOpenAPI(t)
}

// checkPayload: the order.delivered payload is the order exactly as GET
// shows it (it is the last transition).
func checkPayload(t *testing.T, ts *testServer, rcv *receiver, client, id string) {
	t.Helper()
	var get map[string]any
	ts.call(t, "GET", "/api/v1/documents/orders/"+id, client, nil, &get)
	for _, h := range rcv.delivered("/acme") {
		if h.typ == "order.delivered" {
			a, _ := json.Marshal(h.order)
			b, _ := json.Marshal(get)
			if string(a) != string(b) {
				t.Errorf("order.delivered payload\n%s\nGET\n%s", a, b)
			}
			return
		}
	}
	t.Error("no order.delivered event")
}

// checkRetries: every event reached the flaky endpoint after two 500s,
// the slow one's first event after a timeout, each retry under the same
// webhook-id; the deliveries route tells the same story. (A loaded
// machine may add attempts: each answer must still arrive within the
// timeout, so the counts are lower bounds.)
func checkRetries(t *testing.T, ts *testServer, rcv *receiver, client, flaky, slow string, events int) {
	t.Helper()
	for _, h := range rcv.delivered("/acme-flaky") {
		if a := rcv.attempts("/acme-flaky", h.id); a < 3 {
			t.Errorf("/acme-flaky: event %s arrived %d times, want 500, 500, then 200", h.id, a)
		}
	}
	res := ts.settledDeliveries(t, client, flaky)
	if len(res) != events {
		t.Fatalf("deliveries of the flaky endpoint: %d, want %d", len(res), events)
	}
	for _, d := range res {
		last := d.Attempts[len(d.Attempts)-1]
		if d.State != "delivered" || len(d.Attempts) < 3 || d.Attempts[0].StatusCode != 500 || d.Attempts[1].StatusCode != 500 || last.StatusCode != 200 || last.Attempt != len(d.Attempts) || d.NextAttempt != nil {
			t.Errorf("flaky delivery %+v", d)
		}
	}
	timedOut := 0
	for _, d := range ts.settledDeliveries(t, client, slow) {
		if d.State != "delivered" || d.Attempts[len(d.Attempts)-1].StatusCode != 200 {
			t.Errorf("slow delivery %+v", d)
		}
		if strings.Contains(d.Attempts[0].Error, "no answer within the timeout") {
			timedOut++
			if a := rcv.attempts("/acme-slow", d.EventID); a < 2 {
				t.Errorf("/acme-slow: the timed-out event %s arrived %d times under its id", d.EventID, a)
			}
		}
	}
	if timedOut == 0 {
		t.Error("no delivery to the slow endpoint timed out and was retried")
	}
}

// settledDeliveries waits until no delivery of the endpoint is pending
// (the receiver answers before the dispatcher records) and returns them.
func (s *testServer) settledDeliveries(t *testing.T, token, id string) []companydocs.WebhookDelivery {
	t.Helper()
	var res struct {
		Deliveries []companydocs.WebhookDelivery `json:"deliveries"`
	}
	eventually(t, "the deliveries of "+id+" to settle", func() bool {
		res.Deliveries = nil
		s.call(t, "GET", "/api/v1/webhooks/"+id+"/deliveries/", token, nil, &res)
		for _, d := range res.Deliveries {
			if d.State == companydocs.DeliveryPending {
				return false
			}
		}
		return true
	})
	return res.Deliveries
}

// checkWebhookRoutes: the list shows no secret; another account's
// endpoint is not_found for its deliveries and its deletion; deletion
// works for the owner.
func checkWebhookRoutes(t *testing.T, ts *testServer, client, other, id string) {
	t.Helper()
	var list struct {
		Webhooks []companydocs.WebhookEndpoint `json:"webhooks"`
	}
	status, raw := ts.call(t, "GET", "/api/v1/webhooks/", client, nil, &list)
	if status != 200 || len(list.Webhooks) != 3 || strings.Contains(string(raw), "whsec_") {
		t.Errorf("list: %d %s", status, raw)
	}
	ts.wantError(t, 404, "not_found", "GET", "/api/v1/webhooks/"+id+"/deliveries/", "", "Authorization", "Bearer "+other)
	ts.wantError(t, 404, "not_found", "DELETE", "/api/v1/webhooks/"+id+"/", "", "Authorization", "Bearer "+other)
	ts.wantError(t, 401, "unauthorized", "GET", "/api/v1/webhooks/", "")
	if status, raw := ts.call(t, "DELETE", "/api/v1/webhooks/"+id+"/", client, nil, nil); status != 204 {
		t.Errorf("delete: %d %s", status, raw)
	}
	ts.wantError(t, 404, "not_found", "GET", "/api/v1/webhooks/"+id+"/deliveries/", "", "Authorization", "Bearer "+client)
}

// TestHangingReceiverDelaysNoOneElse: one endpoint's receiver never
// answers (the timeout is a minute); while its first request hangs,
// the API answers and another endpoint gets every event.
func TestHangingReceiverDelaysNoOneElse(t *testing.T) {
	ts, _ := flowServer(t, "--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "1m", "--webhook-workers", "2")
	rcv := newReceiver(t)
	profile := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, op := ts.session(t, "acme", 10), ts.operatorSession(t, "ops")
	rcv.register(t, ts, op, "/hang", "hang")
	rcv.register(t, ts, client, "/fast", "ok")
	for range 3 {
		o := ts.act(t, 201, "POST", "/api/v1/documents/orders/", client, orderJSON(profile, "AD", "ad-single"))
		ts.act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/pay", op, nil)
		ts.act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/cancel", op, nil)
	}
	eventually(t, "all 9 events at /fast", func() bool { return len(seen(t, rcv.delivered("/fast"))) == 9 })
	rcv.mu.Lock()
	hanging, done := rcv.hanging["/hang"], len(rcv.hits["/hang"])
	rcv.mu.Unlock()
	if hanging != 1 || done != 0 {
		t.Errorf("/hang: %d requests hanging, %d finished; want the first hanging, no second one in flight", hanging, done)
	}
}

// TestWebhooksResumeAfterRestart: deliveries that failed before a stop,
// and events committed just before it, are delivered after the restart,
// with the same webhook-ids.
func TestWebhooksResumeAfterRestart(t *testing.T) {
	flags := []string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-retry-base", "50ms"}
	ts, dir := flowServer(t, flags...)
	rcv := newReceiver(t)
	rcv.down.Store(true)
	profile := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, op := ts.session(t, "acme", 10), ts.operatorSession(t, "ops")
	ep := rcv.register(t, ts, client, "/down", "down")
	o := ts.act(t, 201, "POST", "/api/v1/documents/orders/", client, orderJSON(profile, "CD", "subscription-basic"))
	eventually(t, "a refused attempt", func() bool { return rcv.count("/down") > 0 })
	ts.act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/request", op, nil)
	ts.act(t, 200, "PUT", "/api/v1/operator/orders/"+o.ID+"/document", op, string(lifecyclePDF), "Content-Type", "application/pdf")
	rcv.mu.Lock()
	before := map[string]bool{}
	for _, h := range rcv.hits["/down"] {
		before[h.id] = true
	}
	rcv.mu.Unlock()
	if err := ts.shutdown(); err != nil {
		t.Fatal(err)
	}
	rcv.down.Store(false)
	ts = startServer(t, dir, flags...)
	eventually(t, "4 events delivered after the restart", func() bool { return len(seen(t, rcv.delivered("/down"))) == 4 })
	got := seen(t, rcv.delivered("/down"))
	for _, e := range []event{{o.ID, "order.created", "PREVIEW_READY"}, {o.ID, "order.paid", "PAID"}, {o.ID, "order.requested", "REQUESTED"}, {o.ID, "order.delivered", "DELIVERED"}} {
		if _, ok := got[e]; !ok {
			t.Errorf("after the restart, %v was not delivered (got %v)", e, got)
		}
	}
	for id := range before {
		if !containsValue(got, id) {
			t.Errorf("webhook-id %s, refused before the stop, was delivered under another id", id)
		}
	}
	for _, d := range ts.settledDeliveries(t, client, ep.ID) {
		if d.State != companydocs.DeliveryDelivered {
			t.Errorf("delivery %+v", d)
		}
	}
}

func containsValue(m map[event]string, v string) bool {
	for _, x := range m {
		if x == v {
			return true
		}
	}
	return false
}

// TestWebhookSSRF: by default only https URLs to public addresses are
// registered (literal IPs and names resolving to private ones refused,
// naming the rule); an endpoint stored under --webhook-allow-private is
// refused at dial time once the server runs without it, and its receiver
// gets nothing. IPv6 literals that carry 127.0.0.1 (IPv4-compatible,
// IPv4-translated, 6to4, Teredo, NAT64) and the discard prefix are
// refused under --webhook-allow-http alone.
func TestWebhookSSRF(t *testing.T) {
	ts, dir := flowServer(t)
	key, err := ts.Accounts.CreateAccount("acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	client := accessLogin(t, ts, key)
	refuseWebhooks(t, ts, client, map[string]string{
		"http://example.com/hook":              "https",
		"https://127.0.0.1/hook":               "loopback",
		"https://10.1.2.3/hook":                "private",
		"https://192.168.0.10/hook":            "private",
		"https://169.254.169.254/latest":       "link-local",
		"https://[::1]/hook":                   "loopback",
		"https://[fc00::1]/hook":               "private",
		"https://[::ffff:127.0.0.1]:8443/":     "loopback",
		"https://0.0.0.0/hook":                 "unspecified",
		"https://224.0.0.1/hook":               "multicast",
		"https://100.64.0.1/hook":              "non-public",
		"https://localhost:8443/hook":          "loopback",
		"https://user:pw@example.com/hook":     "user name",
		"ftp://example.com/hook":               "http",
		"https://no-such-host.invalid/hook":    "resolved",
		"https://" + strings.Repeat("a", 2001): "longer",
	})
	ts.checkAgainstOpenAPI(t)
	if err := ts.shutdown(); err != nil {
		t.Fatal(err)
	}

	ts = startServer(t, dir, "--webhook-allow-http", "--webhook-allow-private")
	rcv := newReceiver(t)
	client = accessLogin(t, ts, key)
	ep := rcv.register(t, ts, client, "/inside", "ok")
	if err := ts.shutdown(); err != nil {
		t.Fatal(err)
	}
	ts = startServer(t, dir, "--webhook-allow-http", "--webhook-retry-for", "1ms")
	client = accessLogin(t, ts, key)
	refuseWebhooks(t, ts, client, ipv6CarryingInside)
	profile := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	ts.act(t, 201, "POST", "/api/v1/documents/orders/", client, orderJSON(profile, "AD", "ad-single"))
	var ds []companydocs.WebhookDelivery
	eventually(t, "the delivery to fail", func() bool {
		ds = ts.settledDeliveries(t, client, ep.ID)
		return len(ds) > 0
	})
	if len(ds) != 1 || ds[0].State != companydocs.DeliveryFailed || len(ds[0].Attempts) != 1 || !strings.Contains(ds[0].Attempts[0].Error, "refused to dial 127.0.0.1: a loopback address") {
		t.Errorf("deliveries to a loopback endpoint without --webhook-allow-private: %+v", ds)
	}
	if n := rcv.count("/inside"); n != 0 {
		t.Errorf("the receiver on 127.0.0.1 got %d requests", n)
	}
}

// ipv6CarryingInside are IPv6 literals that reach 127.0.0.1 through a
// tunnel or a translator, and the discard prefix, with the rule each
// refusal must name.
var ipv6CarryingInside = map[string]string{
	"http://[::127.0.0.1]/hook":                           "IPv4-compatible address carrying 127.0.0.1, a loopback address",
	"http://[::ffff:0:127.0.0.1]/":                        "IPv4-translated address carrying 127.0.0.1, a loopback address",
	"http://[2002:7f00:1::]/":                             "6to4 address carrying 127.0.0.1, a loopback address",
	"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/":      "Teredo address carrying 127.0.0.1, a loopback address",
	"http://[64:ff9b::7f00:1]/":                           "NAT64 address carrying 127.0.0.1, a loopback address",
	"http://[100::1]/":                                    "discard prefix 100::/64",
	"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]:443/": "Teredo address carrying 127.0.0.1",
}

// refuseWebhooks registers each url and wants a validation_error whose
// sentence names the rule.
func refuseWebhooks(t *testing.T, ts *testServer, token string, rules map[string]string) {
	t.Helper()
	for url, rule := range rules {
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		status, _ := ts.call(t, "POST", "/api/v1/webhooks/", token, map[string]string{"url": url}, &out)
		if status != 422 || out.Error.Code != "validation_error" || !strings.Contains(out.Error.Message, rule) {
			t.Errorf("%s: %d %+v, want validation_error naming %q", url, status, out.Error, rule)
		}
	}
}
