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
// creation or transition it reports, kept until MarkEventDelivered.
type Event struct {
	// ID is "evt_" and 26 base32 characters; ids sort in commit order.
	ID      string    `json:"id"`
	Type    string    `json:"type"`
	OrderID string    `json:"order_id"`
	Account string    `json:"account"`
	At      time.Time `json:"at"`
	// Payload is the order JSON exactly as GET shows it after the change.
	Payload json.RawMessage `json:"payload"`
}

// writeEvent appends the event of the order's current status. Ids are
// taken inside the write transaction, so their order is the commit
// order; each is above the last id stored, even if the clock went back
// across a restart.
func (s *Orders) writeEvent(tx Tx, rec *OrderRecord, at time.Time) (string, error) {
	payload, err := json.Marshal(rec.order())
	if err != nil {
		return "", fmt.Errorf("encode event payload of order %s: %w", rec.Order.ID, err)
	}
	last, err := tx.LastEventID()
	if err != nil {
		return "", err
	}
	id := s.eventIDs.nextWithPrefix(eventIDPrefix)
	if last != "" && id <= last {
		id = idAfter(last)
	}
	e := Event{ID: id, Type: eventOfStatus[rec.Order.Status], OrderID: rec.Order.ID, Account: rec.Account, At: at, Payload: payload}
	if err := tx.AppendEvent(&e); err != nil {
		return "", fmt.Errorf("store event %s: %w", id, err)
	}
	return id, nil
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

// PendingEvents returns up to limit outbox events with ids above after
// ("" for the start), oldest first. This and MarkEventDelivered are the
// contract for an event dispatcher: read a page, hand each event on
// (keeping its id across retries), then mark it; after a restart, start
// again from "": what was not marked is still there.
func (s *Orders) PendingEvents(after string, limit int) ([]Event, error) {
	var out []Event
	err := s.store.View(context.Background(), func(tx Tx) (err error) {
		out, err = tx.Events(after, limit)
		return err
	})
	return out, err
}

// MarkEventDelivered removes an event from the outbox once the dispatcher
// has taken it over for good. An unknown id is not an error (marking
// twice, after a retry, is harmless).
func (s *Orders) MarkEventDelivered(id string) error {
	return s.store.Update(context.Background(), func(tx Tx) error {
		return tx.DeleteEvent(id)
	})
}

// OutboxStats returns the number of pending events and the time of the
// oldest (zero when empty), for the outbox depth and lag metrics.
func (s *Orders) OutboxStats() (depth int, oldest time.Time, err error) {
	err = s.store.View(context.Background(), func(tx Tx) error {
		depth, oldest, err = tx.OutboxStats()
		return err
	})
	return depth, oldest, err
}
