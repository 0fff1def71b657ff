package postgres

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// Order returns the order, locking its row in Update.
func (t orderTx) Order(id string) (*ordering.OrderRecord, error) {
	list, err := jsonRows[ordering.OrderRecord](t.txState, "SELECT record FROM orders WHERE id = $1"+t.forUpdate(), id)
	if err != nil || len(list) == 0 {
		return nil, wrap(err, fmt.Sprintf("read order %s", id))
	}
	return &list[0], nil
}

// orderColumnNames are the columns orderColumns gives, in its order.
const orderColumnNames = "id, account, status, company_profile_id, document_type, plan_id, credits_charged, credits_refunded, idempotency_key, created_at, record"

// orderColumns are the columns derived from an order record: what the
// constraints, indexes and queries need. The record itself is kept whole.
func orderColumns(rec *ordering.OrderRecord) ([]any, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode order %s: %w", rec.Order.ID, err)
	}
	o := &rec.Order
	var key *string
	if rec.IdempotencyKey != "" {
		key = &rec.IdempotencyKey
	}
	return []any{o.ID, rec.Account, o.Status, o.CompanyProfileID, string(o.DocumentType), o.PlanID,
		o.CreditsCharged, o.CreditsRefunded, key, o.CreatedAt, raw}, nil
}

// InsertOrder stores a new order: ErrExists when the id is taken.
func (t orderTx) InsertOrder(rec *ordering.OrderRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	args, err := orderColumns(rec)
	if err != nil {
		return err
	}
	n, err := t.exec(`INSERT INTO orders (`+orderColumnNames+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`, args...)
	return inserted(n, err, fmt.Sprintf("store order %s", rec.Order.ID))
}

// UpdateOrder replaces a stored order; the status index is a column, so
// from is not needed.
func (t orderTx) UpdateOrder(rec *ordering.OrderRecord, from string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	args, err := orderColumns(rec)
	if err != nil {
		return err
	}
	n, err := t.exec(`UPDATE orders SET account = $2, status = $3, company_profile_id = $4, document_type = $5, plan_id = $6,
		credits_charged = $7, credits_refunded = $8, idempotency_key = $9, created_at = $10, record = $11 WHERE id = $1`, args...)
	if err != nil {
		return fmt.Errorf("update order %s: %w", rec.Order.ID, err)
	} else if n == 0 {
		return fmt.Errorf("update order %s: %w", rec.Order.ID, ordering.ErrNotFound)
	}
	return nil
}

// IdempotentOrder returns the order the account created with the key.
func (t orderTx) IdempotentOrder(account, key string) (string, error) {
	var id string
	_, err := t.one("SELECT order_id FROM idempotency_keys WHERE account = $1 AND key = $2", []any{account, key}, &id)
	return id, wrap(err, "look up an Idempotency-Key")
}

// ClaimIdempotencyKey binds the key to orderID unless another order holds
// it. The INSERT waits for a concurrent claim of the same key on another
// node to commit or roll back, so exactly one claim wins.
func (t orderTx) ClaimIdempotencyKey(account, key, orderID string) (string, error) {
	if err := t.needWrite(); err != nil {
		return "", err
	}
	n, err := t.exec("INSERT INTO idempotency_keys (account, key, order_id) VALUES ($1, $2, $3) ON CONFLICT (account, key) DO NOTHING", account, key, orderID)
	if err != nil || n == 1 {
		return "", wrap(err, "claim an Idempotency-Key")
	}
	return t.IdempotentOrder(account, key)
}

// OpenOrder returns the open order in the slot, or "".
func (t orderTx) OpenOrder(slot ordering.OpenSlot) (string, error) {
	var id string
	_, err := t.one("SELECT order_id FROM open_orders WHERE account = $1 AND profile_id = $2 AND document_type = $3 AND plan_id = $4",
		slotArgs(slot), &id)
	return id, wrap(err, "look up the open order")
}

func slotArgs(slot ordering.OpenSlot, more ...any) []any {
	return append([]any{slot.Account, slot.ProfileID, string(slot.DocumentType), slot.PlanID}, more...)
}

// ClaimOpenOrder makes orderID the slot's open order unless another holds
// it; concurrent claims on several nodes resolve as for the
// Idempotency-Key.
func (t orderTx) ClaimOpenOrder(slot ordering.OpenSlot, orderID string) (string, error) {
	if err := t.needWrite(); err != nil {
		return "", err
	}
	n, err := t.exec(`INSERT INTO open_orders (account, profile_id, document_type, plan_id, order_id) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (account, profile_id, document_type, plan_id) DO NOTHING`, slotArgs(slot, orderID)...)
	if err != nil || n == 1 {
		return "", wrap(err, "claim the open-order slot")
	}
	return t.OpenOrder(slot)
}

// ReleaseOpenOrder frees the slot (the rules checked its holder, whose
// order row they hold locked).
func (t orderTx) ReleaseOpenOrder(slot ordering.OpenSlot) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("DELETE FROM open_orders WHERE account = $1 AND profile_id = $2 AND document_type = $3 AND plan_id = $4",
		slotArgs(slot)...)
	return wrap(err, "release the open-order slot")
}

// AccountOrders returns the account's orders, newest first.
func (t orderTx) AccountOrders(account, status, before string, limit int) ([]*ordering.OrderRecord, error) {
	list, err := jsonRows[*ordering.OrderRecord](t.txState, `SELECT record FROM orders WHERE account = $1 AND ($2 = '' OR status = $2)
		AND ($3 = '' OR id < $3) ORDER BY id DESC LIMIT $4`, account, status, before, limit)
	return list, wrap(err, "list the account's orders")
}

// QueuedOrders returns the orders of every account, oldest first.
func (t orderTx) QueuedOrders(status, after string, limit int) ([]*ordering.OrderRecord, error) {
	list, err := jsonRows[*ordering.OrderRecord](t.txState, `SELECT record FROM orders WHERE ($1 = '' OR status = $1) AND id > $2
		ORDER BY id LIMIT $3`, status, after, limit)
	return list, wrap(err, "list the order queue")
}

// CountOrdersByStatus counts the orders in each status.
func (t orderTx) CountOrdersByStatus() (map[string]int, error) {
	rows, err := t.tx.Query(t.ctx, "SELECT status, count(*) FROM orders GROUP BY status")
	if err != nil {
		return nil, wrap(err, "count orders")
	}
	counts := map[string]int{}
	var status string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		counts[status] = n
		return nil
	})
	return counts, wrap(err, "count orders")
}

// AddDocumentRef records that the order refers to the document.
func (t orderTx) AddDocumentRef(sha256, orderID string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("INSERT INTO document_refs (sha256, order_id) VALUES ($1, $2) ON CONFLICT DO NOTHING", sha256, orderID)
	return wrap(err, "record a document reference")
}

// DocumentRefs calls fn with every reference in SHA-256 order. The rows
// are read first, so that fn may use the transaction.
func (t orderTx) DocumentRefs(fn func(sha256, orderID string) error) error {
	rows, err := t.tx.Query(t.ctx, "SELECT sha256, order_id FROM document_refs ORDER BY sha256, order_id")
	if err != nil {
		return wrap(err, "list document references")
	}
	type ref struct{ SHA256, OrderID string }
	refs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ref])
	if err != nil {
		return wrap(err, "list document references")
	}
	for _, r := range refs {
		if err := fn(r.SHA256, r.OrderID); err != nil {
			return err
		}
	}
	return nil
}
