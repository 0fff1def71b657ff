package ordering

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
)

// TestEventsOfAnOrderStayInOrder: the events of one order take ascending
// ids and times, and its webhook deliveries go out in that order, also
// when the outbox has let the earlier events go and the clock went back
// an hour across a restart (the floor of the stored ids is gone then).
func TestEventsOfAnOrderStayInOrder(t *testing.T) { forEachStore(t, testEventsOfAnOrderStayInOrder) }

func testEventsOfAnOrderStayInOrder(t *testing.T) {
	fx, dir := realFixture(t), t.TempDir()
	ahead := testclock.New()
	ahead.Advance(time.Hour)
	s := openWithClock(t, dir, fx, ahead)
	MustAccount(t, s, "acme", 5)
	if _, err := s.CreateAccountWithRole("op", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	hook, err := s.CreateWebhook(ctx, "acme", "https://hooks.example/acme", "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	events := takeEvents(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWithClock(t, dir, fx, testclock.New()) // an hour back
	t.Cleanup(func() { s.Close() })
	mustAct(t, s, "op", o.ID, ActionPay, "")
	mustAct(t, s, "op", o.ID, ActionRequest, "")
	events = append(events, takeEvents(t, s)...)
	checkOrderEvents(t, s, "acme", o.ID, hook.ID, events)
}

// TestEventsOfAnOrderStayInOrderAcrossNodes: two nodes on one database,
// the second one's clock an hour behind the first, change one order in
// turn and fan its events out in turn: the order's events still take
// ascending ids and times, and its deliveries go out in that order.
func TestEventsOfAnOrderStayInOrderAcrossNodes(t *testing.T) {
	t.Run("postgres", testEventsOfAnOrderStayInOrderAcrossNodes)
}

func testEventsOfAnOrderStayInOrderAcrossNodes(t *testing.T) {
	fx, dir := realFixture(t), t.TempDir()
	ahead := testclock.New()
	ahead.Advance(time.Hour)
	a, b := openNode(t, dir, fx, ahead), openNode(t, dir, fx, testclock.New())
	MustAccount(t, a, "acme", 5)
	if _, err := a.CreateAccountWithRole("op", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	hook, err := a.CreateWebhook(ctx, "acme", "https://hooks.example/acme", "")
	if err != nil {
		t.Fatal(err)
	}
	o, err := a.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "subscription-basic"), "") // created and paid
	if err != nil {
		t.Fatal(err)
	}
	events := takeEvents(t, b)
	mustAct(t, b, "op", o.ID, ActionRequest, "")
	events = append(events, takeEvents(t, a)...)
	if _, err := b.Deliver(ctx, "op", o.ID, bytes.NewReader(testPDF)); err != nil {
		t.Fatal(err)
	}
	events = append(events, takeEvents(t, b)...)
	checkOrderEvents(t, a, "acme", o.ID, hook.ID, events)
}

// openWithClock opens the service over the store kept in dir, on clock c.
func openWithClock(t *testing.T, dir string, fx *fixture, c *testclock.Clock) *service {
	t.Helper()
	s, err := OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{SweepInterval: -1, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// takeEvents returns the events in the outbox and fans them out, which
// empties it.
func takeEvents(t *testing.T, s *service) []Event {
	t.Helper()
	events := storedEvents(t, s)
	if n, err := s.FanOutEvents(100); n != len(events) || err != nil {
		t.Fatalf("fan-out took %d of %d events: %v", n, len(events), err)
	}
	return events
}

// checkOrderEvents checks that events, the order's events in the order
// they were written, have ascending ids and times that match its history,
// and that the endpoint's deliveries go out in that order.
func checkOrderEvents(t *testing.T, s *service, account, orderID, endpointID string, events []Event) {
	t.Helper()
	o, err := s.Order(ctx, account, orderID)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != len(o.History) {
		t.Fatalf("%d events for %d history entries", len(events), len(o.History))
	}
	for i, e := range events {
		if e.OrderID != orderID || e.Type != eventOfStatus[o.History[i].Status] || !e.At.Equal(o.History[i].At) {
			t.Errorf("event %d: %s of %s at %v; want %s at %v", i, e.Type, e.OrderID, e.At, eventOfStatus[o.History[i].Status], o.History[i].At)
		}
		if i > 0 && (e.ID <= events[i-1].ID || e.At.Before(events[i-1].At)) {
			t.Errorf("event %d (%s, %s at %v) sorts before the one before it (%s, %s at %v)", i, e.Type, e.ID, e.At, events[i-1].Type, events[i-1].ID, events[i-1].At)
		}
	}
	for i, want := range events {
		tasks, _, err := s.DueWebhooks(time.Now(), func(string) bool { return false }, 10)
		if err != nil || len(tasks) != 1 || tasks[0].EndpointID != endpointID {
			t.Fatalf("delivery %d: %+v, %v; want one task for %s", i, tasks, err, endpointID)
		}
		var body struct{ Type string }
		_ = json.Unmarshal(tasks[0].Body, &body)
		if tasks[0].EventID != want.ID {
			t.Errorf("delivery %d went out for %s (%s); want %s (%s)", i, tasks[0].EventID, body.Type, want.ID, want.Type)
		}
		err = s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: endpointID, EventID: tasks[0].EventID,
			Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// failingUpdateStore is a store whose UpdateOrder fails with errLostStore,
// as a connection lost in the middle of a transaction does.
type failingUpdateStore struct{ Store }

type failingUpdateTx struct{ Tx }

var errLostStore = errors.New("connection reset by peer")

func (s failingUpdateStore) Update(ctx context.Context, fn func(Tx) error) error {
	return s.Store.Update(ctx, func(tx Tx) error { return fn(failingUpdateTx{tx}) })
}

func (failingUpdateTx) UpdateOrder(*OrderRecord, string) error { return errLostStore }

// TestStoreFailureAtPaymentKeepsItsCause: a store failure in the payment
// made at creation reaches the caller with its cause, so that a lost
// connection there answers service_unavailable (the store classifies it
// by the cause), not internal.
func TestStoreFailureAtPaymentKeepsItsCause(t *testing.T) {
	forEachStore(t, func(t *testing.T) {
		fx := realFixture(t)
		s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
		MustAccount(t, s, "acme", 5)
		s.Orders.store = failingUpdateStore{s.store}
		_, err := s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "subscription-basic"), "")
		if !errors.Is(err, errLostStore) {
			t.Errorf("create whose payment failed: %v; want the store's error wrapped", err)
		}
	})
}
