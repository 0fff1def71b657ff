package ordering

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"testing"

	"companydocs"
	"companydocs/internal/testclock"
)

// node is one process of a deployment over a shared store: its own pool
// on the database, its own data directory, its own session cache.
func openNode(t *testing.T, storeDir string, fx *fixture, c *testclock.Clock) *service {
	t.Helper()
	store, err := openStore(t, storeDir) // the same database for the same storeDir
	if err != nil {
		t.Fatal(err)
	}
	docs, err := openDocuments(t, store, filepath.Join(t.TempDir(), DocumentsDir))
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	opts := Options{SweepInterval: -1, Now: c.Now, Documents: docs}
	svc, err := New(store, fx.profiles, shippedPlans(t), opts)
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	s := newService(NewAccounts(store, opts), svc, store, docs, "")
	t.Cleanup(func() { s.Close() })
	return s
}

// TestNodesShareDocuments: a PDF delivered through one node of a shared
// store downloads, byte for byte, from another node with a data directory
// of its own.
func TestNodesShareDocuments(t *testing.T) { t.Run("postgres", testNodesShareDocuments) }

func testNodesShareDocuments(t *testing.T) {
	fx := realFixture(t)
	dir, c := t.TempDir(), testclock.New()
	a, b := openNode(t, dir, fx, c), openNode(t, dir, fx, c)
	MustAccount(t, a, "acme", 0)
	if _, err := a.CreateAccountWithRole("op", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	o, err := a.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	mustAct(t, b, "op", o.ID, ActionPay, "")
	mustAct(t, b, "op", o.ID, ActionRequest, "")
	if _, err := b.Deliver(ctx, "op", o.ID, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
	got, r, err := a.Document(ctx, "acme", o.ID)
	if err != nil {
		t.Fatalf("download from the other node: %v", err)
	}
	pdf, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(pdf, testPDF) || got.Document.Size != int64(len(testPDF)) {
		t.Fatalf("downloaded %q (%v), order says %+v; want the delivered %q", pdf, err, got.Document, testPDF)
	}
	// A node starting later finds every referenced document in the store.
	openNode(t, dir, fx, c)
	if err := b.CheckDocuments(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestSessionEndedOnOneNodeIsRefusedOnEvery: a session that one node
// ended (sign-out, key rotation) is refused by another node that had it
// cached, SharedSessionCacheTTL after the end at the latest. The test
// clock stands still, then moves by the TTL: no wall-clock timing.
func TestSessionEndedOnOneNodeIsRefusedOnEvery(t *testing.T) {
	t.Run("postgres", testSessionEndedOnOneNodeIsRefusedOnEvery)
}

func testSessionEndedOnOneNodeIsRefusedOnEvery(t *testing.T) {
	fx := realFixture(t)
	dir, c := t.TempDir(), testclock.New()
	a, b := openNode(t, dir, fx, c), openNode(t, dir, fx, c)
	key, _, err := a.EnsureDemoAccount(5)
	if err != nil {
		t.Fatal(err)
	}
	signOut, err := a.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := a.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{signOut.Token, rotated.Token} {
		if _, err := b.Authenticate(ctx, tok); err != nil { // now cached on b
			t.Fatal(err)
		}
	}
	if err := a.RevokeSession(ctx, signOut.Token); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.EnsureDemoAccount(5); err != nil { // a new key ends the other session
		t.Fatal(err)
	}
	c.Advance(SharedSessionCacheTTL)
	if _, err := b.Authenticate(ctx, signOut.Token); companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED {
		t.Errorf("a signed-out session on the other node after %v: %v, want unauthorized", SharedSessionCacheTTL, err)
	}
	if _, err := b.Authenticate(ctx, rotated.Token); companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED {
		t.Errorf("a session of a replaced key on the other node after %v: %v, want unauthorized", SharedSessionCacheTTL, err)
	}
}
