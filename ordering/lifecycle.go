package ordering

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"companydocs"
)

// Transition is a committed change of an order's status, handed to
// Options.OnTransition. From is "" for a creation; From equals To for a
// change that wrote an event but kept the status (a refund through a
// payment provider).
type Transition struct {
	OrderID, Account string
	From, To, Actor  string
	EventID          string
}

// history returns the order's history; orders stored before histories
// existed get their creation entry synthesized.
func (r *OrderRecord) history() []companydocs.HistoryEntry {
	if len(r.Order.History) > 0 {
		return r.Order.History
	}
	return []companydocs.HistoryEntry{createdEntry(r.Order.CreatedAt)}
}

// createdEntry is the first entry of an order's history.
func createdEntry(at time.Time) companydocs.HistoryEntry {
	return companydocs.HistoryEntry{Status: companydocs.OrderStatusPreviewReady, At: at, Actor: companydocs.ActorClient,
		Note: say("history."+HistoryCreated, nil), Code: HistoryCreated, Params: &companydocs.Params{}}
}

// move changes the order's status inside tx: the check against the one
// transition table, the refund, the history entry, the next step, the
// indexes, the stored record and the outbox event all commit together or
// not at all. Since a terminal status allows no transition, a refund can
// happen only once, whatever is retried.
func (s *core) move(tx Tx, rec *OrderRecord, to, actor string, n historyNote, at time.Time) (Transition, error) {
	o := &rec.Order
	from := o.Status
	if !companydocs.CanTransition(from, to, actor) {
		return Transition{}, companydocs.ErrInvalidTransition(o.ID, from, to, actor)
	}
	if to == companydocs.OrderStatusPaid && actor == companydocs.ActorOperator && o.Payment != nil {
		return Transition{}, companydocs.Refusal(companydocs.EINVALIDTRANSITION, "refusal.paid_through_provider", companydocs.Args{"order": o.ID, "provider": o.Payment.Provider})
	}
	ended := &companydocs.Params{Note: n.params.Note} // the params of a failed or cancelled order's next step
	at = notBefore(at, rec)
	if to == companydocs.OrderStatusCancelled || to == companydocs.OrderStatusFailed {
		refunded, err := s.refund(tx, rec, from, at)
		if err != nil {
			return Transition{}, err
		}
		addRefund(ended, o, refunded)
		addRefund(&n.params, o, refunded)
	}
	note := say("history."+n.code, &n.params)
	o.History = append(rec.history(), companydocs.HistoryEntry{Status: to, At: at, Actor: actor, Note: note, Code: n.code, Params: &n.params})
	o.Status, o.WorkflowStatus = to, companydocs.WorkflowOf(to)
	o.NextStep = s.nextStepAfter(rec, ended)
	evt, err := s.nextEventID(tx, rec) // stored with the order
	if err != nil {
		return Transition{}, err
	}
	if err := s.reindex(tx, rec, from); err != nil {
		return Transition{}, err
	}
	if err := writeEvent(tx, rec, evt, at); err != nil {
		return Transition{}, err
	}
	return Transition{OrderID: o.ID, Account: rec.Account, From: from, To: to, Actor: actor, EventID: evt}, nil
}

// notBefore returns at, or the time of the order's latest history entry
// if that is later: a node whose clock is behind the one that wrote the
// previous change must not date the next one, and its event (the first
// attempt of a webhook delivery is due at the event's time), before it.
func notBefore(at time.Time, rec *OrderRecord) time.Time {
	h := rec.history()
	if last := h[len(h)-1].At; at.Before(last) {
		return last
	}
	return at
}

// refund gives the credits of a cancelled or failed order back and
// reports whether anything is refunded: the credits, a payment its
// provider refunds (scheduled here, asked after the commit), or a
// payment the operator refunds outside the service. An order whose
// payment page is still open closes it: unpaid, it is expired.
func (s *core) refund(tx Tx, rec *OrderRecord, from string, at time.Time) (bool, error) {
	o := &rec.Order
	if p := o.Payment; p != nil {
		switch {
		case p.Status == companydocs.PaymentOpen:
			p.Status = companydocs.PaymentExpired
			return false, nil
		case p.Status == companydocs.PaymentPaid && p.Refund == nil:
			return true, s.startRefund(tx, rec, at)
		}
		return false, nil
	}
	if o.CreditsCharged > 0 && o.CreditsRefunded == 0 {
		if _, err := tx.AddCredits(rec.Account, o.CreditsCharged); err != nil {
			return false, fmt.Errorf("refund order %s: %w", o.ID, err)
		}
		o.CreditsRefunded = o.CreditsCharged
		return true, nil
	}
	return from != companydocs.OrderStatusPreviewReady && o.Total != "" && o.Total != "0.00" && o.CreditsCharged == 0, nil
}

// addRefund names what a refund gave back in the params of the next step
// and the history entry: the credits, or the payment the operator refunds.
func addRefund(p *companydocs.Params, o *companydocs.Order, refunded bool) {
	switch {
	case !refunded:
	case o.CreditsRefunded > 0:
		p.RefundedCredits = o.CreditsRefunded
	case o.Payment != nil:
		p.RefundedAmount, p.Currency, p.Provider = o.Payment.Amount, o.Payment.Currency, o.Payment.Provider
	default:
		p.RefundedAmount, p.Currency = o.Total, o.Currency
	}
}

// reindex stores the moved order (the store keeps its status index)
// and, once it is terminal, frees its open-order slot so that the same
// order can be made again.
func (s *core) reindex(tx Tx, rec *OrderRecord, from string) error {
	o := &rec.Order
	if err := tx.UpdateOrder(rec, from); err != nil {
		return fmt.Errorf("store order %s: %w", o.ID, err)
	}
	if !companydocs.TerminalStatus(o.Status) {
		return nil
	}
	slot := OpenSlot{Account: rec.Account, ProfileID: o.CompanyProfileID, DocumentType: o.DocumentType, PlanID: o.PlanID}
	holder, err := tx.OpenOrder(slot)
	if err != nil || holder != o.ID {
		return err // another order's slot (this one's was never claimed, e.g. stored before slots) stays
	}
	return tx.ReleaseOpenOrder(slot)
}

// Next-step kinds after creation.
const (
	NextStepDownload = "download" // DELIVERED: the document is ready
	NextStepNone     = "none"     // FAILED or CANCELLED
)

// nextStepAfter says what happens next once an order has moved.
// ended holds the params of a failed or cancelled order's step: the note
// as given (said quoted, never spliced into the sentence) and what was
// refunded.
func (s *core) nextStepAfter(rec *OrderRecord, ended *companydocs.Params) companydocs.NextStep {
	o := &rec.Order
	switch o.Status {
	case companydocs.OrderStatusPaid:
		return step(NextStepDelivery, StepPaid, &companydocs.Params{DocumentType: o.DocumentType, CompanyName: o.Company.Name})
	case companydocs.OrderStatusRequested:
		return step(NextStepDelivery, StepRequested, &companydocs.Params{})
	case companydocs.OrderStatusDelivered:
		return step(NextStepDownload, StepDelivered, &companydocs.Params{})
	case companydocs.OrderStatusFailed:
		return step(NextStepNone, StepFailed, ended)
	}
	return step(NextStepNone, StepCancelled, ended)
}

// CancelOrder cancels one of the client's own orders while it is
// PREVIEW_READY or PAID, refunding its credits. Another account's order
// is not_found.
func (s *Orders) CancelOrder(ctx context.Context, account, id, note string) (*companydocs.Order, error) {
	if err := s.requireRole(account, companydocs.RoleClient); err != nil {
		return nil, err
	}
	if err := companydocs.CheckLength("note", note, companydocs.MaxNote); err != nil {
		return nil, err
	}
	return s.change(ctx, account, id, companydocs.OrderStatusCancelled, companydocs.ActorClient, noteOr(note, HistoryCancelledByClient), nil)
}

// OperatorAction makes a transition as operator: pay (payment confirmed),
// request (asked of the register), fail (note is the reason, required)
// and cancel. Deliver is separate, since it carries the document.
func (s *Orders) OperatorAction(ctx context.Context, operator, id, action, note string) (*companydocs.Order, error) {
	if err := s.requireRole(operator, companydocs.RoleOperator); err != nil {
		return nil, err
	}
	to, ok := actionStatus[action]
	if !ok || action == ActionDeliver {
		return nil, fmt.Errorf("unknown operator action %q", action)
	}
	field := "note"
	if action == ActionFail {
		field = "reason"
	}
	if err := companydocs.CheckLength(field, note, companydocs.MaxNote); err != nil {
		return nil, err
	}
	note = strings.TrimSpace(note)
	if action == ActionFail && note == "" {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.reason_required", nil)
	}
	defaults := map[string]string{
		ActionPay:     HistoryPaymentConfirmed,
		ActionRequest: HistoryRequested,
		ActionCancel:  HistoryCancelledByOperator,
	}
	return s.change(ctx, "", id, to, companydocs.ActorOperator, noteOr(note, defaults[action]), nil)
}

// History codes: one per sentence of a history entry's note, so that a
// client can say it in its own language with the entry's params. A note a
// person wrote is HistoryNoteGiven, its words in params.note as written.
// Any code may also carry what the transition refunded: refunded_credits,
// or refunded_amount with currency.
const (
	HistoryCreated             = "order_created"
	HistoryPaidAtCreation      = "paid_at_creation" // credits
	HistoryPaymentConfirmed    = "payment_confirmed"
	HistoryRequested           = "requested_from_register"
	HistoryDelivered           = "delivered"
	HistoryCancelledByClient   = "cancelled_by_client"
	HistoryCancelledByOperator = "cancelled_by_operator"
	HistoryNoteGiven           = "note" // note
	// Payments through a provider (provider names it).
	HistoryPaidOnline      = "paid_online"       // amount, currency, provider (the provider)
	HistoryCheckoutExpired = "checkout_expired"  // the payment page closed unpaid
	HistoryPaidAfterCancel = "paid_after_cancel" // refunded_amount, currency, provider
	HistoryRefunded        = "refunded"          // refunded_amount, currency, provider
	HistoryPaymentMismatch = "payment_mismatch"  // amount, currency (what was paid), provider
)

// historyNote is what a transition writes into the history: a code with
// params, said in English from the catalog ("history.<code>"); a person's
// words are params.note, quoted, never spliced into a sentence.
type historyNote struct {
	code   string
	params companydocs.Params
}

// noteOr is the note a person gave, or the service's own code when none.
func noteOr(note, code string) historyNote {
	if note = strings.TrimSpace(note); note != "" {
		return historyNote{code: HistoryNoteGiven, params: companydocs.Params{Note: note}}
	}
	return historyNote{code: code}
}

// CheckDelivery refuses what Deliver would refuse before it reads a byte
// of the PDF: an account that is not an operator, an order that does not
// exist or cannot move to DELIVERED (it must be REQUESTED). A front end
// calls it before it accepts a large body; Deliver checks again, in its
// transaction, since the order may change in between.
func (s *Orders) CheckDelivery(ctx context.Context, operator, id string) error {
	if err := s.requireRole(operator, companydocs.RoleOperator); err != nil {
		return err
	}
	var from string
	if err := s.store.View(ctx, func(tx Tx) error {
		rec, err := getOrder(tx, id)
		if err == nil {
			from = rec.Order.Status
		}
		return err
	}); err != nil {
		return err
	}
	if !companydocs.CanTransition(from, companydocs.OrderStatusDelivered, companydocs.ActorOperator) {
		return companydocs.ErrInvalidTransition(id, from, companydocs.OrderStatusDelivered, companydocs.ActorOperator)
	}
	return nil
}

// Deliver reads the PDF from pdf into a temporary file (see receive: at
// most MaxDocumentSize, starting "%PDF-", hashed on the way), stores it
// durably, then moves the REQUESTED order to DELIVERED with the document.
// In the data directory the file is on disk (synced, renamed, directory
// synced) before the transition commits; a crash in between leaves an
// unreferenced file that New removes at the next start. A SharedStore
// keeps the PDF in the transition's own transaction, read from the
// temporary file chunk by chunk: both commit, or neither.
func (s *Orders) Deliver(ctx context.Context, operator, id string, pdf io.Reader) (*companydocs.Order, error) {
	if err := s.CheckDelivery(ctx, operator, id); err != nil {
		return nil, err
	}
	in, err := receive(s.docs, pdf)
	if err != nil {
		return nil, err
	}
	defer in.Discard()
	if err := in.Keep(in.sha); err != nil {
		return nil, err
	}
	doc := &companydocs.OrderDocument{SHA256: in.sha, Size: in.size, ContentType: "application/pdf"}
	if s.docURL != nil {
		doc.DownloadURL = s.docURL(id)
	}
	return s.change(ctx, "", id, companydocs.OrderStatusDelivered, companydocs.ActorOperator, historyNote{code: HistoryDelivered}, &delivery{doc, in})
}

// delivery is the document a DELIVERED transition attaches.
type delivery struct {
	doc *companydocs.OrderDocument
	pdf *incoming // stored in the transaction where the store keeps it there
}

// change runs one transition in a shared write transaction. owner, when
// not empty, must own the order (else not_found).
func (s *Orders) change(ctx context.Context, owner, id, to, actor string, note historyNote, d *delivery) (*companydocs.Order, error) {
	if !validOrderID(id) {
		return nil, errOrderNotFound(id)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out *companydocs.Order
	var tr Transition
	err := s.store.Update(ctx, func(tx Tx) error {
		rec, err := getOrder(tx, id)
		if err != nil {
			return err
		}
		if owner != "" && rec.Account != owner {
			return errOrderNotFound(id)
		}
		// Refused before anything is written, so that a store sharing
		// one commit between writes need not run the others again.
		if !companydocs.CanTransition(rec.Order.Status, to, actor) {
			return companydocs.ErrInvalidTransition(id, rec.Order.Status, to, actor)
		}
		if d != nil {
			if err := s.attach(tx, rec, d); err != nil {
				return err
			}
		}
		if tr, err = s.move(tx, rec, to, actor, note, s.now().UTC()); err != nil {
			return err
		}
		out = rec.orderFor(roleOfActor(actor))
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.notify(tr)
	s.afterPaymentChange(out)
	return out, nil
}

// afterPaymentChange does, after a change committed, what its payment
// asks of the provider: close the page of an order cancelled unpaid, wake
// the refunder for a refund it scheduled.
func (s *core) afterPaymentChange(o *companydocs.Order) {
	if o == nil || o.Payment == nil {
		return
	}
	if r := o.Payment.Refund; r != nil && r.Status == companydocs.RefundPending && s.onRefundDue != nil {
		s.onRefundDue()
	}
	if o.Status == companydocs.OrderStatusCancelled && o.Payment.PaymentID == "" {
		go s.expireCheckout(o) // the cancel's answer does not wait for the provider
	}
}

// roleOfActor is the role of the account that made a change: the
// answer shows the order as that account sees it.
func roleOfActor(actor string) string {
	if actor == companydocs.ActorOperator {
		return companydocs.RoleOperator
	}
	return companydocs.RoleClient
}

// attach records the delivered document (Documents.Attach stores it
// here where the store keeps documents in its transactions);
// the test hook fails the transaction after the document is stored.
func (s *Orders) attach(tx Tx, rec *OrderRecord, d *delivery) error {
	doc := d.doc
	if err := s.docs.Attach(tx, doc.SHA256, d.pdf.Reader()); err != nil {
		return err
	}
	if s.failDelivery != nil {
		if err := s.failDelivery(); err != nil {
			return err
		}
	}
	rec.Order.Document = doc
	return tx.AddDocumentRef(doc.SHA256, rec.Order.ID)
}

func (s *core) notify(trs ...Transition) {
	if s.onChange == nil {
		return
	}
	for _, tr := range trs {
		s.onChange(tr)
	}
}

// CountByStatus counts the orders in each status (for the metrics gauge
// at start; transitions keep it afterwards).
func (s *Orders) CountByStatus() (map[string]int, error) {
	var counts map[string]int
	err := s.store.View(context.Background(), func(tx Tx) (err error) {
		counts, err = tx.CountOrdersByStatus()
		return err
	})
	return counts, err
}
