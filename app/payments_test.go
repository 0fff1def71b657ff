package app

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/stripemocktest"
)

// stripePlans is a plans file with one plan paid through Stripe (AD and
// CD, so that one account can hold two open orders of one company) and
// the embedded credit plan.
const stripePlans = `{"plans": [
  {"id": "stripe-single", "name": "Register printout, paid by card", "kind": "one_off", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "4.50", "credit_cost": 0, "payment": "stripe"},
  {"id": "subscription-basic", "name": "Subscription", "kind": "subscription", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "0.00", "credit_cost": 1, "watch_limit": 25}
]}`

// stripeFront is a reverse proxy on 127.0.0.1 in front of stripe-mock.
// It keeps what stateless stripe-mock does not, the refunds made: a
// refunds list of a payment intent answers them (Stripe's list object),
// and an ask under a key that made a refund is answered that refund, as
// Stripe's idempotency does. It records the Idempotency-Key of every
// refund asked, answers the first failRefunds asks 500 without
// forwarding them (Stripe failing), and loses the answers of the next
// loseRefunds refunds made (the connection closes after Stripe made
// it). A refund asked is forwarded to the end even when its caller is
// killed meanwhile, and a list waits for it, so that what a restarted
// server looks up is what Stripe made.
type stripeFront struct {
	URL         string
	mu          sync.Mutex
	refundKeys  []string                     // in the order asked
	refunds     map[string][]json.RawMessage // payment intent -> the refunds made of it
	made        map[string]json.RawMessage   // idempotency key -> the refund its first ask made
	replays     map[string]int               // idempotency key -> asks after the refund was made
	lookups     int                          // refunds lists asked for
	found       int                          // lists that answered a refund
	failRefunds int
	loseRefunds int
	checkouts   int
	expiries    []string // paths of the sessions expired
}

func startStripeFront(t *testing.T, failRefunds int) *stripeFront {
	t.Helper()
	mock := stripemocktest.Start(t)
	target, err := url.Parse(mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &stripeFront{failRefunds: failRefunds, refunds: map[string][]json.RawMessage{}, made: map[string]json.RawMessage{}, replays: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a server killed mid-call (the crash test) breaks its request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/refunds":
			f.refund(w, r, mock.URL)
			return
		case r.Method == "GET" && r.URL.Path == "/v1/refunds":
			f.listRefunds(w, r.URL.Query().Get("payment_intent"))
			return
		}
		f.mu.Lock()
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/checkout/sessions":
			f.checkouts++
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/expire"):
			f.expiries = append(f.expiries, r.URL.Path)
		}
		f.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// refund answers a refund asked: 500 for the first failRefunds, the
// refund made before under its key, or what stripe-mock answers, kept
// with its payment intent, amount and order under an id of its own.
func (f *stripeFront) refund(w http.ResponseWriter, r *http.Request, mockURL string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the caller was killed before it asked
	}
	form, _ := url.ParseQuery(string(body))
	key := r.Header.Get("Idempotency-Key")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refundKeys = append(f.refundKeys, key)
	w.Header().Set("Content-Type", "application/json")
	if made, ok := f.made[key]; ok {
		f.replays[key]++
		w.Write(made)
		return
	}
	if len(f.refundKeys) <= f.failRefunds {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error": {"type": "api_error", "message": "An unknown error occurred."}}`))
		return
	}
	req, _ := http.NewRequest("POST", mockURL+"/v1/refunds", bytes.NewReader(body)) // not r's context: made even if the caller dies
	req.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		var refund map[string]any
		if json.Unmarshal(raw, &refund) == nil {
			amount, _ := strconv.ParseInt(form.Get("amount"), 10, 64)
			pi := form.Get("payment_intent")
			refund["id"] = fmt.Sprintf("re_front_%d", len(f.made)+1)
			refund["payment_intent"], refund["amount"], refund["status"] = pi, amount, "succeeded"
			refund["metadata"] = map[string]string{"order_id": form.Get("metadata[order_id]")}
			raw, _ = json.Marshal(refund)
			f.made[key] = raw
			f.refunds[pi] = append(f.refunds[pi], raw)
		}
		if f.loseRefunds > 0 { // cut off mid-answer (a connection closed before any byte would be re-sent by Go's transport)
			f.loseRefunds--
			w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
			w.Write(raw[:len(raw)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(raw)
}

// listRefunds answers the refunds of a payment intent made through the
// front, as Stripe's list object.
func (f *stripeFront) listRefunds(w http.ResponseWriter, paymentIntent string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	data := f.refunds[paymentIntent]
	if data == nil {
		data = []json.RawMessage{}
	} else {
		f.found++
	}
	raw, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/refunds", "has_more": false, "data": data})
	w.Header().Set("Content-Type", "application/json")
	w.Write(raw)
}

// madeID is the id of the refund made under key; the caller holds mu.
func (f *stripeFront) madeID(key string) string {
	var refund struct{ ID string }
	_ = json.Unmarshal(f.made[key], &refund)
	return refund.ID
}

// refundsAsked returns the keys of the refunds asked so far.
func (f *stripeFront) refundsAsked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.refundKeys...)
}

// expired counts the calls that expired the session.
func (f *stripeFront) expired(sessionID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.expiries {
		if p == "/v1/checkout/sessions/"+sessionID+"/expire" {
			n++
		}
	}
	return n
}

// stripeSecretKey is a fresh test key per run, so that the log check
// cannot pass by a key that happens to be absent anyway.
func stripeSecretKey(t *testing.T) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "sk_test_" + hex.EncodeToString(b)
}

// stripeEnv sets the Stripe secrets in the environment (servers started
// as processes inherit it) and returns the flags of a server paid
// through front.
func stripeEnv(t *testing.T, front *stripeFront) (key string, flags []string) {
	t.Helper()
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(stripePlans), 0o644); err != nil {
		t.Fatal(err)
	}
	key = stripeSecretKey(t)
	t.Setenv(envStripeSecretKey, key)
	t.Setenv(envStripeWebhookSecret, stripemocktest.Secret)
	return key, []string{"--plans", plans, "--stripe-api-url", front.URL, "--refund-retry-base", "50ms",
		"--stripe-success-url", "https://docs.example.com/orders/{ORDER_ID}?paid=1", "--stripe-cancel-url", "https://docs.example.com/orders/{ORDER_ID}"}
}

// stripeEvent is a signed checkout session event for order o.
type stripeEvent struct {
	body      []byte
	signature string
}

var eventSeq struct {
	sync.Mutex
	n int
}

// checkoutEvent signs an event of typ for o's checkout session, with a
// new event id; paymentIntent is the payment's id (completed events).
func checkoutEvent(o companydocs.Order, typ, paymentIntent string) stripeEvent {
	return checkoutEventPaying(o, typ, paymentIntent, 450, "eur")
}

// checkoutEventPaying is checkoutEvent with the session's amount_total
// in cents and its currency.
func checkoutEventPaying(o companydocs.Order, typ, paymentIntent string, cents int, currency string) stripeEvent {
	eventSeq.Lock()
	eventSeq.n++
	id := "evt_test_" + o.ID + "_" + time.Now().Format("150405.000000") + "_" + string(rune('a'+eventSeq.n%26))
	eventSeq.Unlock()
	session := map[string]any{"id": o.Payment.SessionID, "client_reference_id": o.ID, "amount_total": cents, "currency": currency,
		"payment_status": "paid", "status": "complete", "mode": "payment", "metadata": map[string]string{"order_id": o.ID}}
	if typ == "checkout.session.expired" {
		session["payment_status"], session["status"] = "unpaid", "expired"
	}
	if paymentIntent != "" {
		session["payment_intent"] = paymentIntent
	}
	body, sig := stripemocktest.Event(id, typ, session, stripemocktest.Secret, time.Now())
	return stripeEvent{body, sig}
}

// withEventID is e with id as its event id, signed anew now; nil leaves
// the id out.
func withEventID(t *testing.T, e stripeEvent, id any) stripeEvent {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(e.body, &ev); err != nil {
		t.Fatal(err)
	}
	delete(ev, "id")
	if id != nil {
		ev["id"] = id
	}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return stripeEvent{body, stripemocktest.Sign(body, stripemocktest.Secret, time.Now())}
}

// postEvent posts a Stripe event as Stripe does and returns the status
// and the outcome the server answered.
func (s *testServer) postEvent(t *testing.T, e stripeEvent) (int, string) {
	t.Helper()
	status, raw, _ := s.do(t, "POST", "/api/v1/payments/stripe/events", string(e.body), "Stripe-Signature", e.signature, "Content-Type", "application/json; charset=utf-8")
	var answer struct {
		Outcome string `json:"outcome"`
	}
	_ = json.Unmarshal(raw, &answer)
	if status != 200 {
		return status, string(raw)
	}
	return status, answer.Outcome
}

// TestStripeOneOffStory is the whole one-off story against stripe-mock on
// both stores: an order on a Stripe plan opens a payment page (next step
// "pay" with the session's URL and expiry, the client's action
// pay_online), signed events move it (bad and missing signatures are 400
// and change nothing; replays, late events and unknown sessions are 200
// and change nothing), then it is requested, delivered and downloaded. A
// paid order cancelled is refunded through Stripe exactly once, also
// when Stripe answers the first refund 500, and one Stripe made whose
// answer was lost is found by a look-up and not asked again; an expired
// page cancels the order and frees its slot; a completion of another
// amount or currency than the price pays nothing and is flagged.
func TestStripeOneOffStory(t *testing.T) { forEachServerStore(t, testStripeOneOffStory) }

func testStripeOneOffStory(t *testing.T, storeFlags ...string) {
	front := startStripeFront(t, 1)
	key, flags := stripeEnv(t, front)
	ts, _ := flowServer(t, append(flags, storeFlags...)...)
	profile := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.session(t, "acme", 0)
	op := ts.operatorSession(t, "ops")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"

	o := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "AD", "stripe-single"))
	checkPayStep(t, o.Order)
	var opView struct {
		lifecycleOrder
		Step companydocs.OperatorStep `json:"operator_step"`
	}
	ts.call(t, "GET", operator+o.ID+"/", op, nil, &opView)
	if strings.Contains(strings.Join(opView.AllowedActions, ","), "pay") || opView.Payment == nil || opView.Payment.SessionID != o.Payment.SessionID ||
		!strings.Contains(opView.Step.Message, "payment page") {
		t.Errorf("the operator's view of an order awaiting Stripe's payment: actions %v, payment %+v, step %+v", opView.AllowedActions, opView.Payment, opView.Step)
	}
	ts.wantError(t, 409, "invalid_transition", "POST", operator+o.ID+"/pay", "", "Authorization", "Bearer "+op)

	// Signatures: missing, wrong secret, body changed after signing,
	// stamped a day ahead.
	paid := checkoutEvent(o.Order, "checkout.session.completed", "pi_test_story")
	for name, e := range map[string]stripeEvent{
		"missing":     {paid.body, ""},
		"wrong":       {paid.body, checkoutEvent(o.Order, "checkout.session.completed", "pi_x").signature},
		"tampered":    {[]byte(strings.Replace(string(paid.body), "pi_test_story", "pi_test_other", 1)), paid.signature},
		"a day ahead": {paid.body, stripemocktest.Sign(paid.body, stripemocktest.Secret, time.Now().Add(24*time.Hour))},
	} {
		if status, raw := ts.postEvent(t, e); status != 400 || !strings.Contains(raw, "invalid_signature") {
			t.Errorf("%s signature: %d %s, want 400 invalid_signature", name, status, raw)
		}
	}
	// Signed events without an id: unreadable, refused before anything
	// is applied or counted (else the first would take the empty id, and
	// every later one be answered "replayed").
	for _, id := range []any{nil, ""} {
		if status, raw := ts.postEvent(t, withEventID(t, paid, id)); status != 400 || !strings.Contains(raw, "invalid_event") {
			t.Errorf("an event with id %#v: %d %s, want 400 invalid_event", id, status, raw)
		}
	}
	if got := ts.act(t, 200, "GET", orders+o.ID+"/", client, nil); got.Status != "PREVIEW_READY" || len(got.History) != 1 {
		t.Fatalf("after refused events: %s with %d history entries", got.Status, len(got.History))
	}
	// An event for a session no order has.
	stranger := o.Order
	stranger.Payment = &companydocs.OrderPayment{SessionID: "cs_test_unknown"}
	if status, outcome := ts.postEvent(t, checkoutEvent(stranger, "checkout.session.completed", "pi_test_x")); status != 200 || outcome != "unknown" {
		t.Errorf("unknown session: %d %s", status, outcome)
	}
	if status, outcome := ts.postEvent(t, paid); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	for _, e := range []stripeEvent{paid, checkoutEvent(o.Order, "checkout.session.completed", "pi_test_story"), checkoutEvent(o.Order, "checkout.session.expired", "")} {
		if status, outcome := ts.postEvent(t, e); status != 200 || (outcome != "replayed" && outcome != "late") {
			t.Errorf("replayed or late event: %d %s", status, outcome)
		}
	}
	got := ts.act(t, 200, "GET", orders+o.ID+"/", client, nil)
	if got.Status != "PAID" || got.Payment.Status != "paid" || got.Payment.PaymentID != "pi_test_story" || len(got.History) != 2 ||
		got.History[1].Actor != "system" || got.History[1].Code != "paid_online" || slices.Contains(got.AllowedActions, "pay_online") {
		t.Fatalf("after the completed event: %+v", got.Order)
	}
	ts.act(t, 200, "POST", operator+o.ID+"/request", op, nil)
	d := ts.act(t, 200, "PUT", operator+o.ID+"/document", op, string(lifecyclePDF), "Content-Type", "application/pdf")
	if d.Status != "DELIVERED" || d.Payment == nil || d.Payment.Refund != nil {
		t.Fatalf("delivered: %+v", d.Order)
	}
	checkDownload(t, ts, o.ID, d.Document.SHA256, client, ts.session(t, "other", 0), op)

	// Cancel after payment: refunded once, through a first 500.
	c := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "stripe-single"))
	if status, outcome := ts.postEvent(t, checkoutEvent(c.Order, "checkout.session.completed", "pi_test_cancel")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	cancelled := ts.act(t, 200, "POST", orders+c.ID+"/cancel", client, nil)
	if cancelled.Status != "CANCELLED" || cancelled.Payment.Refund == nil || cancelled.Payment.Refund.Status != "pending" ||
		cancelled.History[len(cancelled.History)-1].Params.Provider != "stripe" {
		t.Fatalf("cancelled after payment: %+v", cancelled.Order)
	}
	var refunded lifecycleOrder
	waitFor(t, "the refund to be made", func() bool {
		refunded = ts.act(t, 200, "GET", operator+c.ID+"/", op, nil)
		return refunded.Payment.Refund.Status == "refunded"
	})
	r := refunded.Payment.Refund
	last := refunded.History[len(refunded.History)-1]
	if r.Attempts != 2 || r.RefundID == "" || r.Amount != "4.50" || last.Code != "refunded" || last.Status != "CANCELLED" || refunded.Status != "CANCELLED" {
		t.Errorf("refunded: %+v, last history entry %+v", r, last)
	}
	time.Sleep(300 * time.Millisecond) // six retry bases: a second refund would have been asked by now
	if keys := front.refundsAsked(); len(keys) != 2 || keys[0] != "companydocs-refund-"+c.ID || keys[1] != keys[0] {
		t.Errorf("refunds asked of Stripe: %q, want the order's key twice (a 500, then the refund)", keys)
	}

	// A refund Stripe made whose answer is lost: looked up, found, not asked again.
	front.mu.Lock()
	front.loseRefunds, front.lookups = 1, 0
	front.mu.Unlock()
	l := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "stripe-single"))
	if status, outcome := ts.postEvent(t, checkoutEvent(l.Order, "checkout.session.completed", "pi_test_lost")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	ts.act(t, 200, "POST", orders+l.ID+"/cancel", client, nil)
	waitFor(t, "the refund whose answer was lost to be found", func() bool {
		refunded = ts.act(t, 200, "GET", operator+l.ID+"/", op, nil)
		return refunded.Payment.Refund.Status == "refunded"
	})
	time.Sleep(300 * time.Millisecond)
	front.mu.Lock()
	if r := refunded.Payment.Refund; r.Attempts != 2 || r.RefundID != front.madeID("companydocs-refund-"+l.ID) || r.AskedAt != nil ||
		len(front.refundKeys) != 3 || front.refundKeys[2] != "companydocs-refund-"+l.ID || front.lookups != 1 {
		t.Errorf("a refund whose answer was lost: %+v; asked %q, looked up %d times", r, front.refundKeys, front.lookups)
	}
	front.mu.Unlock()

	// Expiry: cancelled by the system, the slot freed for a new order.
	e := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "stripe-single"))
	ts.wantError(t, 409, "duplicate_order", "POST", orders, orderJSON(profile, "CD", "stripe-single"), "Authorization", "Bearer "+client)
	if status, outcome := ts.postEvent(t, checkoutEvent(e.Order, "checkout.session.expired", "")); status != 200 || outcome != "applied" {
		t.Fatalf("expired: %d %s", status, outcome)
	}
	expired := ts.act(t, 200, "GET", orders+e.ID+"/", client, nil)
	if expired.Status != "CANCELLED" || expired.Payment.Status != "expired" || expired.History[1].Code != "checkout_expired" || expired.Payment.Refund != nil {
		t.Errorf("expired: %+v", expired.Order)
	}
	// Cancelled before payment: the page is closed at Stripe, nothing refunded.
	open := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "stripe-single"))
	unpaid := ts.act(t, 200, "POST", orders+open.ID+"/cancel", client, nil)
	if unpaid.Status != "CANCELLED" || unpaid.Payment.Status != "expired" || unpaid.Payment.Refund != nil || slices.Contains(unpaid.AllowedActions, "pay_online") {
		t.Errorf("cancelled before payment: %+v", unpaid.Order)
	}
	waitFor(t, "the payment page to be closed at Stripe", func() bool { return front.expired(unpaid.Payment.SessionID) > 0 })
	// A payment of another amount, or another currency, than the price:
	// not paid, flagged; the checkout is over, so a second completion is
	// late and no payment page is offered again.
	for i, e := range []struct {
		paymentID string
		cents     int
		currency  string
	}{{"pi_test_less", 400, "eur"}, {"pi_test_usd", 450, "usd"}} {
		m := ts.act(t, 201, "POST", orders, client, orderJSON(profile, "CD", "stripe-single"))
		if status, outcome := ts.postEvent(t, checkoutEventPaying(m.Order, "checkout.session.completed", e.paymentID, e.cents, e.currency)); status != 200 || outcome != "mismatch" {
			t.Errorf("a payment not of the price: %d %s, want 200 mismatch", status, outcome)
		}
		if status, outcome := ts.postEvent(t, checkoutEventPaying(m.Order, "checkout.session.completed", "pi_test_again", 450, "eur")); status != 200 || outcome != "late" {
			t.Errorf("a completion after a payment not of the price: %d %s, want 200 late", status, outcome)
		}
		mism := ts.act(t, 200, "GET", operator+m.ID+"/", op, nil)
		paid := []string{"4.00 EUR", "4.50 USD"}[i]
		if h := mism.History; mism.Status != "PREVIEW_READY" || mism.Payment.Status != "mismatch" || mism.Payment.PaymentID != e.paymentID || len(h) != 2 ||
			h[1].Code != "payment_mismatch" || h[1].Params.Amount+" "+h[1].Params.Currency != paid || !strings.Contains(h[1].Note, "not the order's price") {
			t.Errorf("after a payment of %s: %+v", paid, mism.Order)
		}
		seen := ts.act(t, 200, "GET", orders+m.ID+"/", client, nil)
		if slices.Contains(seen.AllowedActions, "pay_online") || seen.NextStep.Code != "payment_mismatch" || seen.NextStep.Kind != "payment" {
			t.Errorf("the client's view after a payment of %s: actions %v, next step %+v", paid, seen.AllowedActions, seen.NextStep)
		}
		// the operator settles it: refunded at Stripe by hand, the order cancelled
		ts.act(t, 200, "POST", operator+m.ID+"/cancel", op, map[string]string{"note": "paid another amount; refunded at Stripe"})
	}

	front.mu.Lock()
	if front.checkouts != 7 { // the duplicate was refused before Stripe was asked
		t.Errorf("%d checkout sessions opened for 7 orders", front.checkouts)
	}
	front.mu.Unlock()

	for outcome, want := range map[string]float64{"applied": 4, "invalid_signature": 4, "unknown": 1, "mismatch": 2} {
		if v, _ := ts.metric(t, "companydocs_payment_events_total", "outcome", outcome); v != want {
			t.Errorf("payment_events_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
	for outcome, want := range map[string]float64{"refunded": 1, "found": 1, "retry": 2} {
		if v, _ := ts.metric(t, "companydocs_payment_refunds_total", "outcome", outcome); v != want {
			t.Errorf("payment_refunds_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
	checkNoStripeSecrets(t, ts, key)
}

// checkPayStep checks a new order on a Stripe plan: awaiting payment on
// Stripe's page, which the client may open.
func checkPayStep(t *testing.T, o companydocs.Order) {
	t.Helper()
	p := o.NextStep.Params
	if o.Status != "PREVIEW_READY" || o.NextStep.Kind != "pay" || o.NextStep.Code != "pay_online" || p == nil ||
		!strings.HasPrefix(p.PaymentURL, "https://") || p.ExpiresAt == nil || p.Amount != "4.50" || p.Currency != "EUR" {
		t.Fatalf("next step of a Stripe order: %+v", o.NextStep)
	}
	if o.Payment == nil || o.Payment.Provider != "stripe" || o.Payment.Status != "open" || !strings.HasPrefix(o.Payment.SessionID, "cs_") ||
		o.Payment.URL != p.PaymentURL || !o.Payment.ExpiresAt.Equal(*p.ExpiresAt) || o.Payment.Amount != "4.50" {
		t.Fatalf("payment of a Stripe order: %+v", o.Payment)
	}
	if !slices.Contains(o.AllowedActions, "pay_online") || !slices.Contains(o.AllowedActions, "cancel") {
		t.Fatalf("a client may %v, want pay_online and cancel", o.AllowedActions)
	}
}

// checkNoStripeSecrets checks that neither secret is in the logs, the
// standard output or /metrics.
func checkNoStripeSecrets(t *testing.T, ts *testServer, key string) {
	t.Helper()
	_, metrics, _ := ts.do(t, "GET", "/metrics", "")
	for where, text := range map[string]string{"logs": ts.logs.String(), "stdout": ts.stdout.String(), "metrics": string(metrics)} {
		for _, s := range []string{key, stripemocktest.Secret} {
			if strings.Contains(text, s) {
				t.Errorf("the %s hold a Stripe secret", where)
			}
		}
	}
}

// withStripePlan adds the plan paid through Stripe of stripePlans to the
// plans file at path and returns the new file's path.
func withStripePlan(t *testing.T, path string) string {
	t.Helper()
	var file, extra struct {
		Plans []map[string]any `json:"plans"`
	}
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &file) != nil || json.Unmarshal([]byte(stripePlans), &extra) != nil {
		t.Fatalf("read the plans file %s: %v", path, err)
	}
	file.Plans = append(file.Plans, extra.Plans[0])
	raw, _ = json.Marshal(file)
	out := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// exerciseStripe pays an order through Stripe on s, so that the
// exchanges the OpenAPI check validates hold a payment, the next step
// pay, an event's answer and a paid order.
func exerciseStripe(t *testing.T, s *testServer, c claims) {
	t.Helper()
	o := s.act(t, http.StatusCreated, "POST", "/api/v1/documents/orders/", c.client, orderBody(c.profile, "AD", "stripe-single"))
	checkPayStep(t, o.Order)
	if status, outcome := s.postEvent(t, checkoutEvent(o.Order, "checkout.session.completed", "pi_test_claims")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	s.act(t, http.StatusOK, "GET", "/api/v1/documents/orders/"+o.ID+"/", c.client, nil)
	s.act(t, http.StatusOK, "GET", "/api/v1/operator/orders/"+o.ID+"/", c.operator, nil)
}

// TestStripeConfiguration: serve refuses to start with a plan paid
// through Stripe and a missing key, naming the variable; the keys come
// from the environment or from files (both at once is refused); the
// usage never shows them; the embedded plans (--demo) need no Stripe.
func TestStripeConfiguration(t *testing.T) {
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(stripePlans), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustBuild(t, dir, 200, sampleFile(t))
	urls := []string{"--stripe-success-url", "https://docs.example.com/ok", "--stripe-cancel-url", "https://docs.example.com/back"}
	run := func(t *testing.T, args ...string) (*testServer, error) {
		t.Helper()
		s := newTestMain(t, dir, args...)
		err := s.Run(t.Context())
		t.Cleanup(func() { s.shutdown() })
		return s, err
	}
	t.Run("no key", func(t *testing.T) {
		t.Setenv(envStripeWebhookSecret, stripemocktest.Secret)
		// On a data directory of its own: a refused start touches nothing
		// there, not even LOCK.
		fresh := t.TempDir()
		s := newTestMain(t, fresh, append(urls, "--plans", plans)...)
		err := s.Run(t.Context())
		t.Cleanup(func() { s.shutdown() })
		if !errors.Is(err, errUsage) || !strings.Contains(fmt.Sprint(err), envStripeSecretKey) || !strings.Contains(fmt.Sprint(err), "stripe-single") {
			t.Fatalf("start without %s: %v, want a usage error naming it and the plan", envStripeSecretKey, err)
		}
		if entries, _ := os.ReadDir(fresh); len(entries) > 0 {
			t.Errorf("the refused start wrote %s into the data directory", entries[0].Name())
		}
	})
	t.Run("no webhook secret and no URLs", func(t *testing.T) {
		t.Setenv(envStripeSecretKey, stripeSecretKey(t))
		_, err := run(t, "--plans", plans)
		for _, want := range []string{envStripeWebhookSecret, "COMPANYDOCS_STRIPE_SUCCESS_URL", "COMPANYDOCS_STRIPE_CANCEL_URL"} {
			if !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("start without it: %v, want it named: %s", err, want)
			}
		}
	})
	t.Run("from files", func(t *testing.T) {
		key := stripeSecretKey(t)
		keyFile, secretFile := filepath.Join(t.TempDir(), "key"), filepath.Join(t.TempDir(), "whsec")
		os.WriteFile(keyFile, []byte(key+"\n"), 0o600)
		os.WriteFile(secretFile, []byte(stripemocktest.Secret), 0o600)
		t.Setenv(envStripeSecretKey+"_FILE", keyFile)
		t.Setenv(envStripeWebhookSecret+"_FILE", secretFile)
		s, err := run(t, append(urls, "--plans", plans)...)
		if err != nil {
			t.Fatal(err)
		}
		if s.stripeKeys.secretKey != key || s.stripeKeys.webhookSecret != stripemocktest.Secret {
			t.Errorf("the keys read from files differ from the files'")
		}
		if printed := fmt.Sprintf("%v %+v %#v", s.Config, s.Config, s.Config); strings.Contains(printed, key) || strings.Contains(printed, stripemocktest.Secret) {
			t.Errorf("printing the configuration shows a key")
		}
		checkNoStripeSecrets(t, &testServer{Main: s.Main, logs: s.logs, stdout: s.stdout, base: "http://" + s.Addr(), client: http.DefaultClient}, key)
	})
	t.Run("both a variable and its file", func(t *testing.T) {
		t.Setenv(envStripeSecretKey, stripeSecretKey(t))
		t.Setenv(envStripeSecretKey+"_FILE", filepath.Join(t.TempDir(), "key"))
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags(nil); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), envStripeSecretKey+"_FILE") {
			t.Fatalf("both set: %v, want a usage error", err)
		}
	})
	t.Run("usage", func(t *testing.T) {
		key := stripeSecretKey(t)
		t.Setenv(envStripeSecretKey, key)
		m := NewMain()
		var out bytes.Buffer
		m.Stdout, m.Stderr = &out, &out
		m.ParseFlags([]string{"--help"})
		if !strings.Contains(out.String(), "stripe-success-url") || strings.Contains(out.String(), key) {
			t.Errorf("serve --help lists the Stripe flags: %v, and shows the key: %v", strings.Contains(out.String(), "stripe-success-url"), strings.Contains(out.String(), key))
		}
	})
	t.Run("session lifetime out of Stripe's bounds", func(t *testing.T) {
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags([]string{"--stripe-session-ttl", "10m"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--stripe-session-ttl") {
			t.Fatalf("--stripe-session-ttl 10m: %v", err)
		}
	})
	t.Run("refund lease under a second", func(t *testing.T) {
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags([]string{"--refund-lease", "500ms"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--refund-lease") {
			t.Fatalf("--refund-lease 500ms: %v", err)
		}
	})
	t.Run("the embedded plans need no Stripe", func(t *testing.T) {
		s, err := run(t, "--demo")
		if err != nil || s.refunds != nil {
			t.Fatalf("--demo without Stripe's keys: %v (refunder running: %v)", err, s.refunds != nil)
		}
	})
}
