package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

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
	if _, err := ordering.NewOrders(nodes[1], nil, nil, ordering.Options{}); !errors.Is(err, ordering.ErrDamaged) || !strings.Contains(err.Error(), sha) {
		t.Fatalf("start with a reference to a missing document: %v, want ErrDamaged naming %s", err, sha)
	}
	if err := nodes[1].Check(); err == nil || !strings.Contains(err.Error(), "ord_1") {
		t.Fatalf("check with a reference to a missing document: %v", err)
	}
	if _, err := nodes[1].Document(ctx, sha); !errors.Is(err, ordering.ErrNotFound) {
		t.Fatalf("a missing document: %v, want ErrNotFound", err)
	}
	for range 2 { // the second put of the same hash changes nothing
		mustUpdate(t, nodes[0], func(tx ordering.Tx) error { return tx.(ordering.DocumentTx).PutDocument(sha, pdf) })
	}
	got, err := nodes[1].Document(ctx, sha)
	if err != nil || !bytes.Equal(got, pdf) {
		t.Fatalf("document read on the other node: %q, %v", got, err)
	}
	if _, err := ordering.NewOrders(nodes[1], nil, nil, ordering.Options{}); err != nil {
		t.Fatalf("start once the document is stored: %v", err)
	}
	if err := nodes[1].Check(); err != nil {
		t.Fatal(err)
	}
	err = nodes[0].View(ctx, func(tx ordering.Tx) error { return tx.(ordering.DocumentTx).PutDocument(sha, pdf) })
	if !errors.Is(err, errReadOnly) {
		t.Errorf("PutDocument in View: %v, want a refusal", err)
	}
	mustExec(t, nodes[0], "UPDATE documents SET pdf = '\\x25504446'::bytea")
	if err := nodes[1].Check(); err == nil || !strings.Contains(err.Error(), sha) {
		t.Fatalf("check with a document whose bytes changed: %v", err)
	}
}
