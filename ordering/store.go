package ordering

import (
	"context"
	"errors"
	"time"

	"companydocs"
)

// Store persists accounts, sessions, orders, the outbox and webhooks
// atomically; the rules (the gate, duplicates, idempotency, credits,
// transitions, refunds, ownership, the outbox, the session cap) are this
// package's and decide the same way over every store. A store is named
// after its dependency: package bbolt (the embedded default) and package
// postgres.
//
// A store checks no rule of its own, with one kind of exception: the
// uniqueness of a key that two transactions may claim at once (an
// account's name and key hash, an order or event id, an
// Idempotency-Key, an open-order slot). Across processes sharing one
// database only the database can decide such a race (a primary key or
// unique constraint, an INSERT ... ON CONFLICT), so the store answers it
// (ErrExists, or the holder of a claim) and the rules turn the answer
// into their error. Constraints a database keeps beyond that (PostgreSQL:
// CHECK (credits >= 0), the status values) stand behind the rules and
// never decide in their place.
//
// Records cross the interface as this package's types; a store decides
// how to keep them (JSON in buckets, rows in tables). Byte slices and
// records returned by a Tx belong to the caller and stay valid after the
// transaction. The rules store a record only after what it names: the
// account of a session, order, key, claim or endpoint, the order of an
// event, claim or delivery; a store may enforce that (foreign keys), and a
// record that breaks it is a failure of the store, not a domain error.
type Store interface {
	// Update runs fn in one read-write transaction and returns after it
	// has committed durably, or with fn's error (nothing fn wrote is then
	// committed), or with the commit's error.
	//
	// fn may run more than once: the bbolt store runs the writes that wait
	// in one shared transaction and reruns the group without a write that
	// failed; the PostgreSQL store retries serialization failures. So fn
	// only fills variables it sets afresh on every run, and has no other
	// effects.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in one read-only transaction that sees a consistent
	// state. Calling a Tx method that writes inside View is an error.
	View(ctx context.Context, fn func(Tx) error) error
	// Ping reports whether the store can serve (readiness): nil, or why
	// not.
	Ping(ctx context.Context) error
	// Close waits for the writes under way and releases the store. Calls
	// after the first return nil or the first call's error.
	Close() error
}

// Errors a Tx method returns for conditions the rules handle. Any other
// error is a failure of the store (I/O, a lost connection, a damaged
// record) and fails the transaction. Methods that look a record up by its
// key return it, or nil (or "") and a nil error when there is none: "not
// found" is an answer, not an error, since the rules turn it into the
// sentence the client reads.
var (
	// ErrNotFound: the record a change names does not exist.
	ErrNotFound = errors.New("record not found")
	// ErrExists: a record with that key exists already.
	ErrExists = errors.New("record exists already")
)

// Tx is one transaction of a Store: typed, record-level reads and writes
// that map onto SQL rows, constraints and row locks. Inside Update, reading
// a record that the transaction may then change (Account, Order) locks it
// until the end of the transaction (SELECT ... FOR UPDATE), so that a
// check and the write it leads to see the same row. A Tx runs under the
// context given to Update or View and is valid only inside fn.
type Tx interface {
	AccountTx
	SessionTx
	OrderTx
	OutboxTx
	WebhookTx
	WatchTx
	PaymentTx
}

// PaymentTx holds what a payment provider's events and refunds need
// beyond the order: the ids of the provider events applied, so that each
// is applied at most once, and the schedule of the refunds to ask of a
// provider (the refund itself is in the order record).
type PaymentTx interface {
	// ClaimPaymentEvent records that the provider's event id is applied
	// in this transaction and returns true; when it was applied before,
	// it changes nothing and returns false (INSERT ... ON CONFLICT DO
	// NOTHING).
	ClaimPaymentEvent(provider, eventID string, at time.Time) (bool, error)
	// PrunePaymentEvents deletes up to limit of the event ids applied
	// before before and returns how many it deleted. Only in Update.
	PrunePaymentEvents(before time.Time, limit int) (int, error)
	// PaymentEvents returns up to limit of the applied event ids after
	// after, ordered by provider, then id (the zero value starts at the
	// first), for a copy.
	PaymentEvents(after AppliedPaymentEvent, limit int) ([]AppliedPaymentEvent, error)
	// ScheduleRefund sets when the order's refund is asked of its
	// provider next, replacing the time it had.
	ScheduleRefund(orderID string, at time.Time) error
	// UnscheduleRefund removes the order's refund from the schedule (it
	// is made); one not scheduled is not an error.
	UnscheduleRefund(orderID string) error
	// ClaimDueRefunds returns up to limit orders whose refund is due at
	// now, earliest first; also the earliest time a refund not returned
	// falls due (now when more are due than limit, zero when none is
	// scheduled). Only in Update. A store shared by several processes
	// moves each returned one's time to now+lease, so that no other
	// process asks at the same time and one that died mid-attempt is
	// retried after lease; a store of one process, whose one refund loop
	// asks one refund at a time, may leave the schedule alone.
	ClaimDueRefunds(now time.Time, lease time.Duration, limit int) (due []string, next time.Time, err error)
	// CountScheduledRefunds counts the refunds in the schedule.
	CountScheduledRefunds() (int, error)
}

// AppliedPaymentEvent is the id of a provider's event that was applied,
// and when.
type AppliedPaymentEvent struct {
	Provider, EventID string
	AppliedAt         time.Time
}

// AccountTx holds accounts, their API key hashes and their credits.
type AccountTx interface {
	// Account returns the account named name, or nil when there is none.
	// In Update it locks the account's row.
	Account(name string) (*AccountRecord, error)
	// Accounts returns every account in name order.
	Accounts() ([]AccountRecord, error)
	// CreateAccount stores a new account with its key hash: ErrExists when
	// the name or the key hash is taken. The rules always give it a role.
	CreateAccount(rec *AccountRecord) error
	// AccountForKey returns the name of the account whose API key has
	// hash keyHash, or "" when no account has it.
	AccountForKey(keyHash []byte) (string, error)
	// SetAccountKey replaces the account's key hash; the old hash no
	// longer finds the account. ErrNotFound when there is no account.
	SetAccountKey(account string, keyHash []byte) error
	// AddCredits changes the balance by n: a grant or a refund (n > 0) or
	// a debit (n < 0), and returns the new balance. ErrNotFound when there
	// is no account. The rules read the account first in the same
	// transaction, which locks its row, and check that the new balance
	// is neither negative nor past an int64; the store only persists it.
	AddCredits(account string, n int64) (balance int64, err error)
}

// SessionTx holds sessions, keyed by the SHA-256 of the token.
type SessionTx interface {
	// Session returns the session with the token hash, or nil.
	Session(hash [32]byte) (*SessionRecord, error)
	// PutSession stores a session, new or changed (revoked). Its account
	// and creation time never change.
	PutSession(hash [32]byte, rec *SessionRecord) error
	// CountSessions counts the stored sessions of an account, expired and
	// revoked ones included (they count toward the cap until swept).
	CountSessions(account string) (int, error)
	// OldestSessions returns the hashes of the account's limit oldest
	// sessions (by creation time, then hash), oldest first.
	OldestSessions(account string, limit int) ([][32]byte, error)
	// DeleteSessions deletes the sessions with these hashes; unknown
	// hashes are ignored.
	DeleteSessions(hashes [][32]byte) error
	// RevokeSessions marks every session of the account that is not
	// revoked yet as revoked, with endedBy, and returns their hashes.
	RevokeSessions(account, endedBy string) ([][32]byte, error)
	// SweepSessions looks at up to limit sessions from the position from
	// ("" for the start) in the store's own order, deletes those that
	// expired at or before now, and returns how many it deleted and where
	// the next batch starts ("" when none is left). The position is
	// opaque to the caller; batches keep each transaction short.
	SweepSessions(now time.Time, from string, limit int) (deleted int, next string, err error)
}

// OrderTx holds orders and their unique keys: the Idempotency-Key per
// account and the one open order per slot.
type OrderTx interface {
	// Order returns the order with the id, or nil. In Update it locks the
	// order's row.
	Order(id string) (*OrderRecord, error)
	// InsertOrder stores a new order: ErrExists when the id is taken.
	InsertOrder(rec *OrderRecord) error
	// UpdateOrder replaces a stored order; from is the status it had when
	// this transaction read it (a store may index by status).
	// ErrNotFound when there is no such order.
	UpdateOrder(rec *OrderRecord, from string) error
	// IdempotentOrder returns the id of the order the account created with
	// the Idempotency-Key, or "".
	IdempotentOrder(account, key string) (string, error)
	// ClaimIdempotencyKey binds the account's Idempotency-Key to orderID
	// if it is free (INSERT ... ON CONFLICT DO NOTHING) and returns "";
	// when another order holds it, it changes nothing and returns that
	// order's id.
	ClaimIdempotencyKey(account, key, orderID string) (holder string, err error)
	// OpenOrder returns the id of the open order in the slot, or "".
	OpenOrder(slot OpenSlot) (string, error)
	// ClaimOpenOrder makes orderID the open order of the slot if it is
	// free and returns ""; when another order holds it, it changes
	// nothing and returns that order's id.
	ClaimOpenOrder(slot OpenSlot, orderID string) (holder string, err error)
	// ReleaseOpenOrder frees the slot. The rules release a slot only for
	// the order that holds it, read with OpenOrder under that order's row
	// lock; a slot that is free already is not an error.
	ReleaseOpenOrder(slot OpenSlot) error
	// AccountOrders returns up to limit of the account's orders, newest
	// first (ids sort by creation time), with ids below before ("" for the
	// newest), only those in status unless status is "".
	AccountOrders(account, status, before string, limit int) ([]*OrderRecord, error)
	// QueuedOrders returns up to limit orders of every account, oldest
	// first, with ids above after ("" for the oldest), only those in
	// status unless status is "" (the operator's queue).
	QueuedOrders(status, after string, limit int) ([]*OrderRecord, error)
	// CountOrdersByStatus counts the orders in each status.
	CountOrdersByStatus() (map[string]int, error)
	// AddDocumentRef records that the order refers to the delivered
	// document with this SHA-256 (hex).
	AddDocumentRef(sha256, orderID string) error
	// DocumentRefs calls fn with every document reference, in SHA-256
	// order, until fn returns an error, which it returns.
	DocumentRefs(fn func(sha256, orderID string) error) error
}

// OutboxTx holds the events written with each creation and transition
// until they are taken for delivery. Event ids are made by the rules
// (Orders.nextEventID): the ids of one order's events ascend in the order
// of its changes, since each is taken under the order's row lock and above
// the order's previous one. Across orders, ids follow creation time, not
// necessarily commit order: on a store whose write transactions overlap
// (PostgreSQL), an event with a lower id may commit after one with a
// higher id, so no reader may page through the outbox by id across
// transactions and trust it skipped nothing. Readers either claim
// (ClaimEvents, the oldest visible events, again on every call) or read
// in one snapshot (Events inside one View, as Copy does).
type OutboxTx interface {
	// EventIDFloor returns an id every new event id must be above, or
	// "". A store whose write transactions run one at a time (bbolt)
	// returns its highest stored id, so that its ids sort in commit order
	// as long as events are stored; a store whose transactions overlap
	// returns "", since no floor short of a lock held to the commit would
	// order them, and such a lock would make every event-writing
	// transaction of every node commit one at a time.
	EventIDFloor() (string, error)
	// AppendEvent stores an event: ErrExists when its id is taken.
	AppendEvent(e *Event) error
	// Events returns up to limit events with ids above after ("" for the
	// start), in id order.
	Events(after string, limit int) ([]Event, error)
	// ClaimEvents returns up to limit of the oldest events (by id) this
	// transaction sees, locked until it ends. Only in Update; the caller
	// deletes them in the same transaction. Claims run one at a time:
	// a store shared by several processes makes a second claim wait for
	// the first transaction to end and then read afresh, so that no
	// event is claimed twice and no claim takes an order's later event
	// while another holds its earlier one.
	ClaimEvents(limit int) ([]Event, error)
	// DeleteEvent removes an event; an unknown id is not an error.
	DeleteEvent(id string) error
	// OutboxStats returns the number of events and the time of the oldest
	// (zero when there is none).
	OutboxStats() (depth int, oldest time.Time, err error)
}

// WebhookTx holds webhook endpoints, one delivery per event and endpoint,
// the schedule of the pending deliveries, and the signed body of each
// event that has deliveries, stored once however many endpoints receive
// it. A body lives as long as a delivery refers to it: the deliveries of
// an event count their references (PutEventBody), each delivery deleted
// (PruneDeliveries, DeleteWebhookEndpoint) releases its own, and the
// last one deletes the body.
type WebhookTx interface {
	// WebhookEndpoint returns the endpoint with the id, or nil.
	WebhookEndpoint(id string) (*EndpointRecord, error)
	// WebhookEndpoints returns the account's endpoints, or every
	// endpoint when account is "", in id order.
	WebhookEndpoints(account string) ([]EndpointRecord, error)
	// InsertWebhookEndpoint stores a new endpoint: ErrExists when the id
	// is taken.
	InsertWebhookEndpoint(rec *EndpointRecord) error
	// DeleteWebhookEndpoint removes the endpoint with its deliveries and
	// their schedule, releasing their bodies; an unknown id is not an
	// error.
	DeleteWebhookEndpoint(id string) error
	// PutEventBody stores the signed body of the event's deliveries,
	// which refs > 0 deliveries (one per endpoint) refer to: ErrExists
	// when the event has one. It is stored before its deliveries.
	PutEventBody(eventID string, body []byte, refs int) error
	// EventBody returns the signed body of the event's deliveries, or nil
	// when none is stored.
	EventBody(eventID string) ([]byte, error)
	// Delivery returns the delivery of the event to the endpoint, or nil.
	Delivery(endpointID, eventID string) (*DeliveryRecord, error)
	// PutDelivery stores the delivery of an event to an endpoint, new or
	// changed.
	PutDelivery(endpointID string, d *DeliveryRecord) error
	// RecentDeliveries returns up to limit of the endpoint's deliveries,
	// newest event first.
	RecentDeliveries(endpointID string, limit int) ([]DeliveryRecord, error)
	// PruneDeliveries deletes up to limit of the endpoint's oldest
	// deliveries (by event id) that are no longer pending and were created
	// before before, releasing their bodies; it stops at the first one
	// that is pending or newer.
	PruneDeliveries(endpointID string, before time.Time, limit int) error
	// ScheduleDelivery sets when the pending delivery is tried next,
	// replacing the time it had.
	ScheduleDelivery(endpointID, eventID string, at time.Time) error
	// UnscheduleDelivery removes the delivery from the schedule (it is
	// delivered or failed); one not scheduled is not an error.
	UnscheduleDelivery(endpointID, eventID string) error
	// CountScheduledDeliveries counts the deliveries in the schedule.
	CountScheduledDeliveries() (int, error)
	// ClaimDueDeliveries picks, for each endpoint that busy does not name,
	// its earliest scheduled delivery if it is due at now; at most limit
	// in all, earliest due first. It also returns the earliest time a
	// scheduled delivery not picked falls due (now when more are due than
	// limit; zero when none is scheduled), for the dispatcher's timer.
	// A store shared by several processes moves each picked delivery's
	// time to now+lease, locking the rows it skips on (FOR UPDATE SKIP
	// LOCKED), so that one attempt runs at a time per delivery and a
	// process that dies mid-attempt is retried after lease; a store of
	// one process may leave the schedule alone, since busy already keeps
	// one attempt per endpoint.
	ClaimDueDeliveries(now time.Time, lease time.Duration, busy func(endpointID string) bool, limit int) (due []DueDelivery, next time.Time, err error)
}

// OpenSlot is what makes two orders "the same order again": while an order
// is open (not terminal), no other order of the account takes its slot.
type OpenSlot struct {
	Account      string
	ProfileID    string
	DocumentType companydocs.DocumentType
	PlanID       string
}

// DueDelivery names a delivery ClaimDueDeliveries picked and when it was due.
type DueDelivery struct {
	EndpointID, EventID string
	At                  time.Time
}
