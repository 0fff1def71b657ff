package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// DB keeps the delivered PDFs itself (tables documents and
// document_chunks, migration 00003), so that every node serves what any
// node delivered.
var (
	_ ordering.SharedStore = (*DB)(nil)
	_ ordering.DocumentTx  = (*txn)(nil)
)

// ChunkSize is the most a row of document_chunks holds (256 KiB; the
// migration's CHECK says so too): the most of a PDF a delivery holds in
// memory at once, besides the driver's buffer for the row.
// ordering.MaxDocumentSize (20 MiB) is 80 chunks.
const ChunkSize = 256 << 10

// ReadSize is the most of a chunk one read of a download fetches
// (32 KiB): the most of a PDF a download holds in memory while its client
// reads. A download is held for as long as its client takes, and the
// server's GC target (GOGC 800, app/gc.go) lets the heap grow
// to nine times what is live before it collects, and keeps that much from
// the system afterwards: 32 slow downloads holding a whole chunk each
// (8 MiB) left the node's resident memory about 100 MiB higher after
// they ended, 64 KiB each about 48 MiB, 32 KiB each about 37 MiB, as much
// as over orders.db give or take 15 MiB (TestResourcesSlowDownloads). A
// 20 MiB PDF is 640 reads.
const ReadSize = 32 << 10

// Document opens the PDF stored under sha256. Each Read that needs more
// runs one short read-only transaction for the next ReadSize bytes of a
// chunk (substring of an uncompressed, out-of-line bytea reads only the
// TOAST rows it needs): a download holds a pooled connection only for
// that query, never while its client reads, and ReadSize bytes in
// memory. Documents are never changed, so pieces read in different
// transactions belong together.
func (db *DB) Document(ctx context.Context, sha256 string) (io.ReadCloser, error) {
	var size int64
	err := db.view(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT size FROM documents WHERE sha256 = $1", sha256).Scan(&size)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("document %s: %w: it is not in the database", sha256, ordering.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read document %s: %w", sha256, err)
	}
	return &chunkReader{db: db, sha: sha256, left: size}, nil
}

// chunkReader reads a document ReadSize bytes at a time, chunk after
// chunk. Its reads outlive the request that opened it (the HTTP server
// writes the body after the handler returned), so they run under their
// own context, bounded by the statement timeout. Every piece is read into
// the reader's one buffer: a download makes one buffer of garbage, not
// one per piece sent.
type chunkReader struct {
	db    *DB
	sha   string
	seq   int   // the chunk being read
	off   int   // bytes of chunk seq already fetched
	left  int64 // bytes of the document not yet fetched
	buf   pieceBuffer
	piece []byte // what is left of buf to read
}

// pieceBuffer receives a piece's bytes into the buffer it holds
// (pgtype.BytesScanner): a []byte destination would be a new slice for
// every piece.
type pieceBuffer struct{ b []byte }

func (c *pieceBuffer) ScanBytes(v []byte) error {
	c.b = append(c.b[:0], v...)
	return nil
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.piece) == 0 {
		if r.left == 0 {
			return 0, io.EOF
		}
		if err := r.fetch(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.piece)
	r.piece = r.piece[n:]
	return n, nil
}

// fetch reads the next piece of chunk seq, and moves on to the next
// chunk when it has read the chunk's last byte.
func (r *chunkReader) fetch() error {
	ctx := context.Background()
	var chunkLen int
	err := r.db.view(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT substring(data FROM $3 FOR $4), octet_length(data) FROM document_chunks WHERE sha256 = $1 AND seq = $2",
			r.sha, r.seq, r.off+1, ReadSize).Scan(&r.buf, &chunkLen)
	})
	data := r.buf.b
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && (len(data) == 0 || int64(len(data)) > r.left):
		return fmt.Errorf("%w: chunk %d of document %s is missing or longer than the document", ordering.ErrDamaged, r.seq, r.sha)
	case err != nil:
		return fmt.Errorf("read chunk %d of document %s: %w", r.seq, r.sha, err)
	}
	r.piece, r.left, r.off = data, r.left-int64(len(data)), r.off+len(data)
	if r.off >= chunkLen {
		r.seq, r.off = r.seq+1, 0
	}
	return nil
}

// Close drops the buffer; the reader holds nothing else.
func (r *chunkReader) Close() error {
	r.buf.b, r.piece, r.left = nil, nil, 0
	return nil
}

// PutDocument stores the PDF in the transaction of the transition that
// refers to it, one chunk at a time, then its documents row (the chunks'
// foreign key is checked at the commit). A hash stored already is the
// same content: pdf is not read. Another node delivering the same hash at
// once waits on the chunks' primary key for this transaction's outcome
// (ON CONFLICT DO NOTHING) instead of failing.
func (t documentTx) PutDocument(sha256 string, pdf io.Reader) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	var stored bool
	if _, err := t.one("SELECT true FROM documents WHERE sha256 = $1", []any{sha256}, &stored); err != nil || stored {
		return wrap(err, "store document "+sha256)
	}
	buf := make([]byte, ChunkSize)
	var size int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(pdf, buf)
		if n > 0 {
			if _, err := t.exec("INSERT INTO document_chunks (sha256, seq, data) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", sha256, seq, buf[:n]); err != nil {
				return wrap(err, "store document "+sha256)
			}
			size += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("store document %s: %w", sha256, err)
		}
	}
	_, err := t.exec("INSERT INTO documents (sha256, size) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING", sha256, size)
	return wrap(err, "store document "+sha256)
}

// MissingDocuments calls fn with every reference whose document is not
// in the table, in SHA-256 order. The rows are read first, so that fn may
// use the transaction.
func (t documentTx) MissingDocuments(fn func(sha256, orderID string) error) error {
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
