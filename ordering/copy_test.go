package ordering

import (
	"bytes"
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
)

// TestCopy copies a store with every kind of record (a session, a key
// hash, an order holding its Idempotency-Key and its slot, a cancelled
// and refunded one, events still in the outbox, webhook endpoints with a
// delivered and a scheduled delivery, applied payment event ids) into a
// fresh store of every kind:
// the censuses match, the target passes its check and lists the same
// orders, and a second copy into it fails whole with ErrExists.
func TestCopy(t *testing.T) { forEachStore(t, testCopy) }

func testCopy(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	key, err := s.CreateAccount("keyed", 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	mine, _ := s.CreateWebhook(ctx, acct, "https://hooks.example/acme", "")
	if _, err := s.CreateWebhook(ctx, op, "https://hooks.example/ops", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "subscription-basic"), "k-1"); err != nil {
		t.Fatal(err)
	}
	watchAndChange(t, s, acct, fx.live[3])
	if n, err := s.FanOutEvents(100); n == 0 || err != nil {
		t.Fatalf("fan-out: %d, %v", n, err)
	}
	tasks, _, err := s.DueWebhooks(time.Now(), func(string) bool { return false }, 10)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("due: %v %v", tasks, err)
	}
	for _, tk := range tasks {
		r := companydocs.WebhookResult{EndpointID: tk.EndpointID, EventID: tk.EventID,
			Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered}
		if tk.EndpointID == mine.ID {
			r.Attempt.StatusCode, r.State, r.NextAttempt = 500, companydocs.DeliveryPending, time.Now().Add(time.Hour)
		}
		s.RecordWebhookAttempt(r)
	}
	delivered, err := s.CreateOrder(ctx, acct, request(fx.live[2], "AD", "subscription-basic"), "")
	if err != nil {
		t.Fatal(err)
	}
	mustAct(t, s, op, delivered.ID, ActionRequest, "")
	if _, err := s.Deliver(ctx, op, delivered.ID, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
	second, err := s.CreateOrder(ctx, acct, request(fx.live[1], "CD", "subscription-basic"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelOrder(ctx, acct, second.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.store.Update(ctx, func(tx Tx) error {
		for i := range copyPage + 2 { // more than a page
			if _, err := tx.ClaimPaymentEvent("stripe", fmt.Sprintf("evt_copied_%04d", i), appliedAt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want, err := TakeCensus(ctx, s.store)
	if err != nil {
		t.Fatal(err)
	}
	if want.Watches != 1 || want.Sessions != 1 || want.Orders != 3 || want.DocumentRefs != 1 || want.IdempotencyKeys != 1 || want.OpenOrders != 1 || want.Events == 0 || want.Scheduled == 0 || want.Deliveries <= want.Scheduled || want.PaymentEvents != copyPage+2 {
		t.Fatalf("the source lacks a kind of record: %s", want)
	}
	for _, kind := range slices.Sorted(maps.Keys(TestStores)) {
		t.Run("into "+kind, func(t *testing.T) { copyInto(t, s, kind, want, acct, fx, delivered.ID) })
	}
}

// watchAndChange watches p for the account and compares the watch with a
// generation that renames p: a watch with a last change, and an event and
// its deliveries that name no order.
func watchAndChange(t *testing.T, s *service, account string, p *companydocs.Profile) {
	t.Helper()
	if _, _, err := s.CreateWatch(ctx, account, p.ID); err != nil {
		t.Fatal(err)
	}
	renamed := *p
	renamed.Name += " i.L."
	gen := &fakeGeneration{id: "gen-20260101T000000.000Z-aaaaaa", profiles: fakeProfiles{p.ID: &renamed}}
	if run, err := s.CompareWatches(ctx, gen, nil, nil); err != nil || run.Events != 1 {
		t.Fatalf("compare: %+v, %v", run, err)
	}
}

// appliedAt is when the copied payment events were applied.
var appliedAt = time.Date(2026, 11, 2, 8, 15, 0, 0, time.UTC)

// copyInto copies s into a fresh store of kind and checks the copy.
func copyInto(t *testing.T, s *service, kind string, want Census, acct string, fx *fixture, delivered string) {
	dst, err := TestStores[kind](t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if err := Copy(ctx, s.store, dst, s.docs.Open); err != nil {
		t.Fatal(err)
	}
	got, err := TakeCensus(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(want, got); err != nil {
		t.Fatal(err)
	}
	if c, ok := dst.(checker); ok {
		if err := c.Check(); err != nil {
			t.Errorf("the copy fails its store's check: %v", err)
		}
	}
	docsDir := t.TempDir()
	if _, shared := dst.(SharedStore); !shared {
		// files are the caller's to move into a store that does not keep them
		moveDocumentFiles(t, s, docsDir)
	}
	docs, err := TestDocuments[kind](dst, docsDir)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := New(dst, fx.profiles, shippedPlans(t), Options{SweepInterval: -1, Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	if _, r, err := orders.Orders.Document(ctx, acct, delivered); err != nil {
		t.Errorf("the copy's document of %s: %v", delivered, err)
	} else if pdf, _ := io.ReadAll(r); !bytes.Equal(pdf, testPDF) {
		t.Errorf("the copy's document of %s differs from the delivered one", delivered)
	}
	checkCopiedBodies(t, s.store, orders)
	checkCopiedPaymentEvents(t, dst)
	watchesBefore, _ := s.Watches.Watches(ctx, acct)
	watchesAfter, err := orders.Watches.Watches(ctx, acct)
	if err != nil || len(watchesAfter) != 1 || watchesAfter[0].LastChange == nil || jsonOf(t, watchesBefore) != jsonOf(t, watchesAfter) {
		t.Errorf("the copy's watches %s (%v), the source's %s", jsonOf(t, watchesAfter), err, jsonOf(t, watchesBefore))
	}
	before, _, _ := s.Orders.List(ctx, acct, "", "", 100)
	after, _, err := orders.Orders.List(ctx, acct, "", "", 100)
	if err != nil || !reflect.DeepEqual(jsonOf(t, before), jsonOf(t, after)) {
		t.Errorf("the copy lists %s (%v), the source %s", jsonOf(t, after), err, jsonOf(t, before))
	}
	if err := Copy(ctx, s.store, dst, s.docs.Open); !errors.Is(err, ErrExists) {
		t.Errorf("a second copy into the same store: %v, want ErrExists", err)
	}
	if again, _ := TakeCensus(ctx, dst); Verify(want, again) != nil {
		t.Errorf("a failed copy changed the target: %s", again)
	}
}

// checkCopiedPaymentEvents: the copy holds the applied payment events
// with when each was applied, so that a replay is still one.
func checkCopiedPaymentEvents(t *testing.T, dst Store) {
	t.Helper()
	err := dst.Update(ctx, func(tx Tx) error {
		page, err := tx.PaymentEvents(AppliedPaymentEvent{Provider: "stripe", EventID: "evt_copied_0499"}, 10)
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

func jsonOf(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// moveDocumentFiles writes the documents s refers to into dir, as the
// file store keeps them (<first 2 hex>/<sha256>.pdf).
func moveDocumentFiles(t *testing.T, s *service, dir string) {
	err := s.store.View(ctx, func(tx Tx) error {
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
func checkCopiedBodies(t *testing.T, src Store, copied *Services) {
	t.Helper()
	tasks, _, err := copied.Webhooks.DueWebhooks(time.Now().Add(time.Hour), func(string) bool { return false }, 100)
	if err != nil || len(tasks) == 0 {
		t.Fatalf("the copy's due deliveries: %d, %v", len(tasks), err)
	}
	for _, tk := range tasks {
		var want []byte
		if err := src.View(ctx, func(tx Tx) (err error) { want, err = tx.EventBody(tk.EventID); return err }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tk.Body, want) {
			t.Errorf("the copy sends %s for %s, the source stored %s", tk.Body, tk.EventID, want)
		}
	}
}
