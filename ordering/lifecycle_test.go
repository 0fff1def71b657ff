package ordering

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
)

var testPDF = []byte("%PDF-1.7\n% a register printout\n%%EOF\n")

func lifecycleService(t *testing.T) (*service, *fixture, string, string) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{DocumentURL: func(id string) string { return "/doc/" + id }})
	acct := MustAccount(t, s, "acme", 5)
	if _, err := s.CreateAccountWithRole("op", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	return s, fx, acct, "op"
}

func mustAct(t *testing.T, s *service, op, id, action, note string) *companydocs.Order {
	t.Helper()
	o, err := s.OperatorAction(ctx, op, id, action, note)
	if err != nil {
		t.Fatalf("%s %s: %v", action, id, err)
	}
	return o
}

// TestLifecycle runs a one-off order and a credit order to DELIVERED and
// checks history, document, download and one outbox event per change.
func TestLifecycle(t *testing.T) { forEachStore(t, testLifecycle) }

func testLifecycle(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	one, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	credit, err := s.CreateOrder(ctx, acct, request(fx.live[1], "AD", "subscription-basic"), "")
	if err != nil {
		t.Fatal(err)
	}
	if credit.Status != companydocs.OrderStatusPreviewReady || len(credit.History) != 1 {
		t.Errorf("credit create answered %s with %d history entries, want PREVIEW_READY and 1", credit.Status, len(credit.History))
	}
	if got, _ := s.Order(ctx, acct, credit.ID); got.Status != companydocs.OrderStatusPaid || got.History[1].Actor != companydocs.ActorSystem {
		t.Errorf("credit order after create: %s %+v, want PAID by system", got.Status, got.History)
	}
	mustAct(t, s, op, one.ID, ActionPay, "")
	for _, id := range []string{one.ID, credit.ID} {
		mustAct(t, s, op, id, ActionRequest, "")
		o, err := s.Deliver(ctx, op, id, bytes.NewReader(testPDF))
		if err != nil {
			t.Fatal(err)
		}
		if o.Status != companydocs.OrderStatusDelivered || o.WorkflowStatus != companydocs.WorkflowCompleted || o.Document == nil || o.Document.Size != int64(len(testPDF)) || o.Document.DownloadURL != "/doc/"+id || len(o.History) != 4 {
			t.Errorf("delivered order %+v", o)
		}
		_, r, err := s.Document(ctx, acct, id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Equal(b, testPDF) {
			t.Errorf("downloaded %q", b)
		}
	}
	events := storedEvents(t, s)
	want := []string{EventOrderCreated, EventOrderCreated, EventOrderPaid, EventOrderPaid, EventOrderRequested, EventOrderDelivered, EventOrderRequested, EventOrderDelivered}
	if len(events) != len(want) {
		t.Fatalf("%d events, want %d", len(events), len(want))
	}
	for i, e := range events {
		var o companydocs.Order
		if err := json.Unmarshal(e.Payload, &o); err != nil || e.Type != want[i] || eventOfStatus[o.Status] != e.Type || e.Account != acct {
			t.Errorf("event %d: %s for status %s of %s (%v), want %s", i, e.Type, o.Status, e.Account, err, want[i])
		}
		if i > 0 && e.ID <= events[i-1].ID {
			t.Errorf("event ids not increasing: %s after %s", e.ID, events[i-1].ID)
		}
	}
	if n, err := s.FanOutEvents(1); n != 1 || err != nil {
		t.Fatalf("fan-out of one event: %d, %v", n, err)
	}
	if n, oldest, _ := s.OutboxStats(); n != len(want)-1 || !oldest.Equal(events[1].At) {
		t.Errorf("outbox depth %d, oldest %v after taking one, want %d and %v", n, oldest, len(want)-1, events[1].At)
	}
}

// TestRefundExactlyOnce cancels and fails credit orders: the credits come
// back once, a second cancel is refused and changes nothing.
func TestRefundExactlyOnce(t *testing.T) { forEachStore(t, testRefundExactlyOnce) }

func testRefundExactlyOnce(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	o, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "subscription-basic"), "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.CancelOrder(ctx, acct, o.ID, "")
	if err != nil || c.CreditsRefunded != 1 || c.Status != companydocs.OrderStatusCancelled {
		t.Fatalf("cancel: %+v %v", c, err)
	}
	if a, _ := s.Account(acct); a.Credits != 5 {
		t.Errorf("credits after cancel %d, want 5", a.Credits)
	}
	_, err = s.CancelOrder(ctx, acct, o.ID, "")
	wantCode(t, err, companydocs.EINVALIDTRANSITION)
	_, err = s.OperatorAction(ctx, op, o.ID, ActionFail, "again")
	wantCode(t, err, companydocs.EINVALIDTRANSITION)
	if a, _ := s.Account(acct); a.Credits != 5 {
		t.Errorf("credits after second cancel %d, want 5", a.Credits)
	}
	// The same order again is allowed now; fail it with a reason.
	o2, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "subscription-basic"), "")
	if err != nil {
		t.Fatalf("re-order after cancel: %v", err)
	}
	_, err = s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "subscription-basic"), "")
	wantCode(t, err, companydocs.EDUPLICATEORDER)
	mustAct(t, s, op, o2.ID, ActionRequest, "")
	_, err = s.OperatorAction(ctx, op, o2.ID, ActionFail, "")
	wantCode(t, err, companydocs.EVALIDATION)
	f := mustAct(t, s, op, o2.ID, ActionFail, "The register has no such document.")
	if f.CreditsRefunded != 1 || f.WorkflowStatus != companydocs.WorkflowFailed {
		t.Errorf("failed order %+v", f)
	}
	if a, _ := s.Account(acct); a.Credits != 5 {
		t.Errorf("credits after fail %d, want 5", a.Credits)
	}
}

// TestEveryIllegalTransitionRefused brings an order into every status and
// tries every client and operator change on it: what the table allows
// succeeds, everything else is invalid_transition and changes nothing.
func TestEveryIllegalTransitionRefused(t *testing.T) {
	forEachStore(t, testEveryIllegalTransitionRefused)
}

func testEveryIllegalTransitionRefused(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	paths := map[string][]string{
		companydocs.OrderStatusPreviewReady: nil,
		companydocs.OrderStatusPaid:         {ActionPay},
		companydocs.OrderStatusRequested:    {ActionPay, ActionRequest},
		companydocs.OrderStatusDelivered:    {ActionPay, ActionRequest, ActionDeliver},
		companydocs.OrderStatusFailed:       {ActionPay, ActionFail},
		companydocs.OrderStatusCancelled:    {ActionCancel},
	}
	do := func(id, actor, action string) error {
		switch {
		case actor == companydocs.ActorClient:
			_, err := s.CancelOrder(ctx, acct, id, "")
			return err
		case action == ActionDeliver:
			_, err := s.Deliver(ctx, op, id, bytes.NewReader(testPDF))
			return err
		}
		_, err := s.OperatorAction(ctx, op, id, action, "reason")
		return err
	}
	target := map[string]string{ActionPay: companydocs.OrderStatusPaid, ActionRequest: companydocs.OrderStatusRequested, ActionFail: companydocs.OrderStatusFailed, ActionCancel: companydocs.OrderStatusCancelled, ActionDeliver: companydocs.OrderStatusDelivered}
	tries := []struct{ actor, action string }{{companydocs.ActorClient, ActionCancel}}
	for _, a := range []string{ActionPay, ActionRequest, ActionDeliver, ActionFail, ActionCancel} {
		tries = append(tries, struct{ actor, action string }{companydocs.ActorOperator, a})
	}
	for from, path := range paths {
		for _, try := range tries {
			o, err := s.CreateOrder(ctx, acct, request(fx.live[2], "CD", "cd-single"), "")
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range path {
				if err := do(o.ID, companydocs.ActorOperator, step); err != nil {
					t.Fatal(err)
				}
			}
			err = do(o.ID, try.actor, try.action)
			allowed := companydocs.CanTransition(from, target[try.action], try.actor)
			if allowed && err != nil {
				t.Errorf("%s %s on %s: %v", try.actor, try.action, from, err)
			}
			if !allowed {
				wantCode(t, err, companydocs.EINVALIDTRANSITION)
				if got, _ := s.Order(ctx, acct, o.ID); got.Status != from {
					t.Errorf("refused %s %s changed %s to %s", try.actor, try.action, from, got.Status)
				}
			}
			if got, _ := s.Order(ctx, acct, o.ID); !companydocs.TerminalStatus(got.Status) {
				if _, err := s.OperatorAction(ctx, op, o.ID, ActionCancel, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	// One event per committed change: the histories and the outbox agree.
	events := storedEvents(t, s)
	orders, _, _ := s.List(ctx, acct, "", "", 100)
	n := 0
	for _, o := range orders {
		n += len(o.History)
	}
	if len(events) != n {
		t.Errorf("%d outbox events for %d history entries", len(events), n)
	}
}

func TestRolesAreEnforced(t *testing.T) { forEachStore(t, testRolesAreEnforced) }

func testRolesAreEnforced(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	o, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateOrder(ctx, op, request(fx.live[0], "AD", "ad-single"), "")
	wantCode(t, err, companydocs.EFORBIDDEN)
	_, err = s.Order(ctx, op, o.ID)
	wantCode(t, err, companydocs.EFORBIDDEN)
	_, _, err = s.Document(ctx, op, o.ID)
	wantCode(t, err, companydocs.EFORBIDDEN)
	_, err = s.OperatorAction(ctx, acct, o.ID, ActionPay, "")
	wantCode(t, err, companydocs.EFORBIDDEN)
	_, _, err = s.OperatorOrders(ctx, acct, "", "", 10)
	wantCode(t, err, companydocs.EFORBIDDEN)
	_, err = s.Deliver(ctx, acct, o.ID, bytes.NewReader(testPDF))
	wantCode(t, err, companydocs.EFORBIDDEN)
	MustAccount(t, s, "other", 0)
	_, err = s.CancelOrder(ctx, "other", o.ID, "")
	wantCode(t, err, companydocs.ENOTFOUND)
	q, _, err := s.OperatorOrders(ctx, op, companydocs.OrderStatusPreviewReady, "", 10)
	if err != nil || len(q) != 1 || q[0].Account != acct {
		t.Errorf("operator queue %v %v", q, err)
	}
}

func TestIdempotencyKeyWithDifferentBody(t *testing.T) {
	forEachStore(t, testIdempotencyKeyWithDifferentBody)
}

func testIdempotencyKeyWithDifferentBody(t *testing.T) {
	s, fx, acct, _ := lifecycleService(t)
	first, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "k1")
	if err != nil {
		t.Fatal(err)
	}
	e := wantCode(t, func() error {
		_, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "k1")
		return err
	}(), companydocs.EDUPLICATEORDER)
	if e.Order.ID != first.ID || bytes.Contains([]byte(e.Message), []byte("different")) {
		t.Errorf("replay: %q %s", e.Message, e.Order.ID)
	}
	e = wantCode(t, func() error {
		_, err := s.CreateOrder(ctx, acct, request(fx.live[1], "AD", "ad-single"), "k1")
		return err
	}(), companydocs.EDUPLICATEORDER)
	if e.Order.ID != first.ID || !bytes.Contains([]byte(e.Message), []byte("different request")) {
		t.Errorf("different body: %q %s", e.Message, e.Order.ID)
	}
}

// TestDeliveryFileDurableBeforeCommit fails the delivery transaction after
// the file is written, as a crash before the commit would: the order stays
// REQUESTED with no event, and the next Open removes the orphan file. An
// order whose file is missing refuses to open.
func TestDeliveryFileDurableBeforeCommit(t *testing.T) {
	forEachStore(t, testDeliveryFileDurableBeforeCommit)
}

func testDeliveryFileDurableBeforeCommit(t *testing.T) {
	fx := realFixture(t)
	dir := t.TempDir()
	s, err := OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	MustAccount(t, s, "acme", 0)
	s.CreateAccountWithRole("op", companydocs.RoleOperator, 0)
	o, err := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	mustAct(t, s, "op", o.ID, ActionPay, "")
	mustAct(t, s, "op", o.ID, ActionRequest, "")
	before := storedEvents(t, s)
	s.failDelivery = func() error { return errors.New("simulated crash before the commit") }
	if _, err := s.Deliver(ctx, "op", o.ID, bytes.NewReader(testPDF)); err == nil {
		t.Fatal("delivery succeeded despite the failed commit")
	}
	orphans, _ := filepath.Glob(filepath.Join(dir, DocumentsDir, "*", "*.pdf"))
	if shared, ok := s.store.(SharedStore); ok {
		// The store rolled the document back with the transition.
		sum := sha256.Sum256(testPDF)
		if _, err := shared.Document(ctx, hex.EncodeToString(sum[:])); !errors.Is(err, ErrNotFound) || len(orphans) != 0 {
			t.Fatalf("after the failed commit: document %v, files %v; want neither", err, orphans)
		}
		testSharedDeliveryAfterFailure(t, s, o.ID)
		return
	}
	if len(orphans) != 1 {
		t.Fatalf("document files after the failed commit: %v, want the one written before it", orphans)
	}
	after := storedEvents(t, s)
	if got, _ := s.Order(ctx, "acme", o.ID); got.Status != companydocs.OrderStatusRequested || len(after) != len(before) {
		t.Errorf("after the failed commit: %s, %d events (were %d)", got.Status, len(after), len(before))
	}
	s.Close()
	s, err = OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphans[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("orphan %s not swept at open: %v", orphans[0], err)
	}
	d, err := s.Deliver(ctx, "op", o.ID, bytes.NewReader(testPDF))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Remove(orphans[0]); err != nil {
		t.Fatalf("delivered document %s: %v", d.Document.SHA256, err)
	}
	if _, err := OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{SweepInterval: -1}); !errors.Is(err, ErrDamaged) {
		t.Errorf("open with a referenced document missing: %v, want ErrDamaged", err)
	}
}

// testSharedDeliveryAfterFailure: on a SharedStore, the order is still
// REQUESTED without a new event after the failed delivery, and delivers
// once the failure is gone. (Package postgres tests that a reference to a
// missing document refuses to start.)
func testSharedDeliveryAfterFailure(t *testing.T, s *service, id string) {
	t.Helper()
	if got, _ := s.Order(ctx, "acme", id); got.Status != companydocs.OrderStatusRequested || got.Document != nil {
		t.Errorf("after the failed commit: %s with %+v", got.Status, got.Document)
	}
	s.failDelivery = nil
	if _, err := s.Deliver(ctx, "op", id, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
	mustCheck(t, s)
	s.Close()
}

// TestOldOrderRecordsMoveOn stores an order in the shape the previous
// release wrote (no history, fingerprint or credits_refunded, a credit
// order left PREVIEW_READY): it reads with a synthesized history, its
// Idempotency-Key answers as a plain replay, and it moves on. (Package
// bbolt tests that an old file gets the indexes it lacks.)
func TestOldOrderRecordsMoveOn(t *testing.T) { forEachStore(t, testOldOrderRecordsMoveOn) }

func testOldOrderRecordsMoveOn(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	MustAccount(t, s, "acme", 3)
	s.CreateAccountWithRole("op", companydocs.RoleOperator, 0)
	o, _ := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "subscription-basic"), "key")
	err := s.store.Update(ctx, func(tx Tx) error {
		rec, err := tx.Order(o.ID)
		if err != nil {
			return err
		}
		from := rec.Order.Status
		rec.Fingerprint, rec.Order.History, rec.Order.CreditsRefunded = "", nil, 0
		rec.Order.Status, rec.Order.WorkflowStatus = companydocs.OrderStatusPreviewReady, companydocs.WorkflowStarted
		return tx.UpdateOrder(rec, from)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Order(ctx, "acme", o.ID)
	if err != nil || len(got.History) != 1 || got.History[0].Status != companydocs.OrderStatusPreviewReady {
		t.Fatalf("old order: %+v %v", got, err)
	}
	if q, _, _ := s.OperatorOrders(ctx, "op", companydocs.OrderStatusPreviewReady, "", 10); len(q) != 1 {
		t.Errorf("status index of the old file: %d orders PREVIEW_READY, want 1", len(q))
	}
	_, err = s.CreateOrder(ctx, "acme", request(fx.live[1], "AD", "subscription-basic"), "key")
	if e := wantCode(t, err, companydocs.EDUPLICATEORDER); bytes.Contains([]byte(e.Message), []byte("different")) {
		t.Errorf("a key without fingerprint answers %q", e.Message)
	}
	mustAct(t, s, "op", o.ID, ActionPay, "")
	if c, err := s.CancelOrder(ctx, "acme", o.ID, ""); err != nil || c.CreditsRefunded != 1 {
		t.Errorf("cancel the old order: %+v %v", c, err)
	}
	if a, _ := s.Account("acme"); a.Credits != 3 {
		t.Errorf("credits %d, want 3", a.Credits)
	}
}

// TestDeliveryRefusesBeforeReading: CheckDelivery (and Deliver) refuse a
// client and an order that is not REQUESTED without reading a byte of the
// PDF; a body over MaxDocumentSize stops at the cap plus one byte and one
// that is no PDF at its first bytes, and neither leaves a file behind.
func TestDeliveryRefusesBeforeReading(t *testing.T) {
	forEachStore(t, testDeliveryRefusesBeforeReading)
}

func testDeliveryRefusesBeforeReading(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	o, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	body := &countingReader{r: bytes.NewReader(testPDF)}
	wantCode(t, s.CheckDelivery(ctx, acct, o.ID), companydocs.EFORBIDDEN)
	wantCode(t, s.CheckDelivery(ctx, op, o.ID), companydocs.EINVALIDTRANSITION)
	_, err = s.Deliver(ctx, op, o.ID, body)
	wantCode(t, err, companydocs.EINVALIDTRANSITION)
	wantCode(t, s.CheckDelivery(ctx, op, "ord_missing"), companydocs.ENOTFOUND)
	if body.n != 0 {
		t.Errorf("the refused deliveries read %d bytes of the PDF", body.n)
	}
	mustAct(t, s, op, o.ID, ActionPay, "")
	mustAct(t, s, op, o.ID, ActionRequest, "")
	if err := s.CheckDelivery(ctx, op, o.ID); err != nil {
		t.Fatal(err)
	}
	huge := &countingReader{r: io.MultiReader(strings.NewReader(pdfMagic), endless{})}
	_, err = s.Deliver(ctx, op, o.ID, huge)
	wantCode(t, err, companydocs.ETOOLARGE)
	if huge.n > MaxDocumentSize+32<<10 {
		t.Errorf("read %d bytes of an endless body, want the cap (%d) and a buffer at most", huge.n, MaxDocumentSize)
	}
	_, err = s.Deliver(ctx, op, o.ID, strings.NewReader("<html>not a pdf"))
	wantCode(t, err, companydocs.EVALIDATION)
	if left, _ := filepath.Glob(filepath.Join(s.docsDir, "incoming", "*")); len(left) != 0 {
		t.Errorf("refused uploads left %v", left)
	}
	if _, err := s.Deliver(ctx, op, o.ID, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// endless reads spaces for ever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}
