package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// checkTimeout bounds Check on a large database.
const checkTimeout = time.Minute

// checks are the invariants the constraints cannot state, each a query
// for the rows that break it (the first few are named). What needs the
// order record is checked in Go (checkRecords): PostgreSQL cannot read a
// json value holding \u0000, which the rules' fingerprints do.
var checks = []struct{ what, sql string }{
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
	{"a watch's columns disagree with its record",
		`SELECT id FROM watches WHERE record->>'id' IS DISTINCT FROM id OR record->>'account' IS DISTINCT FROM account
			OR record->>'company_profile_id' IS DISTINCT FROM profile_id OR record->>'generation' IS DISTINCT FROM generation
			OR (record->>'ended')::boolean IS DISTINCT FROM ended`},
	{"an event names no order and is not the event of a watch",
		`SELECT id FROM outbox WHERE order_id IS NULL AND type <> 'company.changed'`},
	{"an event names an order of another account",
		`SELECT e.id FROM outbox e JOIN orders o ON o.id = e.order_id WHERE o.account <> e.account`},
	{"a webhook body is counted with another number of references than it has deliveries",
		`SELECT b.event_id FROM webhook_bodies b
			WHERE b.refs <> (SELECT count(*) FROM webhook_deliveries d WHERE d.event_id = b.event_id)`},
	{"a delivery record carries its own body",
		`SELECT event_id FROM webhook_deliveries WHERE strpos(record::text, ',"body":') > 0`},
	{"a delivery that is no longer pending is scheduled",
		`SELECT event_id FROM webhook_deliveries WHERE scheduled_at IS NOT NULL AND state <> 'pending'`},
	{"an order refers to a document that is not stored",
		`SELECT r.order_id FROM document_refs r WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.sha256 = r.sha256)`},
	{"a stored document's chunks are not numbered 0, 1, ... or do not add up to its size",
		`SELECT d.sha256 FROM documents d LEFT JOIN (SELECT sha256, count(*) AS n, max(seq) AS last, sum(octet_length(data)) AS size
			FROM document_chunks GROUP BY sha256) c ON c.sha256 = d.sha256
			WHERE c.size IS DISTINCT FROM d.size OR c.n <> c.last + 1`},
	{"a stored document's SHA-256 is not its name",
		`SELECT sha256 FROM document_chunks GROUP BY sha256
			HAVING encode(sha256(string_agg(data, ''::bytea ORDER BY seq)), 'hex') <> sha256`},
}

// Check verifies what the schema's constraints leave to the code: that
// the rows which index orders agree with the orders, and each order's
// columns with its record. It reads one snapshot; the ordering tests run
// it after each test.
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
		return checkRecords(ctx, tx)
	})
}

// checkRecords decodes every order: its columns must be the ones its
// record gives, and a delivered document must have its reference, and
// every reference its document.
func checkRecords(ctx context.Context, tx pgx.Tx) error {
	refs := map[[2]string]bool{}
	rows, err := tx.Query(ctx, "SELECT sha256, order_id FROM document_refs")
	if err != nil {
		return fmt.Errorf("read document references: %w", err)
	}
	var sha, id string
	if _, err := pgx.ForEachRow(rows, []any{&sha, &id}, func() error {
		refs[[2]string{sha, id}] = true
		return nil
	}); err != nil {
		return fmt.Errorf("read document references: %w", err)
	}
	rows, err = tx.Query(ctx, "SELECT "+orderColumnNames+" FROM orders")
	if err != nil {
		return fmt.Errorf("read orders: %w", err)
	}
	var row orderRow
	_, err = pgx.ForEachRow(rows, row.dest(), func() error { return checkOrderRow(&row, refs) })
	if err != nil {
		return err
	}
	for ref := range refs {
		return fmt.Errorf("document %s is referenced by order %s, which does not have it", ref[0], ref[1])
	}
	return nil
}

// orderRow is a stored order's columns (orderColumnNames).
type orderRow struct {
	id, account, status, profile, documentType, plan string
	charged, refunded                                int64
	key                                              *string
	createdAt                                        time.Time
	record                                           []byte
}

func (r *orderRow) dest() []any {
	return []any{&r.id, &r.account, &r.status, &r.profile, &r.documentType, &r.plan, &r.charged, &r.refunded, &r.key, &r.createdAt, &r.record}
}

// checkOrderRow compares a row's columns with the columns its record
// gives, and takes the order's document reference off refs.
func checkOrderRow(row *orderRow, refs map[[2]string]bool) error {
	var rec ordering.OrderRecord
	if err := json.Unmarshal(row.record, &rec); err != nil {
		return fmt.Errorf("order %s: the record does not decode: %w", row.id, err)
	}
	want, err := orderColumns(&rec)
	if err != nil {
		return err
	}
	got := row.dest()
	for i := range 9 { // the time is kept to the microsecond, the record is the source
		if g, w := fmt.Sprint(deref(got[i])), fmt.Sprint(deref(want[i])); g != w {
			return fmt.Errorf("order %s: column %d holds %s, its record says %s", row.id, i+1, g, w)
		}
	}
	if d := rec.Order.Document; d != nil {
		if !refs[[2]string{d.SHA256, rec.Order.ID}] {
			return fmt.Errorf("order %s: the delivered document %s has no reference", rec.Order.ID, d.SHA256)
		}
		delete(refs, [2]string{d.SHA256, rec.Order.ID})
	}
	return nil
}

// deref reads what a column pointer points to, so that scanned and
// derived values print alike.
func deref(v any) any {
	switch p := v.(type) {
	case *string:
		if p == nil {
			return nil
		}
		return *p
	case *int64:
		return *p
	case **string:
		return deref(*p)
	}
	return v
}
