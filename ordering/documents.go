package ordering

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// incomingDir holds the PDFs of deliveries on their way in, inside
// DocumentsDir so that keeping one is a rename on the same file system.
// prepare empties it at start, with every other file no order refers to.
const incomingDir = "incoming"

// incoming is a delivered PDF received into a temporary file: never held
// whole in memory, hashed on the way, at most MaxDocumentSize bytes and
// starting with the PDF magic. discard removes the file unless keep
// renamed it into the store.
type incoming struct {
	f    *os.File
	sha  string
	size int64
}

// receive streams pdf into a temporary file in the incoming directory
// (dir, or the system's when the store keeps the documents itself and no
// DocumentsDir is set). The magic is checked on the first bytes, before
// anything is written; the size cap while the bytes arrive, so that a
// body that lies about its length stops at the cap plus one byte.
func receive(dir string, pdf io.Reader) (*incoming, error) {
	head := make([]byte, len(pdfMagic))
	if n, err := io.ReadFull(pdf, head); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	} else if string(head[:n]) != pdfMagic {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.not_a_pdf", companydocs.Args{"magic": pdfMagic})
	}
	f, err := createIncoming(dir)
	if err != nil {
		return nil, err
	}
	in := &incoming{f: f}
	sum := sha256.New()
	w := io.MultiWriter(f, sum)
	n, err := io.Copy(w, io.MultiReader(bytes.NewReader(head), io.LimitReader(pdf, MaxDocumentSize+1-int64(len(head)))))
	if err == nil && n > MaxDocumentSize {
		err = companydocs.Refusal(companydocs.ETOOLARGE, "refusal.document_too_large", companydocs.Args{"max_bytes": MaxDocumentSize})
	}
	if err != nil {
		in.discard()
		return nil, err
	}
	in.sha, in.size = hex.EncodeToString(sum.Sum(nil)), n
	return in, nil
}

// sweepIncoming removes what deliveries that never finished (a crash)
// left in the incoming directory of a SharedStore's node; with the files
// store, prepare's sweep does it.
func (d documentStore) sweepIncoming() error {
	if d.dir == "" {
		return nil
	}
	dir := filepath.Join(d.dir, incomingDir)
	files, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, f := range files {
		if err := os.Remove(filepath.Join(dir, f.Name())); err != nil {
			return fmt.Errorf("remove an unfinished upload: %w", err)
		}
	}
	return nil
}

func createIncoming(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	} else {
		dir = filepath.Join(dir, incomingDir)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	f, err := os.CreateTemp(dir, "upload-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create upload file: %w", err)
	}
	return f, nil
}

// reader reads the received PDF from its start; each call is a new
// reader, for a transaction that runs more than once.
func (in *incoming) reader() io.Reader {
	return io.NewSectionReader(in.f, 0, in.size)
}

// discard closes and removes the temporary file (gone already once kept).
func (in *incoming) discard() {
	in.f.Close()
	os.Remove(in.f.Name())
}

// keep stores the received PDF durably under its SHA-256: synced, renamed
// into place and its directory synced. A file that is there already has
// the same content (its name is its hash) and was synced before it got
// that name.
func (d documentStore) keep(in *incoming) error {
	final := d.path(in.sha)
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
	err := in.f.Sync()
	if err == nil {
		err = os.Rename(in.f.Name(), final)
	}
	if err != nil {
		return fmt.Errorf("store document %s: %w", in.sha, err)
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
	// Document opens the PDF stored under its SHA-256 (hex), or returns an
	// error wrapping ErrNotFound when there is none. The reader must not
	// hold a pooled connection, or more than a bounded chunk of the PDF in
	// memory, while its caller reads slowly: a download may take as long
	// as the HTTP write timeout.
	Document(ctx context.Context, sha256 string) (io.ReadCloser, error)
}

// DocumentTx stores a delivered PDF in the transaction of the DELIVERED
// transition, so that the document and the order that refers to it commit
// together or not at all: no orphan, no reference to a missing document.
type DocumentTx interface {
	// PutDocument stores what pdf reads under sha256 (hex, its SHA-256),
	// reading it in bounded chunks; a document stored already under that
	// hash is left as it is (same content) and pdf is not read.
	PutDocument(sha256 string, pdf io.Reader) error
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

// Document opens the delivered PDF of one of the client's own orders, to
// be read as it is sent: a file, or a SharedStore's chunk reader.
// Before delivery, and for anyone but the owner, it is not_found.
func (s *Orders) Document(ctx context.Context, account, id string) (*companydocs.Order, io.ReadCloser, error) {
	o, err := s.Order(ctx, account, id)
	if err != nil {
		return nil, nil, err
	}
	if o.Document == nil {
		return nil, nil, companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_document_yet", companydocs.Args{"order": id, "status": o.Status})
	}
	if s.shared != nil {
		r, err := s.shared.Document(ctx, o.Document.SHA256)
		if err != nil {
			return nil, nil, fmt.Errorf("order %s: %w", id, err)
		}
		return o, r, nil
	}
	f, err := s.docs.open(o.Document.SHA256)
	if err != nil {
		return nil, nil, err
	}
	return o, f, nil
}
