package webhooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// event is what a receiver should see: the order, the event type and
// the status the payload shows.
type event struct{ order, typ, status string }

// seen reduces delivered hits to events, checking that each carries one
// webhook-id and that no id names two events.
func seen(t *testing.T, hits []e2e.Hit) map[event]string {
	t.Helper()
	out := map[event]string{}
	ids := map[string]event{}
	for _, h := range hits {
		e := event{fmt.Sprint(h.Order["id"]), h.Typ, fmt.Sprint(h.Order["status"])}
		if prev, ok := ids[h.ID]; ok && prev != e {
			t.Errorf("webhook-id %s names %v and %v", h.ID, prev, e)
		}
		ids[h.ID] = e
		out[e] = h.ID
	}
	return out
}

func webhookServer(t *testing.T, extra ...string) (*e2e.TestServer, string) {
	return e2e.FlowServer(t, append([]string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "1s",
		"--webhook-retry-base", "20ms"}, extra...)...)
}

// TestWebhooksEndToEnd drives orders through every transition over the
// API and checks what three receivers of the client, one of another
// client and one of an operator get: signed, with the payload of each
// transition, retried with the same webhook-id after a 500 and after a
// timeout, a client's endpoint only its own orders, the operator's all.
func TestWebhooksEndToEnd(t *testing.T) { e2e.ForEachServerStore(t, testWebhooksEndToEnd) }

func testWebhooksEndToEnd(t *testing.T, storeFlags ...string) {
	ts, _ := webhookServer(t, storeFlags...)
	rcv := e2e.NewReceiver(t)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, other, op := ts.Session(t, "acme", 10), ts.Session(t, "other", 10), ts.OperatorSession(t, "ops")
	acme := rcv.Register(t, ts, client, "/acme", "ok")
	flaky := rcv.Register(t, ts, client, "/acme-flaky", "flaky")
	slow := rcv.Register(t, ts, client, "/acme-slow", "slow")
	rcv.Register(t, ts, other, "/other", "ok")
	rcv.Register(t, ts, op, "/ops", "ok")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"

	var want []event
	one := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "AD", "ad-single"))
	ts.Act(t, 200, "POST", operator+one.ID+"/pay", op, nil)
	ts.Act(t, 200, "POST", operator+one.ID+"/request", op, nil)
	ts.Act(t, 200, "PUT", operator+one.ID+"/document", op, string(e2e.LifecyclePDF), "Content-Type", "application/pdf")
	want = append(want, event{one.ID, "order.created", "PREVIEW_READY"}, event{one.ID, "order.paid", "PAID"},
		event{one.ID, "order.requested", "REQUESTED"}, event{one.ID, "order.delivered", "DELIVERED"})
	credit := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "subscription-basic"))
	ts.Act(t, 200, "POST", orders+credit.ID+"/cancel", client, nil)
	want = append(want, event{credit.ID, "order.created", "PREVIEW_READY"}, event{credit.ID, "order.paid", "PAID"},
		event{credit.ID, "order.cancelled", "CANCELLED"})
	failed := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "subscription-basic"))
	ts.Act(t, 200, "POST", operator+failed.ID+"/fail", op, `{"reason":"The register does not answer."}`)
	want = append(want, event{failed.ID, "order.created", "PREVIEW_READY"}, event{failed.ID, "order.paid", "PAID"},
		event{failed.ID, "order.failed", "FAILED"})
	theirs := ts.Act(t, 201, "POST", orders, other, e2e.OrderJSON(profile, "AD", "ad-single"))
	wantOther := []event{{theirs.ID, "order.created", "PREVIEW_READY"}}

	for _, path := range []string{"/acme", "/acme-flaky", "/acme-slow", "/other", "/ops"} {
		n := len(want)
		switch path {
		case "/other":
			n = 1
		case "/ops":
			n = len(want) + 1
		}
		e2e.Eventually(t, "the deliveries to "+path, func() bool { return len(seen(t, rcv.Delivered(path))) >= n })
	}
	got := seen(t, rcv.Delivered("/acme"))
	if len(got) != len(want) {
		t.Errorf("/acme got %d events, want %d: %v", len(got), len(want), got)
	}
	for _, e := range want {
		id, ok := got[e]
		if !ok {
			t.Errorf("/acme did not get %v", e)
		}
		for _, path := range []string{"/acme-flaky", "/acme-slow", "/ops"} {
			if other := seen(t, rcv.Delivered(path))[e]; other != id {
				t.Errorf("%s got %v with webhook-id %q, /acme with %q", path, e, other, id)
			}
		}
	}
	if got := seen(t, rcv.Delivered("/other")); len(got) != 1 || got[wantOther[0]] == "" {
		t.Errorf("/other got %v, want only its own %v", got, wantOther)
	}
	if _, ok := seen(t, rcv.Delivered("/ops"))[wantOther[0]]; !ok {
		t.Errorf("the operator's endpoint did not get the other account's order")
	}
	checkPayload(t, ts, rcv, client, one.ID)
	checkRetries(t, ts, rcv, client, flaky.ID, slow.ID, len(want))
	checkWebhookRoutes(t, ts, client, other, acme.ID)
	if n, _ := ts.Metric(t, "companydocs_webhook_deliveries_total", "outcome", "retry"); n < float64(2*len(want)) {
		t.Errorf("webhook_deliveries_total{retry} = %v, want at least %d", n, 2*len(want))
	}
	if n, _ := ts.Metric(t, "companydocs_webhook_deliveries_total", "outcome", "delivered"); n < float64(4*len(want)) {
		t.Errorf("webhook_deliveries_total{delivered} = %v", n)
	}
	for _, name := range []string{"companydocs_outbox_events", "companydocs_outbox_oldest_event_age_seconds", "companydocs_webhook_deliveries_pending"} {
		if _, found := ts.Metric(t, name); !found {
			t.Errorf("metric %s missing", name)
		}
	}
	e2e.Eventually(t, "an empty outbox in the metrics", func() bool {
		n, found := ts.Metric(t, "companydocs_outbox_events")
		return found && n == 0
	})
	rcv.Mu.Lock()
	for path, secret := range rcv.Secrets {
		if strings.Contains(ts.Logs.String(), strings.TrimPrefix(secret, "whsec_")) {
			t.Errorf("the secret of %s is in the log", path)
		}
	}
	rcv.Mu.Unlock()
	ts.CheckAgainstOpenAPI(t)
}

// checkPayload: the order.delivered payload is the order exactly as GET
// shows it (it is the last transition).
func checkPayload(t *testing.T, ts *e2e.TestServer, rcv *e2e.Receiver, client, id string) {
	t.Helper()
	var get map[string]any
	ts.Call(t, "GET", "/api/v1/documents/orders/"+id, client, nil, &get)
	for _, h := range rcv.Delivered("/acme") {
		if h.Typ == "order.delivered" {
			a, _ := json.Marshal(h.Order)
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
func checkRetries(t *testing.T, ts *e2e.TestServer, rcv *e2e.Receiver, client, flaky, slow string, events int) {
	t.Helper()
	for _, h := range rcv.Delivered("/acme-flaky") {
		if a := rcv.Attempts("/acme-flaky", h.ID); a < 3 {
			t.Errorf("/acme-flaky: event %s arrived %d times, want 500, 500, then 200", h.ID, a)
		}
	}
	res := ts.SettledDeliveries(t, client, flaky)
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
	for _, d := range ts.SettledDeliveries(t, client, slow) {
		if d.State != "delivered" || d.Attempts[len(d.Attempts)-1].StatusCode != 200 {
			t.Errorf("slow delivery %+v", d)
		}
		if strings.Contains(d.Attempts[0].Error, "no answer within the timeout") {
			timedOut++
			if a := rcv.Attempts("/acme-slow", d.EventID); a < 2 {
				t.Errorf("/acme-slow: the timed-out event %s arrived %d times under its id", d.EventID, a)
			}
		}
	}
	if timedOut == 0 {
		t.Error("no delivery to the slow endpoint timed out and was retried")
	}
}

// checkWebhookRoutes: the list shows no secret; another account's
// endpoint is not_found for its deliveries and its deletion; deletion
// works for the owner.
func checkWebhookRoutes(t *testing.T, ts *e2e.TestServer, client, other, id string) {
	t.Helper()
	var list struct {
		Webhooks []companydocs.WebhookEndpoint `json:"webhooks"`
	}
	status, raw := ts.Call(t, "GET", "/api/v1/webhooks/", client, nil, &list)
	if status != 200 || len(list.Webhooks) != 3 || strings.Contains(string(raw), "whsec_") {
		t.Errorf("list: %d %s", status, raw)
	}
	ts.WantError(t, 404, "not_found", "GET", "/api/v1/webhooks/"+id+"/deliveries/", "", "Authorization", "Bearer "+other)
	ts.WantError(t, 404, "not_found", "DELETE", "/api/v1/webhooks/"+id+"/", "", "Authorization", "Bearer "+other)
	ts.WantError(t, 401, "unauthorized", "GET", "/api/v1/webhooks/", "")
	if status, raw := ts.Call(t, "DELETE", "/api/v1/webhooks/"+id+"/", client, nil, nil); status != 204 {
		t.Errorf("delete: %d %s", status, raw)
	}
	ts.WantError(t, 404, "not_found", "GET", "/api/v1/webhooks/"+id+"/deliveries/", "", "Authorization", "Bearer "+client)
}

// TestHangingReceiverDelaysNoOneElse: one endpoint's receiver never
// answers (the timeout is a minute); while its first request hangs,
// the API answers and another endpoint gets every event.
func TestHangingReceiverDelaysNoOneElse(t *testing.T) {
	ts, _ := e2e.FlowServer(t, "--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "1m", "--webhook-workers", "2")
	rcv := e2e.NewReceiver(t)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, op := ts.Session(t, "acme", 10), ts.OperatorSession(t, "ops")
	rcv.Register(t, ts, op, "/hang", "hang")
	rcv.Register(t, ts, client, "/fast", "ok")
	for range 3 {
		o := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "AD", "ad-single"))
		ts.Act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/pay", op, nil)
		ts.Act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/cancel", op, nil)
	}
	e2e.Eventually(t, "all 9 events at /fast", func() bool { return len(seen(t, rcv.Delivered("/fast"))) == 9 })
	rcv.Mu.Lock()
	hanging, done := rcv.Hanging["/hang"], len(rcv.Hits["/hang"])
	rcv.Mu.Unlock()
	if hanging != 1 || done != 0 {
		t.Errorf("/hang: %d requests hanging, %d finished; want the first hanging, no second one in flight", hanging, done)
	}
}

// TestWebhooksResumeAfterRestart: deliveries that failed before a stop,
// and events committed just before it, are delivered after the restart,
// with the same webhook-ids.
func TestWebhooksResumeAfterRestart(t *testing.T) {
	flags := []string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-retry-base", "50ms"}
	ts, dir := e2e.FlowServer(t, flags...)
	rcv := e2e.NewReceiver(t)
	rcv.Down.Store(true)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client, op := ts.Session(t, "acme", 10), ts.OperatorSession(t, "ops")
	ep := rcv.Register(t, ts, client, "/down", "down")
	o := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "CD", "subscription-basic"))
	e2e.Eventually(t, "a refused attempt", func() bool { return rcv.Count("/down") > 0 })
	ts.Act(t, 200, "POST", "/api/v1/operator/orders/"+o.ID+"/request", op, nil)
	ts.Act(t, 200, "PUT", "/api/v1/operator/orders/"+o.ID+"/document", op, string(e2e.LifecyclePDF), "Content-Type", "application/pdf")
	rcv.Mu.Lock()
	before := map[string]bool{}
	for _, h := range rcv.Hits["/down"] {
		before[h.ID] = true
	}
	rcv.Mu.Unlock()
	if err := ts.Shutdown(); err != nil {
		t.Fatal(err)
	}
	rcv.Down.Store(false)
	ts = e2e.StartServer(t, dir, flags...)
	e2e.Eventually(t, "4 events delivered after the restart", func() bool { return len(seen(t, rcv.Delivered("/down"))) == 4 })
	got := seen(t, rcv.Delivered("/down"))
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
	for _, d := range ts.SettledDeliveries(t, client, ep.ID) {
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
	ts, dir := e2e.FlowServer(t)
	key, err := ts.Accounts.CreateAccount("acme", 10)
	if err != nil {
		t.Fatal(err)
	}
	client := e2e.AccessLogin(t, ts, key)
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
	ts.CheckAgainstOpenAPI(t)
	if err := ts.Shutdown(); err != nil {
		t.Fatal(err)
	}

	ts = e2e.StartServer(t, dir, "--webhook-allow-http", "--webhook-allow-private")
	rcv := e2e.NewReceiver(t)
	client = e2e.AccessLogin(t, ts, key)
	ep := rcv.Register(t, ts, client, "/inside", "ok")
	if err := ts.Shutdown(); err != nil {
		t.Fatal(err)
	}
	ts = e2e.StartServer(t, dir, "--webhook-allow-http", "--webhook-retry-for", "1ms")
	client = e2e.AccessLogin(t, ts, key)
	refuseWebhooks(t, ts, client, ipv6CarryingInside)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "AD", "ad-single"))
	var ds []companydocs.WebhookDelivery
	e2e.Eventually(t, "the delivery to fail", func() bool {
		ds = ts.SettledDeliveries(t, client, ep.ID)
		return len(ds) > 0
	})
	if len(ds) != 1 || ds[0].State != companydocs.DeliveryFailed || len(ds[0].Attempts) != 1 || !strings.Contains(ds[0].Attempts[0].Error, "refused to dial 127.0.0.1: a loopback address") {
		t.Errorf("deliveries to a loopback endpoint without --webhook-allow-private: %+v", ds)
	}
	if n := rcv.Count("/inside"); n != 0 {
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
func refuseWebhooks(t *testing.T, ts *e2e.TestServer, token string, rules map[string]string) {
	t.Helper()
	for url, rule := range rules {
		var out struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		status, _ := ts.Call(t, "POST", "/api/v1/webhooks/", token, map[string]string{"url": url}, &out)
		if status != 422 || out.Error.Code != "validation_error" || !strings.Contains(out.Error.Message, rule) {
			t.Errorf("%s: %d %+v, want validation_error naming %q", url, status, out.Error, rule)
		}
	}
}
