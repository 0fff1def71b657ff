package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// checkTimeout bounds Check on a large database.
const checkTimeout = time.Minute

// checks are the invariants the constraints cannot state, each a query
// for the rows that break it (the first few are named).
var checks = []struct{ what, sql string }{
	{"an order's columns disagree with its record",
		`SELECT id FROM orders WHERE status <> record->'order'->>'status' OR account <> record->>'account'
			OR company_profile_id <> record->'order'->>'company_profile_id' OR plan_id <> record->'order'->>'plan_id'
			OR document_type <> record->'order'->>'document_type'`},
	{"an open-order slot is held by a terminal order or an order of another slot",
		`SELECT s.order_id FROM open_orders s JOIN orders o ON o.id = s.order_id
			WHERE o.status IN ('DELIVERED', 'FAILED', 'CANCELLED') OR o.account <> s.account
			OR o.company_profile_id <> s.profile_id OR o.document_type <> s.document_type OR o.plan_id <> s.plan_id`},
	{"an open order holds no slot",
		`SELECT id FROM orders o WHERE status NOT IN ('DELIVERED', 'FAILED', 'CANCELLED')
			AND NOT EXISTS (SELECT 1 FROM open_orders s WHERE s.order_id = o.id)`},
	{"an Idempotency-Key names an order of another account or key",
		`SELECT k.order_id FROM idempotency_keys k JOIN orders o ON o.id = k.order_id
			WHERE o.account <> k.account OR o.idempotency_key IS DISTINCT FROM k.key`},
	{"a document reference names an order without that document",
		`SELECT r.order_id FROM document_refs r JOIN orders o ON o.id = r.order_id
			WHERE o.record->'order'->'document'->>'sha256' IS DISTINCT FROM r.sha256`},
	{"a delivered document has no reference",
		`SELECT id FROM orders o WHERE record->'order'->'document'->>'sha256' IS NOT NULL AND NOT EXISTS (
			SELECT 1 FROM document_refs r WHERE r.order_id = o.id AND r.sha256 = o.record->'order'->'document'->>'sha256')`},
	{"an event names an order of another account",
		`SELECT e.id FROM outbox e JOIN orders o ON o.id = e.order_id WHERE o.account <> e.account`},
	{"a delivery that is no longer pending is scheduled",
		`SELECT event_id FROM webhook_deliveries WHERE scheduled_at IS NOT NULL AND state <> 'pending'`},
}

// Check verifies what the schema's constraints leave to the code: that
// the rows which index orders agree with the orders. It reads one
// snapshot; the ordering tests run it after each test.
func (db *DB) Check() error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	return db.view(ctx, func(tx pgx.Tx) error {
		for _, c := range checks {
			rows, err := tx.Query(ctx, c.sql+" LIMIT 5")
			if err != nil {
				return fmt.Errorf("check %q: %w", c.what, err)
			}
			bad, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return fmt.Errorf("check %q: %w", c.what, err)
			}
			if len(bad) > 0 {
				return fmt.Errorf("%s: %v", c.what, bad)
			}
		}
		return nil
	})
}
