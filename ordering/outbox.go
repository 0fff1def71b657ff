package ordering

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"companydocs"
)

// Event types of the outbox, one per status an order can reach.
const (
	EventOrderCreated   = "order.created"
	EventOrderPaid      = "order.paid"
	EventOrderRequested = "order.requested"
	EventOrderDelivered = "order.delivered"
	EventOrderFailed    = "order.failed"
	EventOrderCancelled = "order.cancelled"
	// The refund of a payment through its provider, which changes no
	// status: made, or pending for a payment that came after the cancel.
	EventOrderRefunded      = "order.refunded"
	EventOrderRefundPending = "order.refund_pending"
	// A payment whose amount or currency differs from the order's price:
	// the order is not paid, and an operator looks at it.
	EventOrderPaymentMismatch = "order.payment_mismatch"
)

var eventOfStatus = map[string]string{
	companydocs.OrderStatusPreviewReady: EventOrderCreated,
	companydocs.OrderStatusPaid:         EventOrderPaid,
	companydocs.OrderStatusRequested:    EventOrderRequested,
	companydocs.OrderStatusDelivered:    EventOrderDelivered,
	companydocs.OrderStatusFailed:       EventOrderFailed,
	companydocs.OrderStatusCancelled:    EventOrderCancelled,
}

// eventIDPrefix starts every event id.
const eventIDPrefix = "evt_"

// Event is an outbox entry: written in the same transaction as the
// creation or transition it reports, kept until FanOutEvents takes it.
type Event struct {
	// ID is "evt_" and 26 base32 characters; the ids of one order's
	// events sort in the order of its changes.
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	OrderID string    `json:"order_id"`
	Account string    `json:"account"`
	At      time.Time `json:"at"`
	// Payload is the order JSON exactly as GET shows it after the change.
	Payload json.RawMessage `json:"payload"`
}

// nextEventID takes the id of the order's next event and records it in
// rec (the caller stores rec in the same transaction). The id is above
// every id this process issued, above the order's previous event
// (OrderRecord.LastEventID, read under the order's row lock) and above
// the store's floor (a store whose writes run one at a time returns its
// highest stored id there, so that its ids sort in commit order). So the
// events of one order sort in the order they happened, also when nodes'
// clocks differ, a clock went back across a restart or the outbox let
// the earlier events go; across orders, ids sort by creation time but
// not necessarily by commit (see OutboxTx).
func (s *core) nextEventID(tx Tx, rec *OrderRecord) (string, error) {
	floor, err := tx.EventIDFloor()
	if err != nil {
		return "", err
	}
	id := s.eventIDs.nextWithPrefix(eventIDPrefix)
	for _, below := range []string{floor, rec.LastEventID} {
		if below != "" && id <= below {
			id = idAfter(below)
		}
	}
	rec.LastEventID = id
	return id, nil
}

// writeEvent appends the event of the order's current status under id,
// its payload the order as GET shows it to its owner now.
func writeEvent(tx Tx, rec *OrderRecord, id string, at time.Time) error {
	return writeEventOf(tx, rec, id, eventOfStatus[rec.Order.Status], at)
}

// writeEventOf appends an event of type typ about the order as its
// owner sees it now.
func writeEventOf(tx Tx, rec *OrderRecord, id, typ string, at time.Time) error {
	payload, err := json.Marshal(rec.orderFor(companydocs.RoleClient))
	if err != nil {
		return fmt.Errorf("encode event payload of order %s: %w", rec.Order.ID, err)
	}
	e := Event{ID: id, Type: typ, OrderID: rec.Order.ID, Account: rec.Account, At: at, Payload: payload}
	if err := tx.AppendEvent(&e); err != nil {
		return fmt.Errorf("store event %s: %w", id, err)
	}
	return nil
}

// idAfter returns the id just above id (same prefix).
func idAfter(id string) string {
	prefix, body := id[:len(id)-26], id[len(id)-26:]
	b := decodeID(body)
	increment(b[:])
	return prefix + encodeID(b)
}

// decodeID is the inverse of encodeID.
func decodeID(s string) [16]byte {
	var hi, lo uint64
	for i := 0; i < len(s); i++ {
		v := uint64(strings.IndexByte(crockford, s[i]))
		hi = hi<<5 | lo>>59
		lo = lo<<5 | v
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return b
}

// OutboxStats returns the number of pending events and the time of the
// oldest (zero when empty), for the outbox depth and lag metrics.
func (s *Webhooks) OutboxStats() (depth int, oldest time.Time, err error) {
	err = s.store.View(context.Background(), func(tx Tx) error {
		depth, oldest, err = tx.OutboxStats()
		return err
	})
	return depth, oldest, err
}
