package stripepay

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"

	"companydocs/internal/stripemocktest"
	"companydocs/ordering"
)

// testProvider is a provider that makes no call: ParseEvent needs only
// the webhook secret.
func testProvider(t *testing.T) *Provider {
	t.Helper()
	p, err := New(Config{SecretKey: "sk_test_events", WebhookSecret: stripemocktest.Secret,
		SuccessURL: "https://docs.example.com/ok", CancelURL: "https://docs.example.com/back"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// paidSession is the checkout session of a paid order.
var paidSession = map[string]any{"id": "cs_test_1", "client_reference_id": "ord_1", "payment_intent": "pi_test_1",
	"amount_total": 450, "currency": "eur", "payment_status": "paid", "status": "complete", "mode": "payment"}

// TestParseEventSignedAt: a signature is taken within eventTolerance of
// now, before or after (clocks differ by seconds), and refused as a bad
// signature further away on either side: an hour old as a day ahead.
func TestParseEventSignedAt(t *testing.T) {
	p := testProvider(t)
	for _, tc := range []struct {
		name string
		at   time.Duration // from now
		ok   bool
	}{
		{"now", 0, true},
		{"four minutes old", -4 * time.Minute, true},
		{"a minute ahead", time.Minute, true},
		{"four minutes ahead", 4 * time.Minute, true},
		{"six minutes old", -6 * time.Minute, false},
		{"an hour old", -time.Hour, false},
		{"six minutes ahead", 6 * time.Minute, false},
		{"a day ahead", 24 * time.Hour, false},
		{"a year ahead", 365 * 24 * time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, sig := stripemocktest.Event("evt_test_at", "checkout.session.completed", paidSession, stripemocktest.Secret, time.Now().Add(tc.at))
			ev, err := p.ParseEvent(body, sig)
			switch {
			case tc.ok && (err != nil || ev.ID != "evt_test_at" || ev.Kind != ordering.PaymentEventCompleted || ev.OrderID != "ord_1"):
				t.Errorf("got %+v, %v; want the completed event of ord_1", ev, err)
			case !tc.ok && !errors.Is(err, ordering.ErrBadSignature):
				t.Errorf("got %+v, %v; want ErrBadSignature", ev, err)
			}
		})
	}
}

// TestParseEventSignedAheadInAnyTimestamp: a header naming two times is
// refused when either lies ahead, whichever the library verifies.
func TestParseEventSignedAheadInAnyTimestamp(t *testing.T) {
	p := testProvider(t)
	body, sig := stripemocktest.Event("evt_test_two", "checkout.session.completed", paidSession, stripemocktest.Secret, time.Now())
	ahead := "t=" + strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	for _, h := range []string{ahead + "," + sig, sig + "," + ahead} {
		if ev, err := p.ParseEvent(body, h); !errors.Is(err, ordering.ErrBadSignature) {
			t.Errorf("header %q: got %+v, %v; want ErrBadSignature", h, ev, err)
		}
	}
}

// TestParseEventWithoutID: a signed event without an id (none, or "") is
// refused as unreadable, not as a bad signature, whatever its type: the
// rules claim each event id once, and an event with none would take the
// empty id from every later one.
func TestParseEventWithoutID(t *testing.T) {
	p := testProvider(t)
	for _, tc := range []struct {
		name, typ string
		id        any // nil: no "id" member at all
	}{
		{"no id, completed", "checkout.session.completed", nil},
		{"empty id, completed", "checkout.session.completed", ""},
		{"empty id, expired", "checkout.session.expired", ""},
		{"no id, a type the rules ignore", "customer.created", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, sig := signedWithID(t, tc.typ, tc.id)
			ev, err := p.ParseEvent(body, sig)
			if !errors.Is(err, errNoEventID) || errors.Is(err, ordering.ErrBadSignature) {
				t.Errorf("got %+v, %v; want errNoEventID", ev, err)
			}
		})
	}
	body, sig := signedWithID(t, "checkout.session.completed", "evt_test_has_one")
	if ev, err := p.ParseEvent(body, sig); err != nil || ev.ID != "evt_test_has_one" {
		t.Errorf("the same event with an id: %+v, %v", ev, err)
	}
}

// signedWithID signs, now, an event of typ for paidSession with id as its
// "id" member; nil leaves the member out.
func signedWithID(t *testing.T, typ string, id any) (body []byte, signature string) {
	t.Helper()
	obj := map[string]any{"object": "checkout.session"}
	for k, v := range paidSession {
		obj[k] = v
	}
	ev := map[string]any{"object": "event", "type": typ, "api_version": stripe.APIVersion, "created": time.Now().Unix(),
		"livemode": false, "pending_webhooks": 1, "data": map[string]any{"object": obj}}
	if id != nil {
		ev["id"] = id
	}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return body, stripemocktest.Sign(body, stripemocktest.Secret, time.Now())
}
