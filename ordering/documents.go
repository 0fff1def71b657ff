package ordering

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"companydocs"
)

// DocumentsDir is the directory of delivered PDFs inside the data directory.
const DocumentsDir = "documents"

// MaxDocumentSize bounds a delivered PDF (20 MiB).
const MaxDocumentSize = 20 << 20

// pdfMagic starts every PDF file.
const pdfMagic = "%PDF-"

// Documents keeps the delivered PDFs: the port through which this package
// stores and reads them without touching a file itself. Each store
// package offers one (bbolt: files in the data directory, made durable
// before the transaction that refers to them; postgres: rows written in
// that transaction). A PDF is complete and durable before any order
// refers to it, and a reference to a document that is not kept is damage
// (ErrDamaged), never a 404.
type Documents interface {
	// Stage opens a place to receive a PDF into, never whole in memory.
	Stage() (StagedDocument, error)
	// Attach stores the staged document, read from pdf, in tx, the
	// transaction of the DELIVERED transition, when the store keeps its
	// documents in its transactions; one that kept it before the
	// transaction (StagedDocument.Keep) does nothing. tx may run more
	// than once.
	Attach(tx Tx, sha256 string, pdf io.Reader) error
	// Open opens the document stored under its SHA-256 (hex) to be read
	// as it is sent. The reader must not hold a pooled connection, or
	// more than a bounded chunk of the PDF in memory, while its caller
	// reads slowly.
	Open(ctx context.Context, sha256 string) (io.ReadCloser, error)
	// Check fails, with an error wrapping ErrDamaged, when an order in
	// tx refers to a document that is not kept.
	Check(tx Tx) error
}

// StagedDocument is a PDF on its way in.
type StagedDocument interface {
	io.Writer
	// Reader reads what was written from its start; each call is a new
	// reader, for a transaction that runs more than once.
	Reader() io.Reader
	// Keep makes the document durable under its SHA-256 before the
	// transaction that refers to it, where the store keeps documents
	// outside its transactions; elsewhere it does nothing.
	Keep(sha256 string) error
	// Discard removes what was staged (nothing once kept).
	Discard()
}

// incoming is a delivered PDF received into a staged document: never
// held whole in memory, hashed on the way, at most MaxDocumentSize bytes
// and starting with the PDF magic.
type incoming struct {
	StagedDocument
	sha  string
	size int64
}

// receive streams pdf into a document staged in docs. The magic is
// checked on the first bytes, before anything is written; the size cap
// while the bytes arrive, so that a body that lies about its length
// stops at the cap plus one byte.
func receive(docs Documents, pdf io.Reader) (*incoming, error) {
	head := make([]byte, len(pdfMagic))
	if n, err := io.ReadFull(pdf, head); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	} else if string(head[:n]) != pdfMagic {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.not_a_pdf", companydocs.Args{"magic": pdfMagic})
	}
	staged, err := docs.Stage()
	if err != nil {
		return nil, err
	}
	in := &incoming{StagedDocument: staged}
	sum := sha256.New()
	w := io.MultiWriter(staged, sum)
	n, err := io.Copy(w, io.MultiReader(bytes.NewReader(head), io.LimitReader(pdf, MaxDocumentSize+1-int64(len(head)))))
	if err == nil && n > MaxDocumentSize {
		err = companydocs.Refusal(companydocs.ETOOLARGE, "refusal.document_too_large", companydocs.Args{"max_bytes": MaxDocumentSize})
	}
	if err != nil {
		staged.Discard()
		return nil, err
	}
	in.sha, in.size = hex.EncodeToString(sum.Sum(nil)), n
	return in, nil
}

// A DocumentReader opens a delivered PDF by its SHA-256 (hex), as
// Documents.Open does: what a copy between stores reads documents with.
type DocumentReader func(ctx context.Context, sha256 string) (io.ReadCloser, error)

// SharedStore is a Store that several processes use at once (package
// postgres: the nodes of one deployment). It keeps the delivered PDFs
// itself, so that every node reads what any node delivered, and its Tx is
// also a DocumentTx (PutDocument only in Update). Accounts trusts a
// cached session of a shared store for at most SharedSessionCacheTTL,
// since another process may end it.
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

// ErrDamaged is wrapped by the errors that describe damaged order data:
// a reference to a document file that is missing here, and (in package
// bbolt) a damaged database file.
var ErrDamaged = errors.New("the order database is damaged")

// Document opens the delivered PDF of one of the client's own orders, to
// be read as it is sent (Documents.Open).
// Before delivery, and for anyone but the owner, it is not_found.
func (s *Orders) Document(ctx context.Context, account, id string) (*companydocs.Order, io.ReadCloser, error) {
	o, err := s.Order(ctx, account, id)
	if err != nil {
		return nil, nil, err
	}
	if o.Document == nil {
		return nil, nil, companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_document_yet", companydocs.Args{"order": id, "status": o.Status})
	}
	r, err := s.docs.Open(ctx, o.Document.SHA256)
	if err != nil {
		return nil, nil, fmt.Errorf("order %s: %w", id, err)
	}
	return o, r, nil
}
