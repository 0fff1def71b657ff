// Package stripepay is the Stripe payment provider of package ordering
// (ordering.PaymentProvider): a Checkout Session (Stripe's hosted payment
// page, so that no card data reaches the service) per order, the
// signature check of Stripe's events with the library's webhook package,
// and refunds through the Refunds API. It owns github.com/stripe/stripe-go:
// no other package of the binary imports it.
//
// Every call carries the idempotency key the rules derive from the order
// id, so that a call repeated by any node, after any crash, makes one
// session or one refund at Stripe. The library's own retries are off:
// the rules retry a refund from their schedule with a backoff, and a
// checkout whose call failed is refused to the client, who may try again.
package stripepay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"

	"companydocs/ordering"
)

// Config configures the provider. The keys are secrets: nothing here
// logs, prints or returns them.
type Config struct {
	// SecretKey is the API key (sk_live_..., sk_test_... or a restricted
	// rk_... with Checkout Sessions and Refunds write access).
	SecretKey string
	// WebhookSecret signs the events Stripe sends (whsec_...).
	WebhookSecret string
	// SuccessURL and CancelURL are where Stripe's page sends the customer
	// after paying or going back; "{ORDER_ID}" in them is replaced by the
	// order's id.
	SuccessURL, CancelURL string
	// SessionTTL is how long a payment page stays open (Stripe accepts
	// 30 minutes to 24 hours; default DefaultSessionTTL). The order's
	// open-order slot is held as long.
	SessionTTL time.Duration
	// APIURL replaces Stripe's API address (tests: stripe-mock on
	// 127.0.0.1); empty is https://api.stripe.com.
	APIURL string
	// HTTPClient makes the calls (default: the library's, 80 s timeout).
	HTTPClient *http.Client
}

// DefaultSessionTTL is how long a payment page stays open by default.
const DefaultSessionTTL = time.Hour

// Provider is the Stripe ordering.PaymentProvider.
type Provider struct {
	client *stripe.Client
	cfg    Config
	now    func() time.Time
}

var _ ordering.PaymentProvider = (*Provider)(nil)

// New returns the provider; it makes no call.
func New(cfg Config) (*Provider, error) {
	switch {
	case cfg.SecretKey == "":
		return nil, errors.New("stripe: no secret key")
	case cfg.WebhookSecret == "":
		return nil, errors.New("stripe: no webhook signing secret")
	case cfg.SuccessURL == "" || cfg.CancelURL == "":
		return nil, errors.New("stripe: the success and cancel URLs are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.SessionTTL < 30*time.Minute || cfg.SessionTTL > 24*time.Hour {
		return nil, fmt.Errorf("stripe: a payment page stays open 30m to 24h, not %s", cfg.SessionTTL)
	}
	retries := int64(0)
	bc := &stripe.BackendConfig{MaxNetworkRetries: &retries, HTTPClient: cfg.HTTPClient,
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}}
	if cfg.APIURL != "" {
		bc.URL = stripe.String(cfg.APIURL)
	}
	api := stripe.GetBackendWithConfig(stripe.APIBackend, bc)
	client := stripe.NewClient(cfg.SecretKey, stripe.WithBackends(&stripe.Backends{API: api, Connect: api, Uploads: api, MeterEvents: api}))
	return &Provider{client: client, cfg: cfg, now: time.Now}, nil
}

// StartCheckout creates a Checkout Session in payment mode for one line:
// the order's document at the plan's price, in cents. The order id is the
// session's client_reference_id and metadata, by which its events find
// the order.
func (p *Provider) StartCheckout(ctx context.Context, c ordering.Checkout) (*ordering.CheckoutSession, error) {
	expires := p.now().Add(p.cfg.SessionTTL)
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(c.OrderID),
		SuccessURL:        stripe.String(orderURL(p.cfg.SuccessURL, c.OrderID)),
		CancelURL:         stripe.String(orderURL(p.cfg.CancelURL, c.OrderID)),
		ExpiresAt:         stripe.Int64(expires.Unix()),
		Metadata:          map[string]string{"order_id": c.OrderID},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(strings.ToLower(c.Currency)),
				UnitAmount:  stripe.Int64(c.AmountCents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String(c.Description)},
			},
		}},
	}
	params.SetIdempotencyKey(c.IdempotencyKey)
	params.Context = ctx
	s, err := p.client.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return nil, callError("create a checkout session", err)
	}
	if s.ID == "" || s.URL == "" {
		return nil, errors.New("stripe: the checkout session has no id or url")
	}
	return &ordering.CheckoutSession{ID: s.ID, URL: s.URL, ExpiresAt: sessionExpiry(s.ExpiresAt, expires)}, nil
}

// sessionExpiry is the session's expiry as Stripe states it, or the one
// asked for when Stripe's lies before it (stripe-mock answers fixtures).
func sessionExpiry(stated int64, asked time.Time) time.Time {
	if t := time.Unix(stated, 0); stated > 0 && !t.Before(asked.Add(-time.Minute)) {
		return t.UTC()
	}
	return asked.UTC().Truncate(time.Second)
}

// ExpireCheckout expires an open Checkout Session.
func (p *Provider) ExpireCheckout(ctx context.Context, sessionID string) error {
	params := &stripe.CheckoutSessionExpireParams{}
	params.Context = ctx
	_, err := p.client.V1CheckoutSessions.Expire(ctx, sessionID, params)
	return callError("expire checkout session "+sessionID, err)
}

// Refund refunds the payment intent in full.
func (p *Provider) Refund(ctx context.Context, r ordering.RefundRequest) (string, error) {
	params := &stripe.RefundCreateParams{PaymentIntent: stripe.String(r.PaymentID), Amount: stripe.Int64(r.AmountCents),
		Reason: stripe.String(string(stripe.RefundReasonRequestedByCustomer)), Metadata: map[string]string{"order_id": r.OrderID}}
	params.SetIdempotencyKey(r.IdempotencyKey)
	params.Context = ctx
	ref, err := p.client.V1Refunds.Create(ctx, params)
	if err != nil {
		return "", callError("refund order "+r.OrderID, err)
	}
	return ref.ID, nil
}

// FindRefund lists the payment intent's refunds and returns the one
// made for the order (its metadata), or, when none is, the first of
// refunds that together pay the whole amount back (made by hand in
// Stripe's dashboard); "" when the payment is not refunded. A failed or
// canceled refund is none.
func (p *Provider) FindRefund(ctx context.Context, r ordering.RefundRequest) (string, error) {
	params := &stripe.RefundListParams{PaymentIntent: stripe.String(r.PaymentID)}
	params.Context = ctx
	var first string
	var total int64
	for ref, err := range p.client.V1Refunds.List(ctx, params) {
		if err != nil {
			return "", callError("list the refunds of order "+r.OrderID, err)
		}
		if ref.Status == stripe.RefundStatusFailed || ref.Status == stripe.RefundStatusCanceled {
			continue
		}
		if ref.Metadata["order_id"] == r.OrderID {
			return ref.ID, nil
		}
		if first == "" {
			first = ref.ID
		}
		total += ref.Amount
	}
	if first != "" && total >= r.AmountCents {
		return first, nil
	}
	return "", nil
}

// eventTolerance is how far the time an event was signed at may lie from
// now, before or after: stripe-go's five minutes. The library refuses
// only a signature older than that (its check is time.Since > tolerance),
// so ParseEvent refuses one stamped further ahead itself (signedAhead):
// else a signature made with the secret for a time days ahead would be
// taken all that while.
const eventTolerance = webhook.DefaultTolerance

// errNoEventID: a signed event without an id. The rules claim each id
// once, so the first event without one would take the empty id and
// every later one would be answered as its replay and never applied.
var errNoEventID = errors.New("stripe event: no id")

// ParseEvent verifies the Stripe-Signature header (HMAC-SHA256 over the
// timestamp and the body with the webhook secret, signed at most
// eventTolerance before or after now) and decodes a checkout session's
// event; an event without an id is refused. Events of another API
// version are read too: only the session's id, reference, payment intent
// and amount are used, which every version has.
func (p *Provider) ParseEvent(payload []byte, signature string) (*ordering.PaymentEvent, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, p.cfg.WebhookSecret,
		webhook.ConstructEventOptions{Tolerance: eventTolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		return nil, verifyError(err)
	}
	if signedAhead(signature, p.now()) {
		return nil, ordering.ErrBadSignature
	}
	if ev.ID == "" {
		return nil, errNoEventID
	}
	out := &ordering.PaymentEvent{ID: ev.ID, Kind: string(ev.Type)}
	switch ev.Type {
	case stripe.EventTypeCheckoutSessionCompleted, stripe.EventTypeCheckoutSessionAsyncPaymentSucceeded:
		out.Kind = ordering.PaymentEventCompleted
	case stripe.EventTypeCheckoutSessionExpired:
		out.Kind = ordering.PaymentEventExpired
	default:
		return out, nil
	}
	var s stripe.CheckoutSession
	if ev.Data == nil || json.Unmarshal(ev.Data.Raw, &s) != nil {
		return nil, errors.New("stripe event: data.object is not a checkout session")
	}
	if ev.Type == stripe.EventTypeCheckoutSessionCompleted && s.PaymentStatus == stripe.CheckoutSessionPaymentStatusUnpaid {
		out.Kind = string(ev.Type) // a delayed method: paid once async_payment_succeeded comes
		return out, nil
	}
	out.SessionID, out.OrderID, out.AmountCents, out.Currency = s.ID, s.ClientReferenceID, s.AmountTotal, strings.ToUpper(string(s.Currency))
	if out.OrderID == "" {
		out.OrderID = s.Metadata["order_id"]
	}
	if s.PaymentIntent != nil {
		out.PaymentID = s.PaymentIntent.ID
	}
	return out, nil
}

// verifyError is the error of an event the library refused: a missing,
// malformed, wrong or too old signature is ordering.ErrBadSignature,
// which ordering refuses as a bad signature, not as an unreadable event;
// anything else, such as a body that is no event, is wrapped as it is.
func verifyError(err error) error {
	if errors.Is(err, webhook.ErrNotSigned) || errors.Is(err, webhook.ErrInvalidHeader) || errors.Is(err, webhook.ErrNoValidSignature) || errors.Is(err, webhook.ErrTooOld) {
		return ordering.ErrBadSignature
	}
	return fmt.Errorf("stripe event: %w", err)
}

// signedAhead reports whether a timestamp (t=) of a Stripe-Signature
// header lies more than eventTolerance after now. Every t= is checked,
// not only the last one the library verifies against: a header with any
// time ahead is refused.
func signedAhead(header string, now time.Time) bool {
	for _, pair := range strings.Split(header, ",") {
		v, ok := strings.CutPrefix(pair, "t=")
		if !ok {
			continue
		}
		t, err := strconv.ParseInt(v, 10, 64)
		if err != nil || time.Unix(t, 0).Sub(now) > eventTolerance {
			return true
		}
	}
	return false
}

// callError names what failed and, for Stripe's own answer, its status,
// type and code; never the request (it carries no key, but the
// library's error text is not read further).
func callError(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *stripe.Error
	if errors.As(err, &se) {
		return fmt.Errorf("stripe: %s: HTTP %d %s %s: %s", what, se.HTTPStatusCode, se.Type, se.Code, se.Msg)
	}
	return fmt.Errorf("stripe: %s: %w", what, err)
}

func orderURL(template, orderID string) string {
	return strings.ReplaceAll(template, "{ORDER_ID}", orderID)
}
