package companydocs

import "time"

// Plan kinds.
const (
	PlanOneOff       = "one_off"
	PlanSubscription = "subscription"
)

// Plan is a priced way to order documents, configured per deployment.
type Plan struct {
	ID            string         `json:"id"`
	Name          string         `json:"name"`
	Kind          string         `json:"kind"`
	DocumentTypes []DocumentType `json:"document_types"`
	Currency      string         `json:"currency"`
	// Price is a decimal string with two fraction digits, e.g. "4.50".
	Price      string `json:"price"`
	CreditCost int64  `json:"credit_cost"`
	// WatchLimit is how many companies an account using a subscription
	// plan may watch; absent (0) in a one-off plan and in plan files
	// written before watches.
	WatchLimit int `json:"watch_limit,omitempty"`
	// SearchRate is how many searches a second an account using the plan
	// may send in search batches and reconciliation once signed in (a
	// session), instead of its address's anonymous rate; absent (0): the
	// address's rate.
	SearchRate float64 `json:"search_rate,omitempty"`
	// Payment says how an order on the plan is paid: PaymentCredits,
	// PaymentOperator or PaymentStripe. A plans file may leave it out:
	// a priced one-off plan is then paid as agreed with the operator,
	// every other plan with credits.
	Payment string `json:"payment"`
}

// How a plan is paid.
const (
	PaymentCredits  = "credits"  // the credit debit at creation pays the order
	PaymentOperator = "operator" // paid as agreed, confirmed by an operator
	PaymentStripe   = "stripe"   // paid on Stripe's hosted payment page
)

// Covers reports whether the plan includes document type t.
func (p *Plan) Covers(t DocumentType) bool {
	for _, d := range p.DocumentTypes {
		if d == t {
			return true
		}
	}
	return false
}

// Params are the values the sentence of a blocker or a next step names,
// so that a client can say the sentence in its own language from the code
// and the params; Message stays the sentence in English. Each code sets
// only the fields its sentence uses (the OpenAPI document lists them).
type Params struct {
	CompanyName   string         `json:"company_name,omitempty"`
	ProfileID     string         `json:"profile_id,omitempty"`
	OrderID       string         `json:"order_id,omitempty"`
	PlanID        string         `json:"plan_id,omitempty"`
	DocumentType  DocumentType   `json:"document_type,omitempty"`
	DocumentTypes []DocumentType `json:"document_types,omitempty"` // what a plan covers or a register holds
	Amount        string         `json:"amount,omitempty"`         // decimal, as Order.Total
	Currency      string         `json:"currency,omitempty"`
	Credits       int64          `json:"credits,omitempty"` // a plan's cost; never 0 where it is named
	// Balance is a pointer because an empty account (0) must still say so.
	Balance         *int64 `json:"balance,omitempty"`
	Note            string `json:"note,omitempty"`
	RefundedCredits int64  `json:"refunded_credits,omitempty"`
	RefundedAmount  string `json:"refunded_amount,omitempty"`
	// Provider names the payment provider a payment or a refunded_amount
	// goes through ("stripe"); without it the operator refunds by hand.
	Provider string `json:"provider,omitempty"`
	// PaymentURL and ExpiresAt are the hosted payment page of an order
	// paid online and when it closes (next step "pay").
	PaymentURL string     `json:"payment_url,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

// Blocker explains why a preview is not orderable.
type Blocker struct {
	Code    string `json:"code"`
	Params  Params `json:"params"`
	Message string `json:"message"`
}

// Preview is the lenient answer to "could I order this?".
type Preview struct {
	OrderingEligible bool             `json:"ordering_eligible"`
	CompanyProfileID string           `json:"company_profile_id"`
	DocumentType     DocumentType     `json:"document_type"`
	PlanID           string           `json:"plan_id"`
	EstimatedTotal   string           `json:"estimated_total"`
	Currency         string           `json:"currency"`
	CreditCost       int64            `json:"credit_cost"`
	Blockers         []Blocker        `json:"blockers"`
	Company          *CompanySnapshot `json:"company,omitempty"`
}

// CompanySnapshot is the verified profile data an order is made for, copied
// into the order so that later re-ingests cannot change what was bought.
type CompanySnapshot struct {
	ProfileID      string `json:"profile_id"`
	Name           string `json:"name"`
	Court          string `json:"court"`
	CourtCode      string `json:"court_code"`
	RegistryNumber string `json:"registry_number"`
	City           string `json:"city"`
	LegalForm      string `json:"legal_form,omitempty"`
	Source         string `json:"source"`
}

// NextStep tells the client what happens after an order was created.
type NextStep struct {
	// Kind is "payment" for one-off plans and "delivery" for credit plans.
	Kind string `json:"kind"`
	// Code names the sentence and Params holds its values. Orders stored
	// before codes existed have neither; their Message still reads.
	Code    string  `json:"code,omitempty"`
	Params  *Params `json:"params,omitempty"`
	Message string  `json:"message"`
}

// Order is a document order of one account.
type Order struct {
	ID                   string          `json:"id"`
	Status               string          `json:"status"`
	WorkflowStatus       string          `json:"workflow_status"`
	CompanyProfileID     string          `json:"company_profile_id"`
	DiscoveryCandidateID string          `json:"discovery_candidate_id,omitempty"`
	Company              CompanySnapshot `json:"company"`
	DocumentType         DocumentType    `json:"document_type"`
	PlanID               string          `json:"plan_id"`
	Total                string          `json:"total"`
	Currency             string          `json:"currency"`
	CreditsCharged       int64           `json:"credits_charged"`
	CreditsRefunded      int64           `json:"credits_refunded"`
	CreatedAt            time.Time       `json:"created_at"`
	NextStep             NextStep        `json:"next_step"`
	History              []HistoryEntry  `json:"history"`
	// Document is set once the order is DELIVERED.
	Document *OrderDocument `json:"document,omitempty"`
	// Payment is set on an order paid through a payment provider: its
	// checkout, the provider's payment id and the refund.
	Payment *OrderPayment `json:"payment,omitempty"`
	// AllowedActions are what the caller of the answer may do with the
	// order now, by the transition table and the caller's role (see
	// package ordering's Action names); never null.
	AllowedActions []string `json:"allowed_actions"`
	Account        string   `json:"-"`
	IdempotencyKey string   `json:"-"`
}

// Payment states of an order paid through a provider.
const (
	PaymentOpen    = "open"    // the hosted payment page awaits the customer
	PaymentPaid    = "paid"    // the provider reported the payment
	PaymentExpired = "expired" // the page closed unpaid
	// PaymentMismatch: the provider reported a payment that is not the
	// order's price; the order is not paid, and its checkout is over
	PaymentMismatch = "mismatch"
)

// Refund states of a payment.
const (
	RefundPending  = "pending"  // to be asked of the provider, or asked and not yet confirmed
	RefundRefunded = "refunded" // the provider made the refund
)

// OrderPayment is the payment of an order through a provider (Stripe):
// what the customer pays on the provider's hosted page, and its refund.
type OrderPayment struct {
	Provider string `json:"provider"` // PaymentStripe
	Status   string `json:"status"`   // PaymentOpen, PaymentPaid, PaymentExpired or PaymentMismatch
	// Amount (decimal, as Order.Total) and Currency are what the page
	// asks for.
	Amount   string `json:"amount"`
	Currency string `json:"currency"`
	// SessionID is the provider's checkout session; URL is its hosted
	// payment page, open until ExpiresAt.
	SessionID string    `json:"session_id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
	// PaymentID is the provider's id of the payment (Stripe's payment
	// intent), set once paid; PaidAt is when the service learnt of it.
	PaymentID string     `json:"payment_id,omitempty"`
	PaidAt    *time.Time `json:"paid_at,omitempty"`
	// Refund is set once the paid order is cancelled or failed.
	Refund *PaymentRefund `json:"refund,omitempty"`
}

// PaymentRefund is the refund of a payment through its provider.
type PaymentRefund struct {
	Status      string    `json:"status"` // RefundPending or RefundRefunded
	Amount      string    `json:"amount"`
	Currency    string    `json:"currency"`
	RequestedAt time.Time `json:"requested_at"`
	// Attempts counts the attempts whose outcome was recorded (an ask
	// made, refused or unanswered; a look-up); NextAttemptAt is when a
	// pending refund is tried again, LastError why the last attempt
	// failed.
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	LastError     string     `json:"last_error,omitempty"`
	// AskedAt is set, committed, before the provider is asked, and
	// cleared with the answer's record: one still set is an ask whose
	// answer was lost (the process stopped mid-call), so that the
	// refund is looked up at the provider before it is asked again.
	AskedAt *time.Time `json:"asked_at,omitempty"`
	// RefundID is the provider's refund, set once refunded.
	RefundID   string     `json:"refund_id,omitempty"`
	RefundedAt *time.Time `json:"refunded_at,omitempty"`
}

// SnapshotOf copies the order-relevant data of a verified profile.
func SnapshotOf(p *Profile) CompanySnapshot {
	return CompanySnapshot{
		ProfileID:      p.ID,
		Name:           p.Name,
		Court:          p.CourtName(),
		CourtCode:      p.Ref.Court,
		RegistryNumber: p.Ref.NumberKey(),
		City:           p.Seat,
		LegalForm:      p.LegalForm,
		Source:         p.Source,
	}
}

// Page sizes of an account's order list.
const (
	DefaultOrdersPage = 20
	MaxOrdersPage     = 100
)

// OrderRequest is what a client sends to preview or create an order. Only
// CompanyProfileID identifies the company: names, courts or numbers a client
// might send are never read.
type OrderRequest struct {
	CompanyProfileID     string       `json:"company_profile_id"`
	DiscoveryCandidateID string       `json:"discovery_candidate_id,omitempty"`
	DocumentType         DocumentType `json:"document_type"`
	PlanID               string       `json:"plan_id"`
}

// AccountSummary is what an account sees of itself.
type AccountSummary struct {
	Name    string `json:"name"`
	Role    string `json:"role"`    // RoleClient or RoleOperator
	Credits int64  `json:"credits"` // the balance
	// Plans are the ids of the plans the account may order with, in the
	// order of the plans file: every configured plan for a client, none
	// for an operator, who does not order.
	Plans []string `json:"plans"`
	// Watches counts the account's watches and its limit.
	Watches WatchCount `json:"watches"`
}

// Session is an authenticated client session.
type Session struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}
