package bbolt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// EventIDFloor returns the last key of the outbox, or "": writes run one
// at a time here, so ids above it sort in commit order. A write
// transaction answers from memory: bbolt's Cursor.Last never returns on a
// bucket whose leaves this transaction emptied (a fan-out that took every
// event, then a create, in one group). The remembered id may be above the
// last stored one (after a rollback), which only moves new ids up.
func (t outboxTx) EventIDFloor() (string, error) {
	if t.group != nil {
		return t.group.lastEvent, nil
	}
	last, _ := t.read(bucketOutbox).Cursor().Last()
	return string(last), nil
}

// AppendEvent stores the event under its id.
func (t outboxTx) AppendEvent(e *ordering.Event) error {
	out := t.write(bucketOutbox)
	if out.Get([]byte(e.ID)) != nil {
		return ordering.ErrExists
	}
	out.FillPercent = 1 // ids grow: fill pages before they split
	if err := putJSON(out, []byte(e.ID), e); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	if t.group != nil && e.ID > t.group.lastEvent {
		t.group.lastEvent = e.ID
	}
	return nil
}

// firstAfter positions c on the first key above after (the first key
// when after is empty): where a page that ended at after goes on.
func firstAfter(c *bolt.Cursor, after string) (k, v []byte) {
	if after == "" {
		return c.First()
	}
	k, v = c.Seek([]byte(after))
	if bytes.Equal(k, []byte(after)) {
		k, v = c.Next()
	}
	return k, v
}

// Events returns up to limit events with ids above after.
func (t outboxTx) Events(after string, limit int) ([]ordering.Event, error) {
	var out []ordering.Event
	c := t.read(bucketOutbox).Cursor()
	k, v := firstAfter(c, after)
	for ; k != nil && len(out) < limit; k, v = c.Next() {
		var e ordering.Event
		if err := json.Unmarshal(v, &e); err != nil {
			return nil, fmt.Errorf("decode event %s: %w", k, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// ClaimEvents returns the oldest events: one process holds the file, and
// bbolt runs one write transaction at a time, so nobody else takes them.
func (t outboxTx) ClaimEvents(limit int) ([]ordering.Event, error) {
	return t.Events("", limit)
}

// DeleteEvent removes the event.
func (t outboxTx) DeleteEvent(id string) error {
	if err := t.write(bucketOutbox).Delete([]byte(id)); err != nil {
		return fmt.Errorf("remove event %s: %w", id, err)
	}
	return nil
}

// OutboxStats counts the outbox and reads its first event's time.
func (t outboxTx) OutboxStats() (depth int, oldest time.Time, err error) {
	b := t.read(bucketOutbox)
	depth = b.Stats().KeyN
	if _, v := b.Cursor().First(); v != nil {
		var e ordering.Event
		if err := json.Unmarshal(v, &e); err != nil {
			return 0, time.Time{}, fmt.Errorf("decode event: %w", err)
		}
		oldest = e.At
	}
	return depth, oldest, nil
}
