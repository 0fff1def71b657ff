package ordering

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"companydocs"

	bolt "go.etcd.io/bbolt"
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
func (s *Service) writeEvent(tx *bolt.Tx, rec *OrderRecord, at time.Time) (string, error) {
	payload, err := json.Marshal(rec.order())
	if err != nil {
		return "", fmt.Errorf("encode event payload of order %s: %w", rec.Order.ID, err)
	}
	out := tx.Bucket(bucketOutbox)
	id := s.eventIDs.nextWithPrefix(eventIDPrefix)
	if last, _ := out.Cursor().Last(); last != nil && id <= string(last) {
		id = idAfter(string(last))
	}
	e := Event{ID: id, Type: eventOfStatus[rec.Order.Status], OrderID: rec.Order.ID, Account: rec.Account, At: at, Payload: payload}
	v, err := json.Marshal(e)
	if err != nil {
		return "", fmt.Errorf("encode event %s: %w", id, err)
	}
	out.FillPercent = 1 // ids grow: fill pages before they split
	if err := out.Put([]byte(id), v); err != nil {
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
func (s *Service) PendingEvents(after string, limit int) ([]Event, error) {
	var out []Event
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketOutbox).Cursor()
		k, v := c.First()
		if after != "" {
			k, v = c.Seek([]byte(after))
			if k != nil && bytes.Equal(k, []byte(after)) {
				k, v = c.Next()
			}
		}
		for ; k != nil && len(out) < limit; k, v = c.Next() {
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %s: %w", k, err)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

// MarkEventDelivered removes an event from the outbox once the dispatcher
// has taken it over for good. An unknown id is not an error (marking
// twice, after a retry, is harmless).
func (s *Service) MarkEventDelivered(id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketOutbox).Delete([]byte(id))
	})
}

// OutboxStats returns the number of pending events and the time of the
// oldest (zero when empty), for the outbox depth and lag metrics.
func (s *Service) OutboxStats() (depth int, oldest time.Time, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOutbox)
		depth = b.Stats().KeyN
		if _, v := b.Cursor().First(); v != nil {
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event: %w", err)
			}
			oldest = e.At
		}
		return nil
	})
	return depth, oldest, err
}
