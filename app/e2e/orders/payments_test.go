package orders

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/internal/stripemocktest"
)

// withEventID is e with id as its event id, signed anew now; nil leaves
// the id out.
func withEventID(t *testing.T, e e2e.StripeEvent, id any) e2e.StripeEvent {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(e.Body, &ev); err != nil {
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
	return e2e.StripeEvent{Body: body, Signature: stripemocktest.Sign(body, stripemocktest.Secret, time.Now())}
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
func TestStripeOneOffStory(t *testing.T) { e2e.ForEachServerStore(t, testStripeOneOffStory) }

func testStripeOneOffStory(t *testing.T, storeFlags ...string) {
	front := e2e.StartStripeFront(t, 1)
	key, flags := e2e.StripeEnv(t, front)
	ts, _ := e2e.FlowServer(t, append(flags, storeFlags...)...)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.Session(t, "acme", 0)
	op := ts.OperatorSession(t, "ops")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"

	o := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "AD", "stripe-single"))
	checkPayStep(t, o.Order)
	var opView struct {
		e2e.LifecycleOrder
		Step companydocs.OperatorStep `json:"operator_step"`
	}
	ts.Call(t, "GET", operator+o.ID+"/", op, nil, &opView)
	if strings.Contains(strings.Join(opView.AllowedActions, ","), "pay") || opView.Payment == nil || opView.Payment.SessionID != o.Payment.SessionID ||
		!strings.Contains(opView.Step.Message, "payment page") {
		t.Errorf("the operator's view of an order awaiting Stripe's payment: actions %v, payment %+v, step %+v", opView.AllowedActions, opView.Payment, opView.Step)
	}
	ts.WantError(t, 409, "invalid_transition", "POST", operator+o.ID+"/pay", "", "Authorization", "Bearer "+op)

	// Signatures: missing, wrong secret, body changed after signing,
	// stamped a day ahead.
	paid := e2e.CheckoutEvent(o.Order, "checkout.session.completed", "pi_test_story")
	for name, e := range map[string]e2e.StripeEvent{
		"missing":     {Body: paid.Body, Signature: ""},
		"wrong":       {Body: paid.Body, Signature: e2e.CheckoutEvent(o.Order, "checkout.session.completed", "pi_x").Signature},
		"tampered":    {Body: []byte(strings.Replace(string(paid.Body), "pi_test_story", "pi_test_other", 1)), Signature: paid.Signature},
		"a day ahead": {Body: paid.Body, Signature: stripemocktest.Sign(paid.Body, stripemocktest.Secret, time.Now().Add(24*time.Hour))},
	} {
		if status, raw := ts.PostEvent(t, e); status != 400 || !strings.Contains(raw, "invalid_signature") {
			t.Errorf("%s signature: %d %s, want 400 invalid_signature", name, status, raw)
		}
	}
	// Signed events without an id: unreadable, refused before anything
	// is applied or counted (else the first would take the empty id, and
	// every later one be answered "replayed").
	for _, id := range []any{nil, ""} {
		if status, raw := ts.PostEvent(t, withEventID(t, paid, id)); status != 400 || !strings.Contains(raw, "invalid_event") {
			t.Errorf("an event with id %#v: %d %s, want 400 invalid_event", id, status, raw)
		}
	}
	if got := ts.Act(t, 200, "GET", orders+o.ID+"/", client, nil); got.Status != "PREVIEW_READY" || len(got.History) != 1 {
		t.Fatalf("after refused events: %s with %d history entries", got.Status, len(got.History))
	}
	// An event for a session no order has.
	stranger := o.Order
	stranger.Payment = &companydocs.OrderPayment{SessionID: "cs_test_unknown"}
	if status, outcome := ts.PostEvent(t, e2e.CheckoutEvent(stranger, "checkout.session.completed", "pi_test_x")); status != 200 || outcome != "unknown" {
		t.Errorf("unknown session: %d %s", status, outcome)
	}
	if status, outcome := ts.PostEvent(t, paid); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	for _, e := range []e2e.StripeEvent{paid, e2e.CheckoutEvent(o.Order, "checkout.session.completed", "pi_test_story"), e2e.CheckoutEvent(o.Order, "checkout.session.expired", "")} {
		if status, outcome := ts.PostEvent(t, e); status != 200 || (outcome != "replayed" && outcome != "late") {
			t.Errorf("replayed or late event: %d %s", status, outcome)
		}
	}
	got := ts.Act(t, 200, "GET", orders+o.ID+"/", client, nil)
	if got.Status != "PAID" || got.Payment.Status != "paid" || got.Payment.PaymentID != "pi_test_story" || len(got.History) != 2 ||
		got.History[1].Actor != "system" || got.History[1].Code != "paid_online" || slices.Contains(got.AllowedActions, "pay_online") {
		t.Fatalf("after the completed event: %+v", got.Order)
	}
	ts.Act(t, 200, "POST", operator+o.ID+"/request", op, nil)
	d := ts.Act(t, 200, "PUT", operator+o.ID+"/document", op, string(e2e.LifecyclePDF), "Content-Type", "application/pdf")
	if d.Status != "DELIVERED" || d.Payment == nil || d.Payment.Refund != nil {
		t.Fatalf("delivered: %+v", d.Order)
	}
	checkDownload(t, ts, o.ID, d.Document.SHA256, client, ts.Session(t, "other", 0), op)

	// Cancel after payment: refunded once, through a first 500.
	c := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	if status, outcome := ts.PostEvent(t, e2e.CheckoutEvent(c.Order, "checkout.session.completed", "pi_test_cancel")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	cancelled := ts.Act(t, 200, "POST", orders+c.ID+"/cancel", client, nil)
	if cancelled.Status != "CANCELLED" || cancelled.Payment.Refund == nil || cancelled.Payment.Refund.Status != "pending" ||
		cancelled.History[len(cancelled.History)-1].Params.Provider != "stripe" {
		t.Fatalf("cancelled after payment: %+v", cancelled.Order)
	}
	var refunded e2e.LifecycleOrder
	e2e.WaitFor(t, "the refund to be made", func() bool {
		refunded = ts.Act(t, 200, "GET", operator+c.ID+"/", op, nil)
		return refunded.Payment.Refund.Status == "refunded"
	})
	r := refunded.Payment.Refund
	last := refunded.History[len(refunded.History)-1]
	if r.Attempts != 2 || r.RefundID == "" || r.Amount != "4.50" || last.Code != "refunded" || last.Status != "CANCELLED" || refunded.Status != "CANCELLED" {
		t.Errorf("refunded: %+v, last history entry %+v", r, last)
	}
	time.Sleep(300 * time.Millisecond) // six retry bases: a second refund would have been asked by now
	if keys := front.RefundsAsked(); len(keys) != 2 || keys[0] != "companydocs-refund-"+c.ID || keys[1] != keys[0] {
		t.Errorf("refunds asked of Stripe: %q, want the order's key twice (a 500, then the refund)", keys)
	}

	// A refund Stripe made whose answer is lost: looked up, found, not asked again.
	front.Mu.Lock()
	front.LoseRefunds, front.Lookups = 1, 0
	front.Mu.Unlock()
	l := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	if status, outcome := ts.PostEvent(t, e2e.CheckoutEvent(l.Order, "checkout.session.completed", "pi_test_lost")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	ts.Act(t, 200, "POST", orders+l.ID+"/cancel", client, nil)
	e2e.WaitFor(t, "the refund whose answer was lost to be found", func() bool {
		refunded = ts.Act(t, 200, "GET", operator+l.ID+"/", op, nil)
		return refunded.Payment.Refund.Status == "refunded"
	})
	time.Sleep(300 * time.Millisecond)
	front.Mu.Lock()
	if r := refunded.Payment.Refund; r.Attempts != 2 || r.RefundID != front.MadeID("companydocs-refund-"+l.ID) || r.AskedAt != nil ||
		len(front.RefundKeys) != 3 || front.RefundKeys[2] != "companydocs-refund-"+l.ID || front.Lookups != 1 {
		t.Errorf("a refund whose answer was lost: %+v; asked %q, looked up %d times", r, front.RefundKeys, front.Lookups)
	}
	front.Mu.Unlock()

	// Expiry: cancelled by the system, the slot freed for a new order.
	e := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	ts.WantError(t, 409, "duplicate_order", "POST", orders, e2e.OrderJSON(profile, "CD", "stripe-single"), "Authorization", "Bearer "+client)
	if status, outcome := ts.PostEvent(t, e2e.CheckoutEvent(e.Order, "checkout.session.expired", "")); status != 200 || outcome != "applied" {
		t.Fatalf("expired: %d %s", status, outcome)
	}
	expired := ts.Act(t, 200, "GET", orders+e.ID+"/", client, nil)
	if expired.Status != "CANCELLED" || expired.Payment.Status != "expired" || expired.History[1].Code != "checkout_expired" || expired.Payment.Refund != nil {
		t.Errorf("expired: %+v", expired.Order)
	}
	// Cancelled before payment: the page is closed at Stripe, nothing refunded.
	open := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	unpaid := ts.Act(t, 200, "POST", orders+open.ID+"/cancel", client, nil)
	if unpaid.Status != "CANCELLED" || unpaid.Payment.Status != "expired" || unpaid.Payment.Refund != nil || slices.Contains(unpaid.AllowedActions, "pay_online") {
		t.Errorf("cancelled before payment: %+v", unpaid.Order)
	}
	e2e.WaitFor(t, "the payment page to be closed at Stripe", func() bool { return front.Expired(unpaid.Payment.SessionID) > 0 })
	// A payment of another amount, or another currency, than the price:
	// not paid, flagged; the checkout is over, so a second completion is
	// late and no payment page is offered again.
	for i, e := range []struct {
		paymentID string
		cents     int
		currency  string
	}{{"pi_test_less", 400, "eur"}, {"pi_test_usd", 450, "usd"}} {
		m := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "stripe-single"))
		if status, outcome := ts.PostEvent(t, e2e.CheckoutEventPaying(m.Order, "checkout.session.completed", e.paymentID, e.cents, e.currency)); status != 200 || outcome != "mismatch" {
			t.Errorf("a payment not of the price: %d %s, want 200 mismatch", status, outcome)
		}
		if status, outcome := ts.PostEvent(t, e2e.CheckoutEventPaying(m.Order, "checkout.session.completed", "pi_test_again", 450, "eur")); status != 200 || outcome != "late" {
			t.Errorf("a completion after a payment not of the price: %d %s, want 200 late", status, outcome)
		}
		mism := ts.Act(t, 200, "GET", operator+m.ID+"/", op, nil)
		paid := []string{"4.00 EUR", "4.50 USD"}[i]
		if h := mism.History; mism.Status != "PREVIEW_READY" || mism.Payment.Status != "mismatch" || mism.Payment.PaymentID != e.paymentID || len(h) != 2 ||
			h[1].Code != "payment_mismatch" || h[1].Params.Amount+" "+h[1].Params.Currency != paid || !strings.Contains(h[1].Note, "not the order's price") {
			t.Errorf("after a payment of %s: %+v", paid, mism.Order)
		}
		seen := ts.Act(t, 200, "GET", orders+m.ID+"/", client, nil)
		if slices.Contains(seen.AllowedActions, "pay_online") || seen.NextStep.Code != "payment_mismatch" || seen.NextStep.Kind != "payment" {
			t.Errorf("the client's view after a payment of %s: actions %v, next step %+v", paid, seen.AllowedActions, seen.NextStep)
		}
		// the operator settles it: refunded at Stripe by hand, the order cancelled
		ts.Act(t, 200, "POST", operator+m.ID+"/cancel", op, map[string]string{"note": "paid another amount; refunded at Stripe"})
	}

	front.Mu.Lock()
	if front.Checkouts != 7 { // the duplicate was refused before Stripe was asked
		t.Errorf("%d checkout sessions opened for 7 orders", front.Checkouts)
	}
	front.Mu.Unlock()

	for outcome, want := range map[string]float64{"applied": 4, "invalid_signature": 4, "unknown": 1, "mismatch": 2} {
		if v, _ := ts.Metric(t, "companydocs_payment_events_total", "outcome", outcome); v != want {
			t.Errorf("payment_events_total{outcome=%q} = %v, want %v", outcome, v, want)
		}
	}
	for outcome, want := range map[string]float64{"refunded": 1, "found": 1, "retry": 2} {
		if v, _ := ts.Metric(t, "companydocs_payment_refunds_total", "outcome", outcome); v != want {
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
func checkNoStripeSecrets(t *testing.T, ts *e2e.TestServer, key string) {
	t.Helper()
	_, metrics, _ := ts.Do(t, "GET", "/metrics", "")
	for where, text := range map[string]string{"logs": ts.Logs.String(), "stdout": ts.Out.String(), "metrics": string(metrics)} {
		for _, s := range []string{key, stripemocktest.Secret} {
			if strings.Contains(text, s) {
				t.Errorf("the %s hold a Stripe secret", where)
			}
		}
	}
}

// withStripePlan adds the plan paid through Stripe of e2e.StripePlans to the
// plans file at path and returns the new file's path.
func withStripePlan(t *testing.T, path string) string {
	t.Helper()
	var file, extra struct {
		Plans []map[string]any `json:"plans"`
	}
	raw, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(raw, &file) != nil || json.Unmarshal([]byte(e2e.StripePlans), &extra) != nil {
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
func exerciseStripe(t *testing.T, s *e2e.TestServer, c claims) {
	t.Helper()
	o := s.Act(t, http.StatusCreated, "POST", "/api/v1/documents/orders/", c.client, e2e.OrderBody(c.profile, "AD", "stripe-single"))
	checkPayStep(t, o.Order)
	if status, outcome := s.PostEvent(t, e2e.CheckoutEvent(o.Order, "checkout.session.completed", "pi_test_claims")); status != 200 || outcome != "applied" {
		t.Fatalf("completed: %d %s", status, outcome)
	}
	s.Act(t, http.StatusOK, "GET", "/api/v1/documents/orders/"+o.ID+"/", c.client, nil)
	s.Act(t, http.StatusOK, "GET", "/api/v1/operator/orders/"+o.ID+"/", c.operator, nil)
}
