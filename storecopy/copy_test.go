package storecopy_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/realprofiles"
	"companydocs/ordering"
	"companydocs/storecopy"
)

var ctx = context.Background()

// testPDF is the document the source delivers.
var testPDF = []byte("%PDF-1.7\n% a register printout\n%%EOF\n")

// appliedAt is when the copied payment events were applied.
var appliedAt = time.Date(2026, 11, 2, 8, 15, 0, 0, time.UTC)

// copiedPaymentEvents is more than a page of a copy's reads (500).
const copiedPaymentEvents = 502

// TestCopy copies a store with every kind of record (a session, a key
// hash, an order holding its Idempotency-Key and its slot, a cancelled
// and refunded one, events still in the outbox, webhook endpoints with a
// delivered and a scheduled delivery, applied payment event ids) into a
// fresh store of every kind:
// the censuses match, the target passes its check and lists the same
// orders, and a second copy into it fails whole with ErrExists.
func TestCopy(t *testing.T) {
	for _, kind := range slices.Sorted(maps.Keys(kinds)) {
		t.Run(kind, func(t *testing.T) { testCopy(t, kinds[kind]) })
	}
}

func testCopy(t *testing.T, kind storeKind) {
	s := openSource(t, kind)
	delivered := s.fill(t)
	want, err := storecopy.TakeCensus(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	if want.Watches != 1 || want.Sessions != 1 || want.Orders != 3 || want.DocumentRefs != 1 || want.IdempotencyKeys != 1 || want.OpenOrders != 1 || want.Events == 0 || want.Scheduled == 0 || want.Deliveries <= want.Scheduled || want.PaymentEvents != copiedPaymentEvents {
		t.Fatalf("the source lacks a kind of record: %s", want)
	}
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		t.Run("into "+name, func(t *testing.T) { copyInto(t, s, kinds[name], want, delivered) })
	}
}

// source is a store with the ordering services over it, as serve wires
// them, and the real profiles its orders name.
type source struct {
	store    ordering.Store
	docs     ordering.Documents
	accounts *ordering.Accounts
	*ordering.Services
	profiles profileMap
	live     []*companydocs.Profile // currently registered, AD and CD held
}

// openSource opens an empty store of kind with its services; when the
// test ends, the store passes its check and its documents theirs.
func openSource(t *testing.T, kind storeKind) *source {
	t.Helper()
	s := &source{store: kind.open(t), profiles: profileMap{}}
	for _, p := range realprofiles.Registry(t) {
		if s.profiles[p.ID] != nil {
			continue // a register identity seen twice in the dump: keep the first
		}
		s.profiles[p.ID] = p
		if !p.Removed && p.HasDocument(companydocs.DocumentAD) && p.HasDocument(companydocs.DocumentCD) {
			s.live = append(s.live, p)
		}
	}
	if len(s.live) < 4 {
		t.Fatal("fixture records lack live profiles")
	}
	docs, err := kind.documents(s.store, filepath.Join(t.TempDir(), ordering.DocumentsDir))
	if err != nil {
		t.Fatal(err)
	}
	opts := ordering.Options{SweepInterval: -1, Documents: docs, DocumentURL: func(id string) string { return "/doc/" + id }}
	if s.Services, err = ordering.New(s.store, s.profiles, shippedPlans(t), opts); err != nil {
		t.Fatal(err)
	}
	s.docs, s.accounts = docs, ordering.NewAccounts(s.store, opts)
	t.Cleanup(func() {
		s.accounts.Close()
		mustCheck(t, s.store)
		if err := s.Orders.CheckDocuments(ctx); err != nil {
			t.Errorf("document check: %v", err)
		}
	})
	return s
}

// fill writes every kind of record through the rules and returns the id
// of the delivered order.
func (s *source) fill(t *testing.T) string {
	t.Helper()
	const acct, op = "acme", "op"
	s.mustAccount(t, acct, companydocs.RoleClient, 5)
	s.mustAccount(t, op, companydocs.RoleOperator, 0)
	key := s.mustAccount(t, "keyed", companydocs.RoleClient, 3)
	if _, err := s.accounts.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	mine, _ := s.Webhooks.CreateWebhook(ctx, acct, "https://hooks.example/acme", "")
	if _, err := s.Webhooks.CreateWebhook(ctx, op, "https://hooks.example/ops", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Orders.CreateOrder(ctx, acct, request(s.live[0], "AD"), "k-1"); err != nil {
		t.Fatal(err)
	}
	s.watchAndChange(t, acct, s.live[3])
	s.attemptDeliveries(t, mine.ID)
	delivered, err := s.Orders.CreateOrder(ctx, acct, request(s.live[2], "AD"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Orders.OperatorAction(ctx, op, delivered.ID, ordering.ActionRequest, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Orders.Deliver(ctx, op, delivered.ID, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
	second, err := s.Orders.CreateOrder(ctx, acct, request(s.live[1], "CD"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Orders.CancelOrder(ctx, acct, second.ID, ""); err != nil {
		t.Fatal(err)
	}
	s.claimPaymentEvents(t)
	return delivered.ID
}

func (s *source) mustAccount(t *testing.T, name, role string, credits int64) (apiKey string) {
	t.Helper()
	apiKey, err := s.accounts.CreateAccountWithRole(name, role, credits)
	if err != nil {
		t.Fatal(err)
	}
	return apiKey
}

// attemptDeliveries fans the outbox out and attempts every due delivery:
// those to endpoint mine fail and are scheduled again, the others are
// delivered.
func (s *source) attemptDeliveries(t *testing.T, mine string) {
	t.Helper()
	if n, err := s.Webhooks.FanOutEvents(100); n == 0 || err != nil {
		t.Fatalf("fan-out: %d, %v", n, err)
	}
	tasks, _, err := s.Webhooks.DueWebhooks(time.Now(), func(string) bool { return false }, 10)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("due: %v %v", tasks, err)
	}
	for _, tk := range tasks {
		r := companydocs.WebhookResult{EndpointID: tk.EndpointID, EventID: tk.EventID,
			Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered}
		if tk.EndpointID == mine {
			r.Attempt.StatusCode, r.State, r.NextAttempt = 500, companydocs.DeliveryPending, time.Now().Add(time.Hour)
		}
		s.Webhooks.RecordWebhookAttempt(r)
	}
}

// claimPaymentEvents applies more than a page of payment event ids.
func (s *source) claimPaymentEvents(t *testing.T) {
	t.Helper()
	if err := s.store.Update(ctx, func(tx ordering.Tx) error {
		for i := range copiedPaymentEvents {
			if _, err := tx.ClaimPaymentEvent("stripe", fmt.Sprintf("evt_copied_%04d", i), appliedAt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// watchAndChange watches p for the account and compares the watch with a
// generation that renames p: a watch with a last change, and an event and
// its deliveries that name no order.
func (s *source) watchAndChange(t *testing.T, account string, p *companydocs.Profile) {
	t.Helper()
	if _, _, err := s.Watches.CreateWatch(ctx, account, p.ID); err != nil {
		t.Fatal(err)
	}
	renamed := *p
	renamed.Name += " i.L."
	gen := &generation{id: "gen-20260101T000000.000Z-aaaaaa", profiles: profileMap{p.ID: &renamed}}
	if run, err := s.Watches.CompareWatches(ctx, gen, nil, nil); err != nil || run.Events != 1 {
		t.Fatalf("compare: %+v, %v", run, err)
	}
}

// copyInto copies s into a fresh store of kind and checks the copy.
func copyInto(t *testing.T, s *source, kind storeKind, want storecopy.Census, delivered string) {
	const acct = "acme"
	dst := kind.open(t)
	if err := storecopy.Copy(ctx, s.store, dst, s.docs.Open); err != nil {
		t.Fatal(err)
	}
	got, err := storecopy.TakeCensus(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := storecopy.Verify(want, got); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, dst)
	docsDir := t.TempDir()
	if _, shared := dst.(ordering.SharedStore); !shared {
		// files are the caller's to move into a store that does not keep them
		moveDocumentFiles(t, s, docsDir)
	}
	docs, err := kind.documents(dst, docsDir)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := ordering.New(dst, s.profiles, shippedPlans(t), ordering.Options{SweepInterval: -1, Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	if _, r, err := copied.Orders.Document(ctx, acct, delivered); err != nil {
		t.Errorf("the copy's document of %s: %v", delivered, err)
	} else if pdf, _ := io.ReadAll(r); !bytes.Equal(pdf, testPDF) {
		t.Errorf("the copy's document of %s differs from the delivered one", delivered)
	}
	checkCopiedBodies(t, s.store, copied)
	checkCopiedPaymentEvents(t, dst)
	checkCopiedLists(t, s, copied, acct)
	if err := storecopy.Copy(ctx, s.store, dst, s.docs.Open); !errors.Is(err, ordering.ErrExists) {
		t.Errorf("a second copy into the same store: %v, want ErrExists", err)
	}
	if again, _ := storecopy.TakeCensus(ctx, dst); storecopy.Verify(want, again) != nil {
		t.Errorf("a failed copy changed the target: %s", again)
	}
}

// checkCopiedLists: the copy lists the account's watches and orders as
// the source does.
func checkCopiedLists(t *testing.T, s *source, copied *ordering.Services, acct string) {
	t.Helper()
	watchesBefore, _ := s.Watches.Watches(ctx, acct)
	watchesAfter, err := copied.Watches.Watches(ctx, acct)
	if err != nil || len(watchesAfter) != 1 || watchesAfter[0].LastChange == nil || jsonOf(t, watchesBefore) != jsonOf(t, watchesAfter) {
		t.Errorf("the copy's watches %s (%v), the source's %s", jsonOf(t, watchesAfter), err, jsonOf(t, watchesBefore))
	}
	before, _, _ := s.Orders.List(ctx, acct, "", "", 100)
	after, _, err := copied.Orders.List(ctx, acct, "", "", 100)
	if err != nil || !reflect.DeepEqual(jsonOf(t, before), jsonOf(t, after)) {
		t.Errorf("the copy lists %s (%v), the source %s", jsonOf(t, after), err, jsonOf(t, before))
	}
}

// checkCopiedPaymentEvents: the copy holds the applied payment events
// with when each was applied, so that a replay is still one.
func checkCopiedPaymentEvents(t *testing.T, dst ordering.Store) {
	t.Helper()
	err := dst.Update(ctx, func(tx ordering.Tx) error {
		page, err := tx.PaymentEvents(ordering.AppliedPaymentEvent{Provider: "stripe", EventID: "evt_copied_0499"}, 10)
		if err != nil {
			return err
		}
		if len(page) != 2 || page[0].EventID != "evt_copied_0500" || page[1].EventID != "evt_copied_0501" || !page[0].AppliedAt.Equal(appliedAt) {
			t.Errorf("the copy's payment events after evt_copied_0499: %+v", page)
		}
		claimed, err := tx.ClaimPaymentEvent("stripe", "evt_copied_0007", time.Now())
		if claimed {
			t.Errorf("a payment event applied before the copy is not a replay in the copy")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moveDocumentFiles writes the documents s refers to into dir, as the
// file store keeps them (<first 2 hex>/<sha256>.pdf).
func moveDocumentFiles(t *testing.T, s *source, dir string) {
	err := s.store.View(ctx, func(tx ordering.Tx) error {
		return tx.DocumentRefs(func(sha, _ string) error {
			pdf, err := s.docs.Open(ctx, sha)
			if err != nil {
				return err
			}
			defer pdf.Close()
			b, err := io.ReadAll(pdf)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(dir, sha[:2]), 0o750); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, sha[:2], sha+".pdf"), b, 0o640)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkCopiedBodies: the copy's due deliveries carry the bodies the
// source stored for their events, byte for byte.
func checkCopiedBodies(t *testing.T, src ordering.Store, copied *ordering.Services) {
	t.Helper()
	tasks, _, err := copied.Webhooks.DueWebhooks(time.Now().Add(time.Hour), func(string) bool { return false }, 100)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("the copy's due deliveries: %d, %v", len(tasks), err)
	}
	for _, tk := range tasks {
		var want []byte
		if err := src.View(ctx, func(tx ordering.Tx) (err error) { want, err = tx.EventBody(tk.EventID); return err }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tk.Body, want) {
			t.Errorf("the copy sends %s for %s, the source stored %s", tk.Body, tk.EventID, want)
		}
	}
}

// TestCopyGivesRolelessAccountsTheClientRole: an account stored before
// roles existed (an old orders.db) has no role and is a client; a copy
// into any store stores it as one. PostgreSQL's store used to fill in
// the role itself, bbolt's kept none.
func TestCopyGivesRolelessAccountsTheClientRole(t *testing.T) {
	src := openBolt(t)
	old := &ordering.AccountRecord{Account: ordering.Account{Name: "old", Credits: 2, CreatedAt: time.Unix(1e9, 0).UTC()}, KeyHash: keyHash("cdk_old")}
	if err := src.Update(ctx, func(tx ordering.Tx) error { return tx.CreateAccount(old) }); err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(kinds)) {
		t.Run("into "+name, func(t *testing.T) {
			dst := kinds[name].open(t)
			if err := storecopy.Copy(ctx, src, dst, nil); err != nil {
				t.Fatal(err)
			}
			err := dst.View(ctx, func(tx ordering.Tx) error {
				rec, err := tx.Account("old")
				if err != nil || rec == nil || rec.Role != companydocs.RoleClient || rec.Credits != 2 {
					t.Errorf("the copied account %+v (%v), want a client with 2 credits", rec, err)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// checker is what a store offers to check its consistency.
type checker interface{ Check() error }

func mustCheck(t *testing.T, store ordering.Store) {
	t.Helper()
	if c, ok := store.(checker); ok {
		if err := c.Check(); err != nil {
			t.Errorf("the store fails its check: %v", err)
		}
	}
}

func request(p *companydocs.Profile, t companydocs.DocumentType) companydocs.OrderRequest {
	return companydocs.OrderRequest{CompanyProfileID: p.ID, DocumentType: t, PlanID: "subscription-basic"}
}

// shippedPlans loads the example plans file of the repository.
func shippedPlans(tb testing.TB) *ordering.Plans {
	tb.Helper()
	path := filepath.Join("..", "data", "plans.json")
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	plans, err := ordering.ParsePlans(path, data)
	if err != nil {
		tb.Fatal(err)
	}
	return plans
}

func jsonOf(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// profileMap answers profiles from memory, as a generation would.
type profileMap map[string]*companydocs.Profile

func (m profileMap) Profile(id string) (*companydocs.Profile, error) {
	p := m[id]
	if p == nil {
		return nil, nil
	}
	cp := *p
	return &cp, nil
}

// generation is a generation of the index holding profiles.
type generation struct {
	id       string
	profiles profileMap
}

func (g *generation) ID() string { return g.id }
func (g *generation) Profile(id string) (*companydocs.Profile, error) {
	return g.profiles.Profile(id)
}

// keyHash is how an API key is stored: its SHA-256.
func keyHash(apiKey string) []byte {
	h := sha256.Sum256([]byte(apiKey))
	return h[:]
}
