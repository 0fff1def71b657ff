package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"companydocs"
	"companydocs/ordering"
)

// TestDocumentsLiveInTheDatabase: a PDF stored in a transaction reads
// back whole from another pool (another node) and is stored once per
// hash; a reference whose document is missing refuses to start
// (ErrDamaged, as a missing file does on bbolt) and fails Check, and so
// does a document whose bytes no longer match its name.
func TestDocumentsLiveInTheDatabase(t *testing.T) {
	ctx := context.Background()
	url := newDatabase(t)
	nodes := openNodes(t, url, 2)
	pdf := []byte("%PDF-1.7\n% a register printout\n%%EOF\n")
	sum := sha256.Sum256(pdf)
	sha := hex.EncodeToString(sum[:])
	newAccount(t, nodes[0], "acme", 0)
	o := testOrder("ord_1", "acme")
	o.Order.Document = &companydocs.OrderDocument{SHA256: sha, Size: int64(len(pdf)), ContentType: "application/pdf"}
	mustUpdate(t, nodes[0], func(tx ordering.Tx) error {
		if err := tx.InsertOrder(o); err != nil {
			return err
		}
		if _, err := tx.ClaimOpenOrder(ordering.OpenSlot{Account: "acme", ProfileID: "p1", DocumentType: "AD", PlanID: "basic"}, "ord_1"); err != nil {
			return err
		}
		return tx.AddDocumentRef(sha, "ord_1")
	})
	if _, err := OpenDocuments(nodes[1], ""); !errors.Is(err, ordering.ErrDamaged) || !strings.Contains(err.Error(), sha) {
		t.Fatalf("start with a reference to a missing document: %v, want ErrDamaged naming %s", err, sha)
	}
	if err := nodes[1].Check(); err == nil || !strings.Contains(err.Error(), "ord_1") {
		t.Fatalf("check with a reference to a missing document: %v", err)
	}
	if _, err := nodes[1].Document(ctx, sha); !errors.Is(err, ordering.ErrNotFound) {
		t.Fatalf("a missing document: %v, want ErrNotFound", err)
	}
	for range 2 { // the second put of the same hash changes nothing
		mustUpdate(t, nodes[0], func(tx ordering.Tx) error { return tx.(ordering.DocumentTx).PutDocument(sha, bytes.NewReader(pdf)) })
	}
	got, err := readDocument(nodes[1], sha)
	if err != nil || !bytes.Equal(got, pdf) {
		t.Fatalf("document read on the other node: %q, %v", got, err)
	}
	if _, err := OpenDocuments(nodes[1], ""); err != nil {
		t.Fatalf("start once the document is stored: %v", err)
	}
	if err := nodes[1].Check(); err != nil {
		t.Fatal(err)
	}
	err = nodes[0].View(ctx, func(tx ordering.Tx) error { return tx.(ordering.DocumentTx).PutDocument(sha, bytes.NewReader(pdf)) })
	if !errors.Is(err, errReadOnly) {
		t.Errorf("PutDocument in View: %v, want a refusal", err)
	}
	mustExec(t, nodes[0], "UPDATE document_chunks SET data = '\\x25504446'::bytea")
	if err := nodes[1].Check(); err == nil || !strings.Contains(err.Error(), sha) {
		t.Fatalf("check with a document whose bytes changed: %v", err)
	}
}

func readDocument(db *DB, sha string) ([]byte, error) {
	r, err := db.Document(context.Background(), sha)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// bigPDF is a PDF of n bytes whose chunks differ.
func bigPDF(n int) ([]byte, string) {
	pdf := []byte("%PDF-1.7\n")
	for i := 0; len(pdf) < n; i++ {
		pdf = append(pdf, byte(i), byte(i>>8), byte(i>>16))
	}
	pdf = pdf[:n]
	sum := sha256.Sum256(pdf)
	return pdf, hex.EncodeToString(sum[:])
}

// TestDocumentsStoredInChunks: a PDF of several chunks, the last one
// partial, goes in chunk by chunk (ChunkSize at most each) and reads back
// whole, each chunk in a transaction of its own: with a pool of one
// connection, a reader that has read one chunk holds no connection, so
// another query runs while it waits. Every piece of a chunk is read
// into the reader's one buffer of ReadSize bytes.
func TestDocumentsStoredInChunks(t *testing.T) {
	db, err := Open(context.Background(), newDatabase(t), Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	pdf, sha := bigPDF(2*ChunkSize + 1000)
	mustUpdate(t, db, func(tx ordering.Tx) error { return tx.(ordering.DocumentTx).PutDocument(sha, bytes.NewReader(pdf)) })
	var chunks, longest int
	mustQuery(t, db, "SELECT count(*), max(octet_length(data)) FROM document_chunks WHERE sha256 = '"+sha+"'", &chunks, &longest)
	if chunks != 3 || longest != ChunkSize {
		t.Errorf("%d chunks, the longest %d bytes; want 3 of at most %d", chunks, longest, ChunkSize)
	}
	r, err := db.Document(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 10)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	var n int
	mustQuery(t, db, "SELECT count(*) FROM documents", &n) // the pool's one connection is free
	buf := &r.(*chunkReader).buf.b[0]
	if n := cap(r.(*chunkReader).buf.b); n > ReadSize {
		t.Errorf("the reader holds %d bytes, over ReadSize (%d)", n, ReadSize)
	}
	rest, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(append(head, rest...), pdf) {
		t.Fatalf("read back %d bytes (%v), want the %d stored", len(head)+len(rest), err, len(pdf))
	}
	if &r.(*chunkReader).buf.b[0] != buf {
		t.Error("the pieces after the first were read into new buffers, not the reader's one")
	}
	r.Close()
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "DELETE FROM document_chunks WHERE seq = 1")
	if err := db.Check(); err == nil || !strings.Contains(err.Error(), sha) {
		t.Errorf("check with a chunk missing: %v", err)
	}
	if _, err := readDocument(db, sha); !errors.Is(err, ordering.ErrDamaged) {
		t.Errorf("read with a chunk missing: %v, want ErrDamaged", err)
	}
}

// TestMigrationMovesDocumentsIntoChunks: documents stored whole at schema
// version 2 are in chunks after Open migrates, and read back equal.
func TestMigrationMovesDocumentsIntoChunks(t *testing.T) {
	ctx := context.Background()
	url := newDatabase(t)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, mustSub(t), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatal(err)
	}
	small, smallSHA := bigPDF(100)
	big, bigSHA := bigPDF(3*ChunkSize + 7)
	for _, d := range []struct {
		pdf []byte
		sha string
	}{{small, smallSHA}, {big, bigSHA}} {
		if _, err := sqlDB.ExecContext(ctx, "INSERT INTO documents (sha256, pdf) VALUES ($1, $2)", d.sha, d.pdf); err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for sha, want := range map[string][]byte{smallSHA: small, bigSHA: big} {
		if got, err := readDocument(db, sha); err != nil || !bytes.Equal(got, want) {
			t.Errorf("document %s after the migration: %d bytes (%v), want %d", sha[:8], len(got), err, len(want))
		}
	}
	if err := db.Check(); err != nil {
		t.Fatal(err)
	}
}

func mustSub(t *testing.T) fs.FS {
	t.Helper()
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}
