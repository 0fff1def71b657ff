package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// DB is an ordering.Store.
var _ ordering.Store = (*DB)(nil)

// Update runs fn in one read-write transaction (READ COMMITTED, rows the
// rules change read FOR NO KEY UPDATE) and commits; see the package
// documentation. fn runs again after a deadlock or a serialization
// failure.
func (db *DB) Update(ctx context.Context, fn func(ordering.Tx) error) error {
	return db.update(ctx, func(tx pgx.Tx) error {
		return fn(newTxn(&txState{ctx: ctx, tx: tx, write: true, node: db.node}))
	})
}

// View runs fn in one read-only transaction on one snapshot.
func (db *DB) View(ctx context.Context, fn func(ordering.Tx) error) error {
	return db.view(ctx, func(tx pgx.Tx) error {
		return fn(newTxn(&txState{ctx: ctx, tx: tx, node: db.node}))
	})
}

// txn is an ordering.Tx: each method is a statement or two in the
// transaction. It has one part per kind of record (ordering's AccountTx,
// SessionTx, OrderTx, OutboxTx, WebhookTx, WatchTx, PaymentTx, and the
// DocumentTx of a SharedStore), each in the file named for it, all over
// the one PostgreSQL transaction they share, so that a transaction stays
// one however many parts it touches.
type txn struct {
	*txState
	accountTx
	sessionTx
	orderTx
	outboxTx
	webhookTx
	watchTx
	paymentTx
	documentTx
}

// txState is what the parts of a txn share: the transaction and its
// context, whether it may write, and the node it runs on.
type txState struct {
	ctx   context.Context
	tx    pgx.Tx
	write bool
	node  string // the store's node id, for delivery claims
}

// The parts of a txn, one per kind of record.
type (
	accountTx  struct{ *txState }
	sessionTx  struct{ *txState }
	orderTx    struct{ *txState }
	outboxTx   struct{ *txState }
	webhookTx  struct{ *txState }
	watchTx    struct{ *txState }
	paymentTx  struct{ *txState }
	documentTx struct{ *txState }
)

// newTxn makes a txn over the transaction tx.
func newTxn(s *txState) *txn {
	return &txn{txState: s, accountTx: accountTx{s}, sessionTx: sessionTx{s}, orderTx: orderTx{s}, outboxTx: outboxTx{s},
		webhookTx: webhookTx{s}, watchTx: watchTx{s}, paymentTx: paymentTx{s}, documentTx: documentTx{s}}
}

var _ ordering.Tx = (*txn)(nil)

// forUpdate is the locking clause of a read that the rules may follow
// with a change of the same row: in Update the row stays locked until
// the transaction ends. FOR NO KEY UPDATE excludes every other writer of
// the row as FOR UPDATE does (it conflicts with itself and with UPDATE),
// but not the FOR KEY SHARE lock that inserting a row referencing this
// one takes (an event, a delivery, a document reference naming the
// order): the referenced ids and names never change and no order or
// account is deleted, so those inserts need not wait for the
// transaction to end.
func (t *txState) forUpdate() string {
	if t.write {
		return " FOR NO KEY UPDATE"
	}
	return ""
}

// errReadOnly is a write attempted inside View.
var errReadOnly = errors.New("a write inside a read-only transaction (View)")

func (t *txState) needWrite() error {
	if !t.write {
		return errReadOnly
	}
	return nil
}

// lockAccount locks an account's row, so that a rule that counts the
// account's rows (sessions, endpoints) and then inserts one is not
// overtaken by another node doing the same.
func (t *txState) lockAccount(name string) error {
	if !t.write {
		return nil
	}
	_, err := t.tx.Exec(t.ctx, "SELECT 1 FROM accounts WHERE name = $1 FOR NO KEY UPDATE", name)
	return err
}

// exec runs a statement and returns the rows it changed.
func (t *txState) exec(sql string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(t.ctx, sql, args...)
	return tag.RowsAffected(), err
}

// one scans the single row of a query; found is false when there is none.
func (t *txState) one(sql string, args []any, dest ...any) (found bool, err error) {
	err = t.tx.QueryRow(t.ctx, sql, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// inserted turns the outcome of INSERT ... ON CONFLICT DO NOTHING into
// ordering.ErrExists when no row went in. A failed statement would abort
// the whole PostgreSQL transaction, while the rules may carry on after
// ErrExists (as they can on bbolt); a conflict that does nothing keeps it
// usable.
func inserted(n int64, err error, what string) error {
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case n == 0:
		return fmt.Errorf("%s: %w", what, ordering.ErrExists)
	}
	return nil
}

// jsonRows decodes one json column of every row into a T.
func jsonRows[T any](t *txState, sql string, args ...any) ([]T, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) {
		var v T
		var raw []byte
		if err := row.Scan(&raw); err != nil {
			return v, err
		}
		return v, json.Unmarshal(raw, &v)
	})
}
