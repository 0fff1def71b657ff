package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// DB keeps the delivered PDFs itself (table documents), so that every
// node serves what any node delivered.
var (
	_ ordering.SharedStore = (*DB)(nil)
	_ ordering.DocumentTx  = (*txn)(nil)
)

// Document returns the PDF stored under sha256, read whole: a download
// holds one pooled connection while the bytes (at most
// ordering.MaxDocumentSize) travel, and the memory they take until the
// response is written.
func (db *DB) Document(ctx context.Context, sha256 string) ([]byte, error) {
	var pdf []byte
	err := db.view(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT pdf FROM documents WHERE sha256 = $1", sha256).Scan(&pdf)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("document %s: %w: it is not in the database", sha256, ordering.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", sha256, err)
	}
	return pdf, nil
}

// PutDocument stores the PDF in the transaction of the transition that
// refers to it. ON CONFLICT DO NOTHING: the same hash is the same content,
// and another node delivering it at once waits for this insert's outcome
// instead of failing.
func (t *txn) PutDocument(sha256 string, pdf []byte) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("INSERT INTO documents (sha256, pdf) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING", sha256, pdf)
	return wrap(err, "store document "+sha256)
}

// MissingDocuments calls fn with every reference whose document is not
// in the table, in SHA-256 order. The rows are read first, so that fn may
// use the transaction.
func (t *txn) MissingDocuments(fn func(sha256, orderID string) error) error {
	rows, err := t.tx.Query(t.ctx, `SELECT r.sha256, r.order_id FROM document_refs r
		WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.sha256 = r.sha256)
		ORDER BY r.sha256, r.order_id`)
	if err != nil {
		return wrap(err, "list documents missing")
	}
	type ref struct{ SHA256, OrderID string }
	refs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ref])
	if err != nil {
		return wrap(err, "list documents missing")
	}
	for _, r := range refs {
		if err := fn(r.SHA256, r.OrderID); err != nil {
			return err
		}
	}
	return nil
}
