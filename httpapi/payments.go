package httpapi

import (
	"bytes"

	"github.com/gofiber/fiber/v2"
)

// routePaymentEvents is where Stripe posts its events (checkout session
// completed and expired). No session guards it: Stripe signs each event
// (Stripe-Signature), and the ordering service verifies the signature
// before anything else; a missing or wrong one is invalid_signature (400)
// and changes nothing.
const routePaymentEvents = "/api/v1/payments/stripe/events"

// PaymentEventBodyLimit bounds an event's body: a checkout session event
// is a few KiB, and Stripe's largest event objects stay well below this.
const PaymentEventBodyLimit = 256 << 10

// paymentEventAnswer is the answer to an event Stripe sent: what became
// of it (applied, replayed, late, unknown, ignored). Stripe reads only the
// 2xx status; any of these is final, so Stripe stops sending it.
type paymentEventAnswer struct {
	Received bool   `json:"received"`
	Outcome  string `json:"outcome"`
}

// handleStripeEvent applies a signed Stripe event to its order.
func (h orderHandlers) handleStripeEvent(c *fiber.Ctx) error {
	s := h.s
	payload := bytes.Clone(c.Body())
	sig := string(c.Request().Header.Peek("Stripe-Signature"))
	outcome, err := s.Payments.ApplyPaymentEvent(c.UserContext(), "stripe", payload, sig)
	if err != nil {
		return err
	}
	return c.JSON(paymentEventAnswer{Received: true, Outcome: outcome})
}
