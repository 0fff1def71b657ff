package ordering

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"companydocs"
)

// Payments applies what payment providers say: their signed events about
// an order's checkout, and the refunds owed through them, asked by one
// refunder loop per process (RunRefunds).
type Payments struct {
	*core
	onRefund    func(outcome string)
	onEvent     func(provider, outcome string)
	refundBase  time.Duration // the wait after a refund's first failed attempt
	refundLease time.Duration // how long a claimed refund stays with this process
}

// PaymentProvider takes the money of orders on plans paid through it (a
// plan's "payment"): a hosted payment page per order, the provider's
// signed events about it, and refunds. Stripe is the first (package
// stripepay); another provider implements the same methods, and neither
// the API nor the page changes with it. Every call is idempotent under
// the key it is given, so that a retry never charges or refunds twice.
type PaymentProvider interface {
	// StartCheckout opens the hosted payment page of an order.
	StartCheckout(ctx context.Context, c Checkout) (*CheckoutSession, error)
	// ExpireCheckout closes the page of an order cancelled before it was
	// paid, so that nobody pays for it any more.
	ExpireCheckout(ctx context.Context, sessionID string) error
	// Refund pays a payment back in full and returns the provider's
	// refund id.
	Refund(ctx context.Context, r RefundRequest) (refundID string, err error)
	// FindRefund looks for a refund of the payment that the provider
	// made already (an earlier ask whose answer was lost) and returns
	// its id, or "" when there is none.
	FindRefund(ctx context.Context, r RefundRequest) (refundID string, err error)
	// ParseEvent verifies the signature of an event the provider sent
	// and decodes it: ErrBadSignature when the signature is missing or
	// does not verify.
	ParseEvent(payload []byte, signature string) (*PaymentEvent, error)
}

// ErrBadSignature: an event's signature is missing or wrong.
var ErrBadSignature = errors.New("the payment event's signature does not verify")

// Checkout is what an order's hosted payment page asks for.
type Checkout struct {
	OrderID     string
	Description string // what the customer reads on the page
	AmountCents int64
	Currency    string
	// IdempotencyKey is the order's (checkoutKey): a repeated call
	// returns the same page.
	IdempotencyKey string
}

// CheckoutSession is an open hosted payment page.
type CheckoutSession struct {
	ID        string
	URL       string
	ExpiresAt time.Time
}

// RefundRequest is the refund of an order's payment in full.
type RefundRequest struct {
	OrderID     string
	PaymentID   string
	AmountCents int64
	Currency    string
	// IdempotencyKey is the order's (refundKey): however often the
	// refund is asked, the provider makes it once.
	IdempotencyKey string
}

// Kinds of payment events the rules act on; every other is answered and
// ignored.
const (
	PaymentEventCompleted = "completed" // the customer paid
	PaymentEventExpired   = "expired"   // the page closed unpaid
)

// PaymentEvent is a verified event of a provider about a checkout.
type PaymentEvent struct {
	ID          string // the provider's event id, applied at most once
	Kind        string // PaymentEventCompleted, PaymentEventExpired or the provider's own type
	SessionID   string
	OrderID     string // the order the checkout was opened for
	PaymentID   string
	AmountCents int64
	Currency    string // ISO 4217, upper case
}

// Outcomes of a payment event (for the metrics).
const (
	PaymentEventApplied  = "applied"  // the order moved
	PaymentEventReplayed = "replayed" // the event id was applied before
	PaymentEventLate     = "late"     // the order is past the checkout
	PaymentEventUnknown  = "unknown"  // no order has the checkout
	PaymentEventIgnored  = "ignored"  // a type the rules do not act on
	PaymentEventMismatch = "mismatch" // paid, but not the order's amount or currency: not paid, flagged
)

// checkoutKey and refundKey are the idempotency keys of an order's calls
// to its provider: derived from the order id, so that every retry of any
// node sends the same one.
func checkoutKey(orderID string) string { return "companydocs-checkout-" + orderID }
func refundKey(orderID string) string   { return "companydocs-refund-" + orderID }

// paidThroughProvider reports whether a plan is paid through a payment
// provider (not with credits, nor by hand).
func paidThroughProvider(plan companydocs.Plan) bool {
	switch plan.Payment {
	case "", companydocs.PaymentCredits, companydocs.PaymentOperator:
		return false
	}
	return true
}

// startCheckout opens the payment page of a create on a plan paid
// through a provider, before its transaction (a provider that is not
// configured refuses it): what the transaction would
// refuse (a repeat, the gate, the open slot) is refused first, so that no
// page is opened for it; one opened for a create that then loses a race
// is never shown and expires unpaid. The order id is taken here, since
// the page's idempotency key is derived from it.
func (s *Orders) startCheckout(ctx context.Context, c *create) error {
	prov := s.payments[c.a.plan.Payment]
	if prov == nil { // serve refuses to start so; a program that did not wire the provider
		return companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.payment_provider_unavailable", nil)
	}
	if err := s.store.View(ctx, func(tx Tx) error { return s.refuseDuplicate(tx, c) }); err != nil {
		return err
	}
	c.id = s.ids.next()
	desc := fmt.Sprintf("%s (%s): %s", c.a.plan.Name, c.req.DocumentType, c.a.profile.Name)
	sess, err := prov.StartCheckout(ctx, Checkout{OrderID: c.id, Description: desc, AmountCents: c.a.cents,
		Currency: c.a.plan.Currency, IdempotencyKey: checkoutKey(c.id)})
	if err != nil {
		s.logger.Warn("the payment provider did not open a payment page", "provider", c.a.plan.Payment, "order", c.id, "err", err)
		return companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.payment_provider_unavailable", nil)
	}
	c.payment = &companydocs.OrderPayment{Provider: c.a.plan.Payment, Status: companydocs.PaymentOpen,
		Amount: formatCents(c.a.cents), Currency: c.a.plan.Currency,
		SessionID: sess.ID, URL: sess.URL, ExpiresAt: sess.ExpiresAt.UTC()}
	return nil
}

// ApplyPaymentEvent verifies a provider's signed event and applies it to
// its order: a completed checkout pays the order (then it goes on as a
// credit order does), an expired one cancels it and frees its slot. The
// event id is claimed in the same transaction as the order's change, so
// that each event is applied at most once on every node. A replay, a late
// event for an order past its checkout, an event for a checkout no order
// has, and a type the rules do not act on change nothing; each is
// answered, so that the provider stops sending it. A missing or wrong
// signature is invalid_signature and changes nothing.
func (s *Payments) ApplyPaymentEvent(ctx context.Context, provider string, payload []byte, signature string) (string, error) {
	outcome, err := s.applyEvent(ctx, provider, payload, signature)
	if s.onEvent != nil && s.payments[provider] != nil {
		switch {
		case err == nil:
			s.onEvent(provider, outcome)
		case isCode(err, companydocs.EINVALIDSIGNATURE):
			s.onEvent(provider, "invalid_signature")
		}
	}
	return outcome, err
}

func isCode(err error, code string) bool {
	var e *companydocs.Error
	return errors.As(err, &e) && e.Code == code
}

func (s *Payments) applyEvent(ctx context.Context, provider string, payload []byte, signature string) (string, error) {
	prov := s.payments[provider]
	if prov == nil {
		return "", companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_payment_provider", companydocs.Args{"provider": provider})
	}
	ev, err := prov.ParseEvent(payload, signature)
	if errors.Is(err, ErrBadSignature) {
		return "", companydocs.Refusal(companydocs.EINVALIDSIGNATURE, "refusal.payment_signature", nil)
	} else if err != nil || ev.ID == "" {
		// Without an id an event cannot be applied at most once: the
		// first would claim the empty id and every later one be a replay.
		return "", companydocs.Refusal(companydocs.EINVALIDEVENT, "refusal.payment_event_unreadable", nil)
	}
	if ev.Kind != PaymentEventCompleted && ev.Kind != PaymentEventExpired {
		return PaymentEventIgnored, nil
	}
	if !validOrderID(ev.OrderID) {
		return PaymentEventUnknown, nil
	}
	var outcome string
	var trs []Transition
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		outcome, trs, err = s.applyPaymentEvent(tx, provider, ev)
		return err
	})
	if err != nil {
		return "", err
	}
	s.notify(trs...)
	if len(trs) > 0 && s.onRefundDue != nil {
		s.onRefundDue()
	}
	return outcome, nil
}

// applyPaymentEvent applies ev to its order in tx: the order's row lock
// orders concurrent deliveries of one event, and the claim of the event
// id commits with the change.
func (s *Payments) applyPaymentEvent(tx Tx, provider string, ev *PaymentEvent) (string, []Transition, error) {
	rec, err := tx.Order(ev.OrderID)
	if err != nil {
		return "", nil, err
	}
	outcome, paidLate := paymentEventStanding(rec, provider, ev)
	if outcome != "" {
		return outcome, nil, nil
	}
	p := rec.Order.Payment
	now := s.now().UTC()
	claimed, err := tx.ClaimPaymentEvent(provider, ev.ID, now)
	if err != nil || !claimed {
		return PaymentEventReplayed, nil, err
	}
	if ev.Kind == PaymentEventExpired {
		p.Status = companydocs.PaymentExpired
		tr, err := s.move(tx, rec, companydocs.OrderStatusCancelled, companydocs.ActorSystem, historyNote{code: HistoryCheckoutExpired}, now)
		return PaymentEventApplied, []Transition{tr}, err
	}
	if ev.Kind == PaymentEventCompleted && !paymentMatches(ev, p) {
		tr, err := s.flagMismatch(tx, rec, ev, now)
		return PaymentEventMismatch, []Transition{tr}, err
	}
	p.Status, p.PaymentID, p.PaidAt = companydocs.PaymentPaid, ev.PaymentID, &now
	if paidLate {
		tr, err := s.refundLatePayment(tx, rec, now)
		return PaymentEventApplied, []Transition{tr}, err
	}
	note := historyNote{code: HistoryPaidOnline, params: companydocs.Params{Amount: p.Amount, Currency: p.Currency, Provider: provider}}
	tr, err := s.move(tx, rec, companydocs.OrderStatusPaid, companydocs.ActorSystem, note, now)
	return PaymentEventApplied, []Transition{tr}, err
}

// paymentEventStanding says whether ev may change rec, before its id is
// claimed (a refused event is no replay, its id stays free):
// PaymentEventUnknown when the order or its checkout session is not the
// event's, PaymentEventLate when the checkout is over, "" when it
// applies. paidLate is a completed payment of an order cancelled before
// it was paid: it applies, and the payment is refunded.
func paymentEventStanding(rec *OrderRecord, provider string, ev *PaymentEvent) (outcome string, paidLate bool) {
	if rec == nil || rec.Order.Payment == nil || rec.Order.Payment.Provider != provider || rec.Order.Payment.SessionID != ev.SessionID {
		return PaymentEventUnknown, false
	}
	p := rec.Order.Payment
	paidLate = ev.Kind == PaymentEventCompleted && p.PaymentID == "" && rec.Order.Status == companydocs.OrderStatusCancelled
	if !paidLate && (rec.Order.Status != companydocs.OrderStatusPreviewReady || p.Status != companydocs.PaymentOpen) {
		return PaymentEventLate, false
	}
	return "", paidLate
}

// The ids of applied payment events are kept paymentEventsKept, ten times
// the three days Stripe sends an event again for, so that a replay
// within them is always recognised; older ones are deleted hourly by the
// refunder (RunRefunds), in batches of pruneBatch per transaction.
const (
	paymentEventsKept       = 30 * 24 * time.Hour
	paymentEventsPruneEvery = time.Hour
	pruneBatch              = 1000
)

// prunePaymentEvents deletes the ids of the events applied more than
// paymentEventsKept ago and returns how many.
func (s *Payments) prunePaymentEvents(ctx context.Context) (int, error) {
	before := s.now().UTC().Add(-paymentEventsKept)
	total := 0
	for ctx.Err() == nil {
		var n int
		err := s.store.Update(ctx, func(tx Tx) error {
			var err error
			n, err = tx.PrunePaymentEvents(before, pruneBatch)
			return err
		})
		total += n
		if err != nil || n < pruneBatch {
			return total, err
		}
	}
	return total, ctx.Err()
}

// paymentMatches reports whether a completed checkout paid the order's
// price: its amount in cents and its currency.
func paymentMatches(ev *PaymentEvent, p *companydocs.OrderPayment) bool {
	cents, err := parseCents(p.Amount)
	return err == nil && cents == ev.AmountCents && strings.EqualFold(ev.Currency, p.Currency)
}

// flagMismatch records a payment that is not the order's price (a
// session changed at the provider, or another currency): the order is
// not paid and stays where it was, its payment says mismatch (the
// checkout is over: no payment page is offered again), its history says
// what was paid, and the payment's id is kept, so that an operator can
// refund it at the provider and cancel the order.
func (s *Payments) flagMismatch(tx Tx, rec *OrderRecord, ev *PaymentEvent, at time.Time) (Transition, error) {
	o, p := &rec.Order, rec.Order.Payment
	p.Status, p.PaymentID = companydocs.PaymentMismatch, ev.PaymentID
	o.NextStep = step(NextStepPayment, StepPaymentMismatch,
		&companydocs.Params{OrderID: o.ID, Amount: p.Amount, Currency: p.Currency, DocumentType: o.DocumentType, CompanyName: o.Company.Name})
	s.logger.Warn("a payment does not match its order's price; the order is not paid", "order", rec.Order.ID,
		"paid", formatCents(ev.AmountCents)+" "+ev.Currency, "price", p.Amount+" "+p.Currency)
	params := companydocs.Params{Amount: formatCents(ev.AmountCents), Currency: strings.ToUpper(ev.Currency), Provider: p.Provider}
	return s.annotate(tx, rec, HistoryPaymentMismatch, params, EventOrderPaymentMismatch, at)
}

// refundLatePayment refunds a payment that arrived after its order was
// cancelled (the customer paid while the cancel went through): the order
// stays cancelled, its history says so, and the refund is scheduled.
func (s *Payments) refundLatePayment(tx Tx, rec *OrderRecord, at time.Time) (Transition, error) {
	if err := s.startRefund(tx, rec, at); err != nil {
		return Transition{}, err
	}
	p := rec.Order.Payment
	params := companydocs.Params{RefundedAmount: p.Amount, Currency: p.Currency, Provider: p.Provider}
	return s.annotate(tx, rec, HistoryPaidAfterCancel, params, EventOrderRefundPending, at)
}

// startRefund records a pending refund of the order's payment and
// schedules it, in the transaction of the change that calls for it; the
// refunder asks the provider after the commit (RunRefunds).
func (s *core) startRefund(tx Tx, rec *OrderRecord, at time.Time) error {
	p := rec.Order.Payment
	p.Refund = &companydocs.PaymentRefund{Status: companydocs.RefundPending, Amount: p.Amount, Currency: p.Currency, RequestedAt: at, NextAttemptAt: &at}
	if err := tx.ScheduleRefund(rec.Order.ID, at); err != nil {
		return fmt.Errorf("schedule the refund of order %s: %w", rec.Order.ID, err)
	}
	return nil
}

// annotate adds a history entry that changes no status (a refund pending
// or made), stores the order and writes its event of type typ.
func (s *core) annotate(tx Tx, rec *OrderRecord, code string, params companydocs.Params, typ string, at time.Time) (Transition, error) {
	o := &rec.Order
	at = notBefore(at, rec)
	o.History = append(rec.history(), companydocs.HistoryEntry{Status: o.Status, At: at, Actor: companydocs.ActorSystem,
		Note: say("history."+code, &params), Code: code, Params: &params})
	evt, err := s.nextEventID(tx, rec)
	if err != nil {
		return Transition{}, err
	}
	if err := tx.UpdateOrder(rec, o.Status); err != nil {
		return Transition{}, fmt.Errorf("store order %s: %w", o.ID, err)
	}
	if err := writeEventOf(tx, rec, evt, typ, at); err != nil {
		return Transition{}, err
	}
	return Transition{OrderID: o.ID, Account: rec.Account, From: o.Status, To: o.Status, Actor: companydocs.ActorSystem, EventID: evt}, nil
}

// expireCheckout closes the payment page of an order cancelled before it
// was paid, after the cancel committed (afterPaymentChange). A failure is
// logged: the page
// expires by itself, and a payment made on it meanwhile is refunded
// (refundLatePayment).
func (s *core) expireCheckout(o *companydocs.Order) {
	prov := s.payments[o.Payment.Provider]
	if prov == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout)
	defer cancel()
	if err := prov.ExpireCheckout(ctx, o.Payment.SessionID); err != nil {
		s.logger.Warn("the payment page of a cancelled order could not be closed; it expires by itself", "order", o.ID, "err", err)
	}
}

// providerTimeout bounds one call to a payment provider.
const providerTimeout = 30 * time.Second
