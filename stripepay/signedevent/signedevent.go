// Package signedevent makes Stripe's checkout session events as Stripe
// sends them, signed with a webhook secret: what a test of the payment
// flow posts without Stripe's servers (companydocs payments
// send-test-event, and the tests' stripe-mock helpers).
package signedevent

import (
	"encoding/json"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// Session is what an event says of an order's Checkout Session.
type Session struct {
	ID            string // the session's id, cs_...
	OrderID       string // its client_reference_id and metadata.order_id
	AmountCents   int64
	Currency      string // lower case, as Stripe writes it
	PaymentIntent string // completed events: the payment's id, pi_...
}

// Checkout is a checkout session event of type typ
// (checkout.session.completed, paid; or checkout.session.expired) for s,
// with id, signed with the webhook secret at at: the JSON body and its
// Stripe-Signature header.
func Checkout(id, typ string, s Session, secret string, at time.Time) (body []byte, signature string) {
	session := map[string]any{"object": "checkout.session", "id": s.ID, "client_reference_id": s.OrderID,
		"amount_total": s.AmountCents, "currency": s.Currency, "mode": "payment",
		"payment_status": "paid", "status": "complete", "metadata": map[string]string{"order_id": s.OrderID}}
	if typ == string(stripe.EventTypeCheckoutSessionExpired) {
		session["payment_status"], session["status"] = "unpaid", "expired"
	}
	if s.PaymentIntent != "" {
		session["payment_intent"] = s.PaymentIntent
	}
	return Event(id, typ, session, secret, at)
}

// Event is an event of typ with data.object obj, as Stripe sends it,
// signed with secret at at.
func Event(id, typ string, obj map[string]any, secret string, at time.Time) (body []byte, signature string) {
	body, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": typ, "api_version": stripe.APIVersion, "created": at.Unix(),
		"livemode": false, "pending_webhooks": 1, "data": map[string]any{"object": obj},
	})
	if err != nil {
		panic(err) // plain maps of strings and numbers
	}
	return body, Sign(body, secret, at)
}

// Sign returns the Stripe-Signature header of body signed with secret at
// at, as Stripe writes it.
func Sign(body []byte, secret string, at time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header
}
