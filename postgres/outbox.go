package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// claimLockID names the transaction-level advisory lock a claim of
// outbox events takes (ClaimEvents): claims run one at a time across
// nodes, in batches, so that no two take one event and none takes an
// order's later event while another holds its earlier one. Appends take
// no lock: event-writing transactions of every node overlap and commit
// in whatever order they finish, and PostgreSQL can flush their commits
// together.
const claimLockID = 0x6f75_7462_6f78 // "outbox"

// EventIDFloor returns "": transactions here overlap, so a floor read
// without a lock held to the commit would order nothing. The order's own
// last event id (ordering.OrderRecord, read under its row lock) keeps the
// events of one order in order.
func (t outboxTx) EventIDFloor() (string, error) { return "", nil }

// AppendEvent stores an event.
func (t outboxTx) AppendEvent(e *ordering.Event) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	n, err := t.exec("INSERT INTO outbox (id, type, order_id, account, at, payload) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
		e.ID, e.Type, nullIfEmpty(e.OrderID), e.Account, e.At, []byte(e.Payload))
	return inserted(n, err, fmt.Sprintf("store event %s", e.ID))
}

// eventColumns read an event; the event of a watch has no order (NULL).
const eventColumns = "id, type, coalesce(order_id, ''), account, at, payload"

// nullIfEmpty is NULL for "", the order of an event that concerns none.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func scanEvent(row pgx.CollectableRow) (ordering.Event, error) {
	var e ordering.Event
	var payload []byte
	err := row.Scan(&e.ID, &e.Type, &e.OrderID, &e.Account, &e.At, &payload)
	e.At, e.Payload = utc(e.At), payload
	return e, err
}

func (t outboxTx) events(what, sql string, args ...any) ([]ordering.Event, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, wrap(err, what)
	}
	list, err := pgx.CollectRows(rows, scanEvent)
	return list, wrap(err, what)
}

// Events returns events with ids above after, in id order.
func (t outboxTx) Events(after string, limit int) ([]ordering.Event, error) {
	return t.events("list events", "SELECT "+eventColumns+" FROM outbox WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
}

const claimEventsSQL = "SELECT " + eventColumns + " FROM outbox ORDER BY id LIMIT $1 FOR UPDATE"

// ClaimEvents returns the oldest events, locked until this transaction
// ends. It first waits for the claim lock (see claimLockID); the lock
// and the read go out as one pipelined batch, the read a statement of its
// own, so that at READ COMMITTED it sees what the previous claim deleted
// and every event committed before the lock was granted.
func (t outboxTx) ClaimEvents(limit int) ([]ordering.Event, error) {
	if err := t.needWrite(); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock($1)", int64(claimLockID))
	b.Queue(claimEventsSQL, limit)
	br := t.tx.SendBatch(t.ctx, b)
	_, err := br.Exec()
	var list []ordering.Event
	if err == nil {
		var rows pgx.Rows
		if rows, err = br.Query(); err == nil {
			list, err = pgx.CollectRows(rows, scanEvent)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return list, wrap(err, "claim events")
}

// DeleteEvent removes an event.
func (t outboxTx) DeleteEvent(id string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("DELETE FROM outbox WHERE id = $1", id)
	return wrap(err, "delete event "+id)
}

// OutboxStats returns the number of events and the time of the oldest.
func (t outboxTx) OutboxStats() (int, time.Time, error) {
	var depth int
	var oldest *time.Time
	_, err := t.one("SELECT count(*), (SELECT at FROM outbox ORDER BY id LIMIT 1) FROM outbox", nil, &depth, &oldest)
	if err != nil || oldest == nil {
		return depth, time.Time{}, wrap(err, "read the outbox depth")
	}
	return depth, utc(*oldest), nil
}
