package ordering

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"companydocs"
)

// OrderRecord is the stored form of an order, with the fields that never
// leave the service.
type OrderRecord struct {
	Order          companydocs.Order `json:"order"`
	Account        string            `json:"account"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	// Fingerprint identifies the request an Idempotency-Key was used
	// with; orders stored before it existed have none.
	Fingerprint string `json:"fingerprint,omitempty"`
	// LastEventID is the id of the order's latest outbox event: the
	// next event of the order takes an id above it, so that the events
	// of one order sort in the order they happened, whichever node wrote
	// them and after the outbox let them go. Orders stored before it
	// existed have none until their next event.
	LastEventID string `json:"last_event_id,omitempty"`
}

// orderFor is the order as an account of role sees it, with the actions
// it may take now. Stored records hold no actions: they depend on who
// asks.
func (r *OrderRecord) orderFor(role string) *companydocs.Order {
	o := r.Order
	o.Account, o.IdempotencyKey = r.Account, r.IdempotencyKey
	o.History = r.history()
	o.AllowedActions = AllowedActions(&o, role)
	return &o
}

// fingerprint identifies what a create asked for.
func fingerprint(req companydocs.OrderRequest) string {
	return strings.Join([]string{req.CompanyProfileID, req.DiscoveryCandidateID, string(req.DocumentType), req.PlanID}, "\x00")
}

// CreateOrder orders a document for a verified company profile (strict).
// The gate, the duplicate checks, the debit and the insert happen in one
// write transaction, so concurrent identical requests yield one order.
func (s *Orders) CreateOrder(ctx context.Context, account string, req companydocs.OrderRequest, idempotencyKey string) (*companydocs.Order, error) {
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	if err := companydocs.CheckIdempotencyKey(idempotencyKey); err != nil {
		return nil, err
	}
	if err := s.requireRole(account, companydocs.RoleClient); err != nil {
		return nil, err
	}
	if s.plans.Len() == 0 {
		return nil, errPlanMissing()
	}
	if req.CompanyProfileID == "" {
		return nil, companydocs.Refusal(companydocs.EVERIFIEDREQUIRED, "refusal.company_profile_id_required", nil)
	}
	a, err := s.assess(req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// Concurrent creates share one commit (one fsync). The function may
	// run more than once, so it only fills these variables; an
	// application error writes nothing and must not fail the group.
	c := s.newCreate(account, req, idempotencyKey, a)
	if paidThroughProvider(a.plan) && a.gateError() == nil {
		if err := s.startCheckout(ctx, c); err != nil {
			return nil, err
		}
	}
	var order *companydocs.Order
	var trs []Transition
	err = s.store.Update(ctx, func(tx Tx) error {
		var err error
		order, trs, err = s.createOrder(tx, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.notify(trs...)
	return order, nil
}

// create is an order create prepared outside the write transaction, so
// that the transaction, which creates share one after the other, does
// little more than the lookups and puts.
type create struct {
	account string
	req     companydocs.OrderRequest
	a       *assessment
	rec     OrderRecord // all but the id, the time and the next step
	idemKey string      // "" without an Idempotency-Key
	slot    OpenSlot
	// id and payment are set when the plan is paid through a provider:
	// the order id its payment page was opened for, and the page.
	id      string
	payment *companydocs.OrderPayment
}

func (s *Orders) newCreate(account string, req companydocs.OrderRequest, idemKey string, a *assessment) *create {
	c := &create{account: account, req: req, a: a, idemKey: idemKey, slot: openSlot(account, req)}
	if a.gateError() != nil {
		return c // refused in the transaction, unless an idempotent repeat
	}
	c.rec = OrderRecord{
		Account:        account,
		IdempotencyKey: idemKey,
		Fingerprint:    fingerprint(req),
		Order: companydocs.Order{
			Status:               companydocs.OrderStatusPreviewReady,
			WorkflowStatus:       companydocs.WorkflowStarted,
			CompanyProfileID:     a.profile.ID,
			DiscoveryCandidateID: req.DiscoveryCandidateID,
			Company:              companydocs.SnapshotOf(a.profile),
			DocumentType:         req.DocumentType,
			PlanID:               a.plan.ID,
			Total:                formatCents(a.cents),
			Currency:             a.plan.Currency,
			CreditsCharged:       a.plan.CreditCost,
		},
	}
	return c
}

// createOrder does the checks that depend on stored state, then stores.
// An idempotent repeat is recognised before the gate, so that it finds its
// order even if the company has changed since.
//
// A plan paid at creation (credits, or nothing to pay) is moved to PAID
// by the system in the same transaction; the answer is the order as
// created, as the specification shows it, and GET shows it PAID.
func (s *Orders) createOrder(tx Tx, c *create) (*companydocs.Order, []Transition, error) {
	if err := s.refuseDuplicate(tx, c); err != nil {
		return nil, nil, err
	}
	if err := debit(tx, c.account, c.a.plan); err != nil {
		return nil, nil, err
	}
	rec := c.rec
	rec.Order.ID = c.id
	if rec.Order.ID == "" {
		rec.Order.ID = s.ids.next()
	}
	rec.Order.CreatedAt = s.now().UTC()
	if c.payment != nil {
		p := *c.payment // each run of the transaction fills its own copy
		rec.Order.Payment = &p
	}
	rec.Order.NextStep = nextStep(&rec.Order, c.a)
	rec.Order.History = []companydocs.HistoryEntry{createdEntry(rec.Order.CreatedAt)}
	evt, err := s.nextEventID(tx, &rec) // stored with the order
	if err != nil {
		return nil, nil, err
	}
	if err := s.insertOrder(tx, &rec, c); err != nil {
		return nil, nil, err
	}
	created := rec.orderFor(companydocs.RoleClient)
	if err := writeEvent(tx, &rec, evt, rec.Order.CreatedAt); err != nil {
		return nil, nil, err
	}
	trs := []Transition{{OrderID: rec.Order.ID, Account: rec.Account, To: rec.Order.Status, Actor: companydocs.ActorClient, EventID: evt}}
	if paidAtCreation(c.a) {
		note := historyNote{code: HistoryPaidAtCreation, params: companydocs.Params{Credits: c.a.plan.CreditCost}}
		tr, err := s.move(tx, &rec, companydocs.OrderStatusPaid, companydocs.ActorSystem, note, rec.Order.CreatedAt)
		if err != nil {
			return nil, nil, fmt.Errorf("pay order %s at creation: %w", rec.Order.ID, err)
		}
		trs = append(trs, tr)
	}
	return created, trs, nil
}

// refuseDuplicate does the checks before anything is written: an
// idempotent repeat (recognised before the gate, so that it finds its
// order even if the company has changed since), the gate, and an open
// order in the same slot.
func (s *Orders) refuseDuplicate(tx Tx, c *create) error {
	if c.idemKey != "" {
		id, err := tx.IdempotentOrder(c.account, c.idemKey)
		if err != nil {
			return err
		}
		if id != "" {
			return s.idempotentRepeat(tx, id, c)
		}
	}
	if err := c.a.gateError(); err != nil {
		return err
	}
	id, err := tx.OpenOrder(c.slot)
	if err != nil {
		return err
	}
	if id != "" {
		return duplicate(tx, id, keyOpenOrder)
	}
	return nil
}

const keyOpenOrder = "refusal.open_order"

// paidAtCreation: the debit at creation is the payment of a credit plan
// (and a plan that costs nothing needs none); a priced one-off plan waits
// for the operator to confirm the payment, or for its payment provider.
func paidAtCreation(a *assessment) bool {
	switch a.plan.Payment {
	case companydocs.PaymentCredits:
		return true
	case "": // a plan not read from a plans file
		return !(a.plan.Kind == companydocs.PlanOneOff && a.cents > 0)
	}
	return false
}

// idempotentRepeat answers a create whose Idempotency-Key was used
// before: a replay of the same request, or a different request under the
// same key; both are duplicate_order with the first order.
func (s *Orders) idempotentRepeat(tx Tx, id string, c *create) error {
	key := "refusal.idempotent_order"
	if rec, err := getOrder(tx, id); err == nil && rec.Fingerprint != "" && rec.Fingerprint != fingerprint(c.req) {
		key = "refusal.idempotency_key_reused"
	}
	return duplicate(tx, id, key)
}

// debit takes the plan's credits from the account, if its balance holds
// them. A plan that costs no credits leaves the account record alone; the
// account must still exist.
func debit(tx Tx, account string, plan companydocs.Plan) error {
	rec, err := getAccount(tx, account) // locks the row: the check holds until the commit
	if err != nil || plan.CreditCost == 0 {
		return err
	}
	if rec.Credits < plan.CreditCost {
		return companydocs.Refusal(companydocs.EINSUFFICIENTFUNDS, "refusal.insufficient_credits", companydocs.Args{"plan": plan.ID, "cost": plan.CreditCost, "balance": rec.Credits})
	}
	_, err = tx.AddCredits(account, -plan.CreditCost)
	return err
}

// gateError turns the first blocker into the error of a strict create:
// a wrong plan choice is a validation_error, a company problem
// verified_company_required.
func (a *assessment) gateError() error {
	if len(a.choice) > 0 {
		return blocked(companydocs.EVALIDATION, a.choice[0], "refusal.plan_blocked")
	}
	if len(a.company) > 0 {
		return blocked(companydocs.EVERIFIEDREQUIRED, a.company[0], "refusal.company_blocked")
	}
	return nil
}

// Next-step kinds.
const (
	NextStepPayment  = "payment" // paid as agreed, confirmed by the operator
	NextStepPay      = "pay"     // paid by the client on the provider's payment page
	NextStepDelivery = "delivery"
)

// Next-step codes: one per sentence, so that a client can say it in its
// own language with the step's params.
const (
	StepPaymentDue      = "payment_due"       // order_id, amount, currency, document_type, company_name
	StepPayOnline       = "pay_online"        // order_id, amount, currency, document_type, company_name, payment_url, expires_at
	StepPaymentMismatch = "payment_mismatch"  // order_id, amount, currency (the price), document_type, company_name
	StepPaidWithCredits = "paid_with_credits" // credits, document_type, company_name
	StepPaid            = "paid"              // document_type, company_name
	StepRequested       = "requested"
	StepDelivered       = "delivered"
	StepFailed          = "failed"    // note (the reason), and refunded_credits or refunded_amount with currency
	StepCancelled       = "cancelled" // note unless none was given, and what was refunded as for failed
)

// nextStep: a one-off plan with a price is paid per order, on its
// provider's payment page or as agreed with the operator; a subscription
// or a prepaid credit plan goes straight to delivery.
func nextStep(o *companydocs.Order, a *assessment) companydocs.NextStep {
	t := o.DocumentType
	if p := o.Payment; p != nil {
		expires := p.ExpiresAt
		return step(NextStepPay, StepPayOnline, &companydocs.Params{OrderID: o.ID, Amount: p.Amount, Currency: p.Currency,
			DocumentType: t, CompanyName: a.profile.Name, PaymentURL: p.URL, ExpiresAt: &expires})
	}
	if !paidAtCreation(a) {
		return step(NextStepPayment, StepPaymentDue,
			&companydocs.Params{OrderID: o.ID, Amount: formatCents(a.cents), Currency: a.plan.Currency, DocumentType: t, CompanyName: a.profile.Name})
	}
	return step(NextStepDelivery, StepPaidWithCredits, &companydocs.Params{Credits: a.plan.CreditCost, DocumentType: t, CompanyName: a.profile.Name})
}

// step is a next step with its English sentence from the catalog.
func step(kind, code string, p *companydocs.Params) companydocs.NextStep {
	return companydocs.NextStep{Kind: kind, Code: code, Params: p, Message: say("step."+code, p)}
}

// insertOrder stores the order and claims its slot and Idempotency-Key.
// The checks before found both free; a claim that finds them taken lost a
// race with another process (a store shared by several nodes): the answer
// is the same duplicate_order, and the transaction rolls back the debit.
func (s *Orders) insertOrder(tx Tx, rec *OrderRecord, c *create) error {
	if err := tx.InsertOrder(rec); err != nil {
		return err
	}
	holder, err := tx.ClaimOpenOrder(c.slot, rec.Order.ID)
	if err != nil {
		return err
	}
	if holder != "" {
		return duplicate(tx, holder, keyOpenOrder)
	}
	if c.idemKey == "" {
		return nil
	}
	if holder, err = tx.ClaimIdempotencyKey(c.account, c.idemKey, rec.Order.ID); err != nil {
		return err
	}
	if holder != "" {
		return s.idempotentRepeat(tx, holder, c)
	}
	return nil
}

// openSlot is "the same order again": account, profile, document type and
// plan. An order is open until it is terminal: the terminal transition
// frees its slot (see reindex).
func openSlot(account string, req companydocs.OrderRequest) OpenSlot {
	return OpenSlot{Account: account, ProfileID: req.CompanyProfileID, DocumentType: req.DocumentType, PlanID: req.PlanID}
}

// duplicate builds duplicate_order carrying the existing order.
func duplicate(tx Tx, id, key string) error {
	rec, err := getOrder(tx, id)
	if err != nil {
		return err
	}
	e := companydocs.Refusal(companydocs.EDUPLICATEORDER, key, companydocs.Args{"order": id})
	e.Order = rec.orderFor(companydocs.RoleClient) // only the owner meets its own duplicate
	return e
}

// Order returns one order of the account. Another account's order is
// not_found, exactly like a missing one, so its existence does not leak.
func (s *Orders) Order(ctx context.Context, account, id string) (*companydocs.Order, error) {
	if err := s.requireRole(account, companydocs.RoleClient); err != nil {
		return nil, err
	}
	var out *companydocs.Order
	err := s.store.View(ctx, func(tx Tx) error {
		rec, err := getOrder(tx, id)
		if err != nil {
			return err
		}
		if rec.Account != account {
			return errOrderNotFound(id)
		}
		out = rec.orderFor(companydocs.RoleClient)
		return nil
	})
	return out, err
}

func errOrderNotFound(id string) error {
	return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_such_order", companydocs.Args{"order": id})
}

// getOrder reads an order, or not_found.
func getOrder(tx Tx, id string) (*OrderRecord, error) {
	rec, err := tx.Order(id)
	if err == nil && rec == nil {
		err = errOrderNotFound(id)
	}
	return rec, err
}

// List lists the account's orders, newest first, limit per page (default
// 20, at most 100). cursor is "" for the first page, else the next cursor
// of the previous page; next is "" on the last page.
// status, when not empty, keeps only the orders in that status.
func (s *Orders) List(ctx context.Context, account, status, cursor string, limit int) ([]*companydocs.Order, string, error) {
	return s.ordersPage(ctx, account, companydocs.RoleClient, status, cursor, limit, func(tx Tx, after string, limit int) ([]*OrderRecord, error) {
		return tx.AccountOrders(account, status, after, limit)
	})
}

// ordersPage checks the caller's role, the status filter and the cursor,
// then reads one page with list, asking for one order more than the page
// holds to know whether another page follows.
func (s *Orders) ordersPage(ctx context.Context, account, role, status, cursor string, limit int, list func(tx Tx, after string, limit int) ([]*OrderRecord, error)) (orders []*companydocs.Order, next string, err error) {
	if err := s.requireRole(account, role); err != nil {
		return nil, "", err
	}
	if err := validStatusFilter(status); err != nil {
		return nil, "", err
	}
	after, err := decodeCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	limit = clampLimit(limit)
	var recs []*OrderRecord
	err = s.store.View(ctx, func(tx Tx) (err error) {
		recs, err = list(tx, after, limit+1)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	orders = make([]*companydocs.Order, 0, limit)
	for _, rec := range recs[:min(len(recs), limit)] {
		orders = append(orders, rec.orderFor(role))
	}
	if len(recs) > limit {
		next = encodeCursor(orders[limit-1].ID)
	}
	return orders, next, nil
}

func clampLimit(limit int) int {
	if limit <= 0 {
		return companydocs.DefaultOrdersPage
	}
	return min(limit, companydocs.MaxOrdersPage)
}

func validStatusFilter(status string) error {
	if status != "" && !companydocs.ValidOrderStatus(status) {
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.unknown_status", companydocs.Args{"status": status, "statuses": strings.Join(companydocs.OrderStatuses, ", ")})
	}
	return nil
}

func encodeCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(id))
}

func decodeCursor(cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || !validOrderID(string(b)) {
		return "", companydocs.Refusal(companydocs.EVALIDATION, "refusal.bad_cursor", nil)
	}
	return string(b), nil
}
