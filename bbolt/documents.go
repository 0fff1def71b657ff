package bbolt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"companydocs/internal/atomicfile"
	"companydocs/ordering"
)

// Documents keeps the delivered PDFs as files beside orders.db, as
// DIR/<first 2 hex>/<sha256>.pdf (ordering.Documents). A file is complete
// and durable before any order refers to it: received into
// DIR/incoming/, fsynced, renamed and its directory fsynced before the
// DELIVERED transition commits. A crash in between leaves a file no order
// refers to, which OpenDocuments removes at the next start.
type Documents struct {
	dir string
}

var _ ordering.Documents = (*Documents)(nil)

// incomingDir holds the PDFs of deliveries on their way in, inside the
// documents directory so that keeping one is a rename on the same file
// system. OpenDocuments empties it, with every other file no order refers
// to.
const incomingDir = "incoming"

// DocumentsIn reads the documents kept in dir as they are, for a copy of
// a store; it neither creates nor sweeps anything.
func DocumentsIn(dir string) *Documents {
	return &Documents{dir: dir}
}

// OpenDocuments prepares the documents directory dir of db: it creates
// it, removes files no order refers to (the orphans of a crash between a
// document's rename and its order's commit, and unfinished uploads) and
// refuses to start, with ordering.ErrDamaged, when an order refers to a
// file that is missing: that is damage (a partial restore), not something
// to serve 404s for.
func OpenDocuments(db ordering.Store, dir string) (*Documents, error) {
	d := &Documents{dir: dir}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	err := db.View(context.Background(), func(tx ordering.Tx) error {
		if err := d.sweep(tx); err != nil {
			return err
		}
		return d.Check(tx)
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Documents) path(sha string) string {
	return filepath.Join(d.dir, sha[:2], sha+".pdf")
}

// Stage receives a PDF into a temporary file in the incoming directory.
func (d *Documents) Stage() (ordering.StagedDocument, error) {
	f, err := atomicfile.Stage(filepath.Join(d.dir, incomingDir), "upload-*.tmp")
	if err != nil {
		return nil, err
	}
	return &stagedFile{Staged: f, docs: d}, nil
}

// Attach does nothing: the file was kept before the transaction.
func (d *Documents) Attach(ordering.Tx, string, io.Reader) error { return nil }

// Open opens the stored document.
func (d *Documents) Open(_ context.Context, sha string) (io.ReadCloser, error) {
	if b, err := hex.DecodeString(sha); err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("%w: %q is no SHA-256", ordering.ErrDamaged, sha)
	}
	f, err := os.Open(d.path(sha))
	if err != nil {
		return nil, fmt.Errorf("open document %s: %w", sha, err)
	}
	return f, nil
}

// Check fails when an order refers to a document file that is not in
// the directory. The failure wraps ordering.ErrDamaged.
func (d *Documents) Check(tx ordering.Tx) error {
	return tx.DocumentRefs(func(sha, id string) error {
		if _, err := os.Stat(d.path(sha)); err != nil {
			return fmt.Errorf("%w: order %s refers to document %s, which is missing from %s (%v); restore documents/ from the backup taken with orders.db", ordering.ErrDamaged, id, sha, d.dir, err)
		}
		return nil
	})
}

// stagedFile is a PDF received into the incoming directory.
type stagedFile struct {
	*atomicfile.Staged
	docs *Documents
}

// Keep stores the received PDF durably under its SHA-256: synced, renamed
// into place and its directory synced. A file that is there already has
// the same content (its name is its hash) and was synced before it got
// that name.
func (s *stagedFile) Keep(sha string) error {
	final := s.docs.path(sha)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	sub := filepath.Dir(final)
	if _, err := os.Stat(sub); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(sub, 0o750); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create document directory: %w", err)
		}
		if err := atomicfile.SyncDir(s.docs.dir); err != nil {
			return err
		}
	}
	if err := s.Publish(final); err != nil {
		return fmt.Errorf("store document %s: %w", sha, err)
	}
	return nil
}

// sweep removes every file no order refers to.
func (d *Documents) sweep(tx ordering.Tx) error {
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
		if sub.IsDir() {
			if err := d.sweepDir(sub.Name(), referenced); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Documents) sweepDir(sub string, referenced map[string]bool) error {
	files, err := os.ReadDir(filepath.Join(d.dir, sub))
	if err != nil {
		return fmt.Errorf("read %s: %w", d.dir, err)
	}
	for _, f := range files {
		if sha, isPDF := strings.CutSuffix(f.Name(), ".pdf"); isPDF && referenced[sha] {
			continue
		}
		if err := os.Remove(filepath.Join(d.dir, sub, f.Name())); err != nil {
			return fmt.Errorf("remove unreferenced document: %w", err)
		}
	}
	return nil
}
