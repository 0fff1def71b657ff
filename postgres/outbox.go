package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// outboxLockID names the transaction-level advisory lock that serialises
// appends to the outbox across nodes: held from LastEventID to commit, so
// that event ids, taken above the last one, sort in commit order and a
// reader paging by id never skips an event committed late.
const outboxLockID = 0x6f75_7462_6f78 // "outbox"

// lockOutbox takes the outbox lock unless the transaction holds it.
func (t *txn) lockOutbox() error {
	if t.outboxLocked {
		return nil
	}
	_, err := t.tx.Exec(t.ctx, "SELECT pg_advisory_xact_lock($1)", int64(outboxLockID))
	t.outboxLocked = err == nil
	return wrap(err, "lock the outbox")
}

const lastEventSQL = "SELECT max(id) FROM outbox"

// LastEventID returns the highest event id; in Update it first takes the
// outbox lock. Every event-writing transaction holds that lock until its
// commit, so the round trips made under it bound the rate of creations
// and transitions across all nodes: the lock and the read go out as one
// pipelined batch. The read is a statement of its own, run after the
// lock is granted, so at READ COMMITTED its snapshot sees every event
// committed by the lock's previous holders.
func (t *txn) LastEventID() (string, error) {
	var id *string
	var err error
	if t.write && !t.outboxLocked {
		id, err = t.lockAndReadLastEvent()
	} else {
		_, err = t.one(lastEventSQL, nil, &id)
	}
	if err != nil || id == nil {
		return "", wrap(err, "read the last event id")
	}
	return *id, nil
}

func (t *txn) lockAndReadLastEvent() (*string, error) {
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock($1)", int64(outboxLockID))
	b.Queue(lastEventSQL)
	br := t.tx.SendBatch(t.ctx, b)
	var id *string
	_, err := br.Exec()
	if err == nil {
		t.outboxLocked = true
		err = br.QueryRow().Scan(&id)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return id, err
}

// AppendEvent stores an event under the outbox lock.
func (t *txn) AppendEvent(e *ordering.Event) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	if err := t.lockOutbox(); err != nil {
		return err
	}
	n, err := t.exec("INSERT INTO outbox (id, type, order_id, account, at, payload) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
		e.ID, e.Type, e.OrderID, e.Account, e.At, []byte(e.Payload))
	return inserted(n, err, fmt.Sprintf("store event %s", e.ID))
}

const eventColumns = "id, type, order_id, account, at, payload"

func scanEvent(row pgx.CollectableRow) (ordering.Event, error) {
	var e ordering.Event
	var payload []byte
	err := row.Scan(&e.ID, &e.Type, &e.OrderID, &e.Account, &e.At, &payload)
	e.At, e.Payload = utc(e.At), payload
	return e, err
}

func (t *txn) events(what, sql string, args ...any) ([]ordering.Event, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, wrap(err, what)
	}
	list, err := pgx.CollectRows(rows, scanEvent)
	return list, wrap(err, what)
}

// Events returns events with ids above after, in id order.
func (t *txn) Events(after string, limit int) ([]ordering.Event, error) {
	return t.events("list events", "SELECT "+eventColumns+" FROM outbox WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

// ClaimEvents returns the oldest events that no other transaction holds,
// locked until this one ends.
func (t *txn) ClaimEvents(limit int) ([]ordering.Event, error) {
	if err := t.needWrite(); err != nil {
		return nil, err
	}
	return t.events("claim events", "SELECT "+eventColumns+" FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED", limit)
}

// DeleteEvent removes an event.
func (t *txn) DeleteEvent(id string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("DELETE FROM outbox WHERE id = $1", id)
	return wrap(err, "delete event "+id)
}

// OutboxStats returns the number of events and the time of the oldest.
func (t *txn) OutboxStats() (int, time.Time, error) {
	var depth int
	var oldest *time.Time
	_, err := t.one("SELECT count(*), (SELECT at FROM outbox ORDER BY id LIMIT 1) FROM outbox", nil, &depth, &oldest)
	if err != nil || oldest == nil {
		return depth, time.Time{}, wrap(err, "read the outbox depth")
	}
	return depth, utc(*oldest), nil
}
