package ordering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"companydocs"
)

// DocumentsDir is the directory of delivered PDFs inside the data directory.
const DocumentsDir = "documents"

// MaxDocumentSize bounds a delivered PDF (20 MiB).
const MaxDocumentSize = 20 << 20

// pdfMagic starts every PDF file.
const pdfMagic = "%PDF-"

// documentStore keeps delivered PDFs as DIR/<first 2 hex>/<sha256>.pdf.
// A file is complete and durable before any order refers to it: it is
// written to a temporary file, fsynced, renamed and its directory fsynced
// before the DELIVERED transition commits. A crash in between leaves a
// file no order refers to, which prepare removes at the next start.
type documentStore struct {
	dir string
	url func(orderID string) string
}

func (d documentStore) path(sha string) string {
	return filepath.Join(d.dir, sha[:2], sha+".pdf")
}

// validPDF checks what a delivery uploads.
func validPDF(pdf []byte) error {
	if len(pdf) > MaxDocumentSize {
		return companydocs.Errorf(companydocs.ETOOLARGE, "The document is %d bytes; at most %d bytes (20 MiB) are accepted.", len(pdf), MaxDocumentSize)
	}
	if !bytes.HasPrefix(pdf, []byte(pdfMagic)) {
		return companydocs.Errorf(companydocs.EVALIDATION, "The document is not a PDF: a PDF file starts with %q. Upload the register's PDF file as the raw body.", pdfMagic)
	}
	return nil
}

// write stores pdf durably under sha, its SHA-256 in hex. A file that is
// there already has the same content (its name is its hash) and was
// synced before it got that name.
func (d documentStore) write(sha string, pdf []byte) error {
	final := d.path(sha)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	sub := filepath.Dir(final)
	if _, err := os.Stat(sub); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(sub, 0o750); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create document directory: %w", err)
		}
		if err := syncDir(d.dir); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(sub, sha+".*.tmp")
	if err != nil {
		return fmt.Errorf("create document file: %w", err)
	}
	_, err = tmp.Write(pdf)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("store document %s: %w", sha, err)
	}
	return syncDir(sub)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// open returns the stored document.
func (d documentStore) open(sha string) (*os.File, error) {
	f, err := os.Open(d.path(sha))
	if err != nil {
		return nil, fmt.Errorf("open document %s: %w", sha, err)
	}
	return f, nil
}

// SharedStore is a Store that several processes use at once (package
// postgres: the nodes of one deployment). It keeps the delivered PDFs
// itself, so that every node reads what any node delivered, and its Tx is
// also a DocumentTx (PutDocument only in Update). Accounts trusts a cached session of a
// shared store for at most SharedSessionCacheTTL, since another process
// may end it. Without it, Orders keeps the PDFs as files in
// Options.DocumentsDir.
type SharedStore interface {
	Store
	// Document returns the PDF stored under its SHA-256 (hex): an error
	// wrapping ErrNotFound when there is none.
	Document(ctx context.Context, sha256 string) ([]byte, error)
}

// DocumentTx stores a delivered PDF in the transaction of the DELIVERED
// transition, so that the document and the order that refers to it commit
// together or not at all: no orphan, no reference to a missing document.
type DocumentTx interface {
	// PutDocument stores pdf under sha256 (hex, its SHA-256); a document
	// stored already under that hash is left as it is (same content).
	PutDocument(sha256 string, pdf []byte) error
	// MissingDocuments calls fn with every document reference whose
	// document is not stored, until fn returns an error, which it returns.
	MissingDocuments(fn func(sha256, orderID string) error) error
}

// sharedDocuments checks, at start, that every document an order refers
// to is in the shared store (ErrDamaged otherwise): a database that held
// references before it held the documents themselves.
func sharedDocuments(store SharedStore) error {
	return store.View(context.Background(), func(tx Tx) error { return checkSharedDocuments(tx) })
}

func checkSharedDocuments(tx Tx) error {
	dtx, ok := tx.(DocumentTx)
	if !ok {
		return fmt.Errorf("ordering: the transaction of a SharedStore (%T) is not a DocumentTx", tx)
	}
	return dtx.MissingDocuments(func(sha, id string) error {
		return fmt.Errorf("%w: order %s refers to document %s, which is not in the database; copy the PDF into it (its SHA-256 is its name in the documents/ directory of the node that delivered it)", ErrDamaged, id, sha)
	})
}

// ErrDamaged is wrapped by the errors that describe damaged order data:
// a reference to a document file that is missing here, and (in package
// bbolt) a damaged database file.
var ErrDamaged = errors.New("the order database is damaged")

// prepare creates the directory, removes files no order refers to (the
// orphans of a crash between a document's rename and its order's commit,
// and temporary files) and refuses to start when an order refers to a
// file that is missing: that is damage (a partial restore), not something
// to serve 404s for.
func (d documentStore) prepare(store Store) error {
	if err := os.MkdirAll(d.dir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", d.dir, err)
	}
	return store.View(context.Background(), func(tx Tx) error {
		if err := d.sweep(tx); err != nil {
			return err
		}
		return checkDocumentFiles(tx, d.dir)
	})
}

func (d documentStore) sweep(tx Tx) error {
	referenced := map[string]bool{}
	err := tx.DocumentRefs(func(sha, _ string) error {
		referenced[sha] = true
		return nil
	})
	if err != nil {
		return err
	}
	subs, err := os.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("read %s: %w", d.dir, err)
	}
	for _, sub := range subs {
		if !sub.IsDir() {
			continue
		}
		files, err := os.ReadDir(filepath.Join(d.dir, sub.Name()))
		if err != nil {
			return fmt.Errorf("read %s: %w", d.dir, err)
		}
		for _, f := range files {
			if sha, isPDF := strings.CutSuffix(f.Name(), ".pdf"); isPDF && referenced[sha] {
				continue
			}
			if err := os.Remove(filepath.Join(d.dir, sub.Name(), f.Name())); err != nil {
				return fmt.Errorf("remove unreferenced document: %w", err)
			}
		}
	}
	return nil
}

// checkDocumentFiles fails when an order refers to a document file that is
// not in dir. The failure wraps ErrDamaged.
func checkDocumentFiles(tx Tx, dir string) error {
	d := documentStore{dir: dir}
	return tx.DocumentRefs(func(sha, id string) error {
		if _, err := os.Stat(d.path(sha)); err != nil {
			return fmt.Errorf("%w: order %s refers to document %s, which is missing from %s (%v); restore documents/ from the backup taken with orders.db", ErrDamaged, id, sha, dir, err)
		}
		return nil
	})
}

// Document opens the delivered PDF of one of the client's own orders.
// Before delivery, and for anyone but the owner, it is not_found.
func (s *Orders) Document(ctx context.Context, account, id string) (*companydocs.Order, io.ReadCloser, error) {
	o, err := s.Order(ctx, account, id)
	if err != nil {
		return nil, nil, err
	}
	if o.Document == nil {
		return nil, nil, companydocs.Errorf(companydocs.ENOTFOUND, "Order %s has no document yet: it is %s.", id, o.Status)
	}
	if s.shared != nil {
		pdf, err := s.shared.Document(ctx, o.Document.SHA256)
		if err != nil {
			return nil, nil, fmt.Errorf("order %s: %w", id, err)
		}
		return o, io.NopCloser(bytes.NewReader(pdf)), nil
	}
	f, err := s.docs.open(o.Document.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return o, f, nil
}
