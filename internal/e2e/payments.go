package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/app"
	"companydocs/internal/stripemocktest"
)

// StripePlans is a plans file with one plan paid through Stripe (AD and
// CD, so that one account can hold two open orders of one company) and
// the embedded credit plan.
const StripePlans = `{"plans": [
  {"id": "stripe-single", "name": "Register printout, paid by card", "kind": "one_off", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "4.50", "credit_cost": 0, "payment": "stripe"},
  {"id": "subscription-basic", "name": "Subscription", "kind": "subscription", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "0.00", "credit_cost": 1, "watch_limit": 25}
]}`

// StripeFront is a reverse proxy on 127.0.0.1 in front of stripe-mock.
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
type StripeFront struct {
	URL         string
	Mu          sync.Mutex
	RefundKeys  []string                     // in the order asked
	refunds     map[string][]json.RawMessage // payment intent -> the refunds made of it
	made        map[string]json.RawMessage   // idempotency key -> the refund its first ask made
	Replays     map[string]int               // idempotency key -> asks after the refund was made
	Lookups     int                          // refunds lists asked for
	Found       int                          // lists that answered a refund
	failRefunds int
	LoseRefunds int
	Checkouts   int
	expiries    []string // paths of the sessions expired
}

// StartStripeFront starts stripe-mock behind a front that makes and lists
// refunds itself (the first failRefunds asked fail) and counts the
// Checkout Sessions created and expired; the rest goes to stripe-mock.
func StartStripeFront(t *testing.T, failRefunds int) *StripeFront {
	t.Helper()
	mock := stripemocktest.Start(t)
	target, err := url.Parse(mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &StripeFront{failRefunds: failRefunds, refunds: map[string][]json.RawMessage{}, made: map[string]json.RawMessage{}, Replays: map[string]int{}}
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
		f.Mu.Lock()
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/checkout/sessions":
			f.Checkouts++
		case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/expire"):
			f.expiries = append(f.expiries, r.URL.Path)
		}
		f.Mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// refund answers a refund asked: 500 for the first failRefunds, the
// refund made before under its key, or what stripe-mock answers, kept
// with its payment intent, amount and order under an id of its own.
func (f *StripeFront) refund(w http.ResponseWriter, r *http.Request, mockURL string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the caller was killed before it asked
	}
	form, _ := url.ParseQuery(string(body))
	key := r.Header.Get("Idempotency-Key")
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.RefundKeys = append(f.RefundKeys, key)
	w.Header().Set("Content-Type", "application/json")
	if made, ok := f.made[key]; ok {
		f.Replays[key]++
		w.Write(made)
		return
	}
	if len(f.RefundKeys) <= f.failRefunds {
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
		if f.LoseRefunds > 0 { // cut off mid-answer (a connection closed before any byte would be re-sent by Go's transport)
			f.LoseRefunds--
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
func (f *StripeFront) listRefunds(w http.ResponseWriter, paymentIntent string) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Lookups++
	data := f.refunds[paymentIntent]
	if data == nil {
		data = []json.RawMessage{}
	} else {
		f.Found++
	}
	raw, _ := json.Marshal(map[string]any{"object": "list", "url": "/v1/refunds", "has_more": false, "data": data})
	w.Header().Set("Content-Type", "application/json")
	w.Write(raw)
}

// MadeID is the id of the refund made under key; the caller holds mu.
func (f *StripeFront) MadeID(key string) string {
	var refund struct{ ID string }
	_ = json.Unmarshal(f.made[key], &refund)
	return refund.ID
}

// RefundsAsked returns the keys of the refunds asked so far.
func (f *StripeFront) RefundsAsked() []string {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	return append([]string(nil), f.RefundKeys...)
}

// Expired counts the calls that expired the session.
func (f *StripeFront) Expired(sessionID string) int {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	n := 0
	for _, p := range f.expiries {
		if p == "/v1/checkout/sessions/"+sessionID+"/expire" {
			n++
		}
	}
	return n
}

// StripeSecretKey is a fresh test key per run, so that the log check
// cannot pass by a key that happens to be absent anyway.
func StripeSecretKey(t *testing.T) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "sk_test_" + hex.EncodeToString(b)
}

// StripeEnv sets the Stripe secrets in the environment (servers started
// as processes inherit it) and returns the flags of a server paid
// through front.
func StripeEnv(t *testing.T, front *StripeFront) (key string, flags []string) {
	t.Helper()
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(StripePlans), 0o644); err != nil {
		t.Fatal(err)
	}
	key = StripeSecretKey(t)
	t.Setenv(app.EnvStripeSecretKey, key)
	t.Setenv(app.EnvStripeWebhookSecret, stripemocktest.Secret)
	return key, []string{"--plans", plans, "--stripe-api-url", front.URL, "--refund-retry-base", "50ms",
		"--stripe-success-url", "https://docs.example.com/orders/{ORDER_ID}?paid=1", "--stripe-cancel-url", "https://docs.example.com/orders/{ORDER_ID}"}
}

// StripeEvent is a signed checkout session event for order o.
type StripeEvent struct {
	Body      []byte
	Signature string
}

var eventSeq struct {
	sync.Mutex
	n int
}

// CheckoutEvent signs an event of typ for o's checkout session, with a
// new event id; paymentIntent is the payment's id (completed events).
func CheckoutEvent(o companydocs.Order, typ, paymentIntent string) StripeEvent {
	return CheckoutEventPaying(o, typ, paymentIntent, 450, "eur")
}

// CheckoutEventPaying is CheckoutEvent with the session's amount_total
// in cents and its currency.
func CheckoutEventPaying(o companydocs.Order, typ, paymentIntent string, cents int, currency string) StripeEvent {
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
	return StripeEvent{body, sig}
}

// PostEvent posts a Stripe event as Stripe does and returns the status
// and the outcome the server answered.
func (s *TestServer) PostEvent(t *testing.T, e StripeEvent) (int, string) {
	t.Helper()
	status, raw, _ := s.Do(t, "POST", "/api/v1/payments/stripe/events", string(e.Body), "Stripe-Signature", e.Signature, "Content-Type", "application/json; charset=utf-8")
	var answer struct {
		Outcome string `json:"outcome"`
	}
	_ = json.Unmarshal(raw, &answer)
	if status != 200 {
		return status, string(raw)
	}
	return status, answer.Outcome
}
