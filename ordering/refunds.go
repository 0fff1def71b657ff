package ordering

import (
	"context"
	"fmt"
	"strings"
	"time"

	"companydocs"
)

// Refunds through a payment provider: the change that calls for one (a
// paid order cancelled or failed, a payment after the cancel) records it
// pending in the order and schedules it in its own transaction
// (startRefund); the refunder then asks the provider, with the order's
// idempotency key, and records the answer: refunded, with a history
// entry and an order.refunded event, or tried again later with a backoff
// that doubles from Options.RefundRetryBase up to maxRefundBackoff, for
// as long as it takes (a refund is owed, not given up).
//
// A refund is asked of the provider at most once per order, also across
// crashes: before the call the refunder commits that the ask is in
// flight (PaymentRefund.AskedAt), and the answer's record clears it. A
// refund found in flight was asked by a process that stopped before it
// recorded the answer; one refused or unanswered may have been made all
// the same (Stripe's 5xx answers leave it open, and its idempotency
// keys are kept 24 hours only). So every attempt after the first looks
// the refund up at the provider first (FindRefund) and records the one
// found, without asking; only when the provider has none is it asked
// (again under the order's key).
//
// One loop per process asks, one refund at a time. On a store shared by
// several nodes a claim moves the refund's time by Options.RefundLease
// first, so that two nodes never ask at once and a node killed mid-ask
// leaves the refund to be looked up after the lease; on bbolt the next
// start looks it up at once.

// Defaults of the refunder.
const (
	DefaultRefundRetryBase = 30 * time.Second
	DefaultRefundLease     = 2 * time.Minute
	maxRefundBackoff       = 6 * time.Hour
	refundBatch            = 16
)

// refundTask is one due refund and the provider to ask.
type refundTask struct {
	prov PaymentProvider
	req  RefundRequest
	// lookUp: an attempt before this one began (an ask in flight whose
	// answer was lost, or one refused or unanswered), so the provider may
	// have made the refund already.
	lookUp bool
}

// RunRefunds asks the providers for the refunds due until ctx ends,
// waking at the earliest next time or when wake receives; at its start
// and hourly it prunes the ids of payment events past their keep. Call
// it in its own goroutine.
func (s *Payments) RunRefunds(ctx context.Context, wake <-chan struct{}) {
	var pruneAt time.Time
	for {
		if now := s.now(); !now.Before(pruneAt) {
			if _, err := s.prunePaymentEvents(ctx); err != nil && ctx.Err() == nil {
				s.logger.Error("prune the applied payment events", "err", err)
			}
			pruneAt = now.Add(paymentEventsPruneEvery)
		}
		next := s.refundRound(ctx)
		wait := time.Minute
		if !next.IsZero() {
			wait = max(time.Until(next), 10*time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// refundRound claims the due refunds, asks for each and records it, and
// returns when to look again.
func (s *Payments) refundRound(ctx context.Context) time.Time {
	tasks, next, err := s.claimRefunds(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("claim due refunds", "err", err)
		}
		return s.now().Add(s.refundBase)
	}
	recorded := true
	for _, t := range tasks {
		if ctx.Err() != nil {
			return next
		}
		recorded = s.askRefund(ctx, t) && recorded
	}
	switch {
	case !recorded: // the store failed: do not ask again before it may have recovered
		return s.now().Add(s.refundBase)
	case len(tasks) > 0:
		return s.now() // more may be due
	}
	return next
}

// claimRefunds claims the due refunds for the lease and reads what each
// asks for.
func (s *Payments) claimRefunds(ctx context.Context) ([]refundTask, time.Time, error) {
	var tasks []refundTask
	var next time.Time
	err := s.store.Update(ctx, func(tx Tx) error {
		tasks = tasks[:0]
		ids, n, err := tx.ClaimDueRefunds(s.now().UTC(), s.refundLease, refundBatch)
		if err != nil {
			return err
		}
		next = n
		for _, id := range ids {
			rec, err := getOrder(tx, id)
			if err != nil {
				return err
			}
			p := rec.Order.Payment
			if p == nil || p.Refund == nil || p.Refund.Status != companydocs.RefundPending || s.payments[p.Provider] == nil {
				if err := tx.UnscheduleRefund(id); err != nil {
					return err
				}
				continue
			}
			cents, err := parseCents(p.Amount)
			if err != nil {
				return fmt.Errorf("order %s: payment amount %q: %w", id, p.Amount, err)
			}
			tasks = append(tasks, refundTask{prov: s.payments[p.Provider], req: RefundRequest{OrderID: id, PaymentID: p.PaymentID,
				AmountCents: cents, Currency: p.Currency, IdempotencyKey: refundKey(id)}, lookUp: p.Refund.Attempts > 0 || p.Refund.AskedAt != nil})
		}
		return nil
	})
	return tasks, next, err
}

// Outcomes of a refund attempt (for the metrics).
const (
	RefundOutcomeRefunded = "refunded" // asked, and the provider made it
	RefundOutcomeFound    = "found"    // looked up: an earlier ask had made it, not asked again
	RefundOutcomeRetry    = "retry"    // refused, unanswered, or the look-up failed: tried again later
)

// refundAnswer is what one attempt learnt of the provider.
type refundAnswer struct {
	refundID string // the refund made or found
	err      error  // the ask or the look-up failed
	found    bool   // refundID was found by a look-up, not made by this ask
}

// askRefund makes one attempt at a refund and records its outcome; false
// when the outcome could not be recorded.
func (s *Payments) askRefund(ctx context.Context, t refundTask) bool {
	if t.lookUp {
		callCtx, cancel := context.WithTimeout(ctx, providerTimeout)
		refundID, err := t.prov.FindRefund(callCtx, t.req)
		cancel()
		if ctx.Err() != nil {
			return true // shutting down: looked up again after the next start
		}
		if err != nil || refundID != "" {
			return s.settleRefund(ctx, t.req.OrderID, refundAnswer{refundID: refundID, err: err, found: true})
		}
	}
	asking, err := s.markRefundAsked(ctx, t.req.OrderID)
	if err != nil {
		s.logger.Error("record a refund's ask before it is made; it is tried again later", "order", t.req.OrderID, "err", err)
		return false
	}
	if !asking {
		return true
	}
	callCtx, cancel := context.WithTimeout(ctx, providerTimeout)
	refundID, err := t.prov.Refund(callCtx, t.req)
	cancel()
	if ctx.Err() != nil {
		return true // shutting down mid-ask: in flight, looked up after the next start (or the lease)
	}
	return s.settleRefund(ctx, t.req.OrderID, refundAnswer{refundID: refundID, err: err})
}

// markRefundAsked commits that the order's refund is being asked of the
// provider, before the call; false when it is no longer pending
// (recorded by another node meanwhile).
func (s *Payments) markRefundAsked(ctx context.Context, orderID string) (bool, error) {
	asking := false
	err := s.store.Update(ctx, func(tx Tx) error {
		rec, err := getOrder(tx, orderID)
		if err != nil {
			return err
		}
		p := rec.Order.Payment
		if asking = p != nil && p.Refund != nil && p.Refund.Status == companydocs.RefundPending; !asking {
			return tx.UnscheduleRefund(orderID)
		}
		now := s.now().UTC()
		p.Refund.AskedAt = &now
		return tx.UpdateOrder(rec, rec.Order.Status)
	})
	return asking && err == nil, err
}

// settleRefund records an attempt's outcome and counts it; false when
// it could not be recorded.
func (s *Payments) settleRefund(ctx context.Context, orderID string, a refundAnswer) bool {
	outcome := RefundOutcomeRefunded
	switch {
	case a.err != nil:
		outcome = RefundOutcomeRetry
		s.logger.Warn("a refund attempt at the payment provider failed (refused, unanswered, or not looked up); it is tried again later", "order", orderID, "err", a.err)
	case a.found:
		outcome = RefundOutcomeFound
		s.logger.Info("the payment provider had made a refund whose answer was lost; recorded without asking again", "order", orderID, "refund", a.refundID)
	}
	if err := s.recordRefund(ctx, orderID, a); err != nil {
		s.logger.Error("record a refund's outcome; it is looked up and tried again later", "order", orderID, "err", err)
		return false
	}
	if s.onRefund != nil {
		s.onRefund(outcome)
	}
	return true
}

// recordRefund records an attempt's outcome: refunded (made or found),
// or failed and scheduled again with the backoff. Either way the ask is
// no longer in flight.
func (s *Payments) recordRefund(ctx context.Context, orderID string, a refundAnswer) error {
	var tr *Transition
	err := s.store.Update(ctx, func(tx Tx) error {
		tr = nil
		rec, err := getOrder(tx, orderID)
		if err != nil {
			return err
		}
		p := rec.Order.Payment
		if p == nil || p.Refund == nil || p.Refund.Status != companydocs.RefundPending {
			return tx.UnscheduleRefund(orderID) // recorded by another node meanwhile
		}
		r, now := p.Refund, s.now().UTC()
		r.Attempts++
		r.AskedAt = nil
		if a.err != nil {
			at := now.Add(refundBackoff(s.refundBase, r.Attempts))
			r.NextAttemptAt, r.LastError = &at, errorLine(a.err)
			if err := tx.UpdateOrder(rec, rec.Order.Status); err != nil {
				return err
			}
			return tx.ScheduleRefund(orderID, at)
		}
		r.Status, r.RefundID, r.RefundedAt, r.NextAttemptAt, r.LastError = companydocs.RefundRefunded, a.refundID, &now, nil, ""
		if err := tx.UnscheduleRefund(orderID); err != nil {
			return err
		}
		params := companydocs.Params{RefundedAmount: r.Amount, Currency: r.Currency, Provider: p.Provider}
		t, err := s.annotate(tx, rec, HistoryRefunded, params, EventOrderRefunded, now)
		tr = &t
		return err
	})
	if err == nil && tr != nil {
		s.notify(*tr)
	}
	return err
}

// refundBackoff is the wait after the n-th failed attempt: base, doubling,
// at most maxRefundBackoff.
func refundBackoff(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < maxRefundBackoff; i++ {
		d *= 2
	}
	return min(d, maxRefundBackoff)
}

// errorLine is the first line of an error, at most 200 bytes, for the
// operator's view of a refund.
func errorLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// RefundsPending counts the refunds waiting for their provider (for the
// metrics).
func (s *Payments) RefundsPending() (n int, err error) {
	err = s.store.View(context.Background(), func(tx Tx) error {
		n, err = tx.CountScheduledRefunds()
		return err
	})
	return n, err
}
