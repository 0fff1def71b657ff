package postgres

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"companydocs/internal/atomicfile"
	"companydocs/ordering"
)

// Documents keeps the delivered PDFs in the database (ordering.Documents):
// a PDF is received into a temporary file of this node, then stored in
// the transaction of the DELIVERED transition, read from the file in
// bounded chunks, so that both commit or neither, with no orphan to
// sweep.
type Documents struct {
	db       *DB
	incoming string // "": the system's temporary directory
}

var _ ordering.Documents = (*Documents)(nil)

// OpenDocuments prepares the documents of db: it refuses, with
// ordering.ErrDamaged, a database that holds references before the
// documents themselves, and removes the unfinished uploads a crash left
// in dir/incoming. dir is the node's documents directory ("" receives
// into the system's temporary directory).
func OpenDocuments(db *DB, dir string) (*Documents, error) {
	d := &Documents{db: db}
	if dir != "" {
		d.incoming = filepath.Join(dir, "incoming")
	}
	if err := db.View(context.Background(), d.Check); err != nil {
		return nil, err
	}
	if d.incoming != "" {
		if err := atomicfile.RemoveStaged(d.incoming); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Stage receives a PDF into a temporary file of this node.
func (d *Documents) Stage() (ordering.StagedDocument, error) {
	f, err := atomicfile.Stage(d.incoming, "upload-*.tmp")
	if err != nil {
		return nil, err
	}
	return stagedFile{f}, nil
}

// Attach stores the PDF in tx, the transaction of its delivery.
func (d *Documents) Attach(tx ordering.Tx, sha256 string, pdf io.Reader) error {
	dtx, ok := tx.(ordering.DocumentTx)
	if !ok {
		return fmt.Errorf("postgres: the transaction %T is not a DocumentTx", tx)
	}
	return dtx.PutDocument(sha256, pdf)
}

// Open opens the stored document (DB.Document).
func (d *Documents) Open(ctx context.Context, sha256 string) (io.ReadCloser, error) {
	return d.db.Document(ctx, sha256)
}

// Check fails when an order refers to a document that is not in the
// database. The failure wraps ordering.ErrDamaged.
func (d *Documents) Check(tx ordering.Tx) error {
	dtx, ok := tx.(ordering.DocumentTx)
	if !ok {
		return fmt.Errorf("postgres: the transaction %T is not a DocumentTx", tx)
	}
	return dtx.MissingDocuments(func(sha, id string) error {
		return fmt.Errorf("%w: order %s refers to document %s, which is not in the database; copy the PDF into it (its SHA-256 is its name in the documents/ directory of the node that delivered it)", ordering.ErrDamaged, id, sha)
	})
}

// stagedFile is a received PDF, stored by Attach: Keep has nothing to do.
type stagedFile struct{ *atomicfile.Staged }

func (stagedFile) Keep(string) error { return nil }
