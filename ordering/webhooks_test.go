package ordering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
)

// TestWebhookFanOut: one transaction turns each outbox event into one
// delivery per matching endpoint (the client's own, every operator's)
// and removes it; nothing is fanned out twice; attempts are recorded and
// the file passes its check, also after a reopen.
func TestWebhookFanOut(t *testing.T) { forEachStore(t, testWebhookFanOut) }

func testWebhookFanOut(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	MustAccount(t, s, "other", 5)
	mine, err := s.CreateWebhook(ctx, acct, "https://hooks.example/acme", "")
	if err != nil || !strings.HasPrefix(mine.Secret, "whsec_") || len(mine.Secret) < 6+32 {
		t.Fatalf("create: %+v %v", mine, err)
	}
	ops, _ := s.CreateWebhook(ctx, op, "https://hooks.example/ops", "robot")
	if _, err := s.CreateWebhook(ctx, "other", "https://hooks.example/other", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "subscription-basic"), ""); err != nil {
		t.Fatal(err)
	}
	if n, err := s.FanOutEvents(100); n != 2 || err != nil {
		t.Fatalf("fan-out took %d events (%v), want created and paid", n, err)
	}
	if n, _, _ := s.OutboxStats(); n != 0 {
		t.Errorf("outbox depth %d after fan-out", n)
	}
	if n, _ := s.FanOutEvents(100); n != 0 {
		t.Errorf("a second fan-out took %d events", n)
	}
	if n, _ := s.PendingWebhooks(); n != 4 {
		t.Errorf("pending deliveries %d, want 2 events x (acme, ops)", n)
	}
	none := func(string) bool { return false }
	tasks, _, err := s.DueWebhooks(time.Now(), none, 10)
	if err != nil || len(tasks) != 2 {
		t.Fatalf("due: %d tasks (%v), want one per endpoint", len(tasks), err)
	}
	for _, tk := range tasks {
		if tk.Attempt != 1 || tk.EndpointID != mine.ID && tk.EndpointID != ops.ID || !strings.Contains(string(tk.Body), `"type":"order.created"`) {
			t.Errorf("task %+v", tk)
		}
	}
	busy := func(id string) bool { return id == mine.ID }
	if tasks, _, _ := s.DueWebhooks(time.Now(), busy, 10); len(tasks) != 1 || tasks[0].EndpointID != ops.ID {
		t.Errorf("with acme busy: %+v", tasks)
	}
	next := time.Now().Add(time.Hour)
	s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: mine.ID, EventID: tasks[0].EventID,
		Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 500}, State: companydocs.DeliveryPending, NextAttempt: next})
	s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: ops.ID, EventID: tasks[0].EventID,
		Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered})
	ds, _ := s.WebhookDeliveries(ctx, acct, mine.ID)
	if len(ds) != 2 || ds[1].State != companydocs.DeliveryPending || ds[1].NextAttempt == nil || len(ds[1].Attempts) != 1 {
		t.Errorf("acme's deliveries: %+v", ds)
	}
	if _, err := s.WebhookDeliveries(ctx, "other", mine.ID); companydocs.ErrorCode(err) != companydocs.ENOTFOUND {
		t.Errorf("another account's deliveries: %v", err)
	}
	mustCheck(t, s)
	if err := s.DeleteWebhook(ctx, acct, mine.ID); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PendingWebhooks(); n != 1 {
		t.Errorf("pending after deleting acme's endpoint: %d, want ops' second event", n)
	}
	mustCheck(t, s)
}

func TestWebhookLimits(t *testing.T) { forEachStore(t, testWebhookLimits) }

func testWebhookLimits(t *testing.T) {
	s, _, acct, _ := lifecycleService(t)
	for i := range MaxWebhooksPerAccount {
		if _, err := s.CreateWebhook(ctx, acct, fmt.Sprintf("https://hooks.example/%d", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.CreateWebhook(ctx, acct, "https://hooks.example/11", "")
	if e := wantCode(t, err, companydocs.EVALIDATION); !strings.Contains(e.Message, "at most 10") {
		t.Errorf("11th endpoint: %q", e.Message)
	}
	for _, u := range []string{"", "hooks.example", "https://user:pw@hooks.example/", "javascript:alert(1)"} {
		if _, err := s.CreateWebhook(ctx, acct, u, ""); companydocs.ErrorCode(err) != companydocs.EVALIDATION {
			t.Errorf("%q: %v", u, err)
		}
	}
	if eps, _ := s.Webhooks.Webhooks(ctx, acct); len(eps) != MaxWebhooksPerAccount || eps[0].Secret != "" {
		t.Errorf("list: %d endpoints, secret %q", len(eps), eps[0].Secret)
	}
}

// TestFinishedDeliveriesArePruned: deliveries finished more than
// keepDeliveries ago go as newer ones finish; pending ones stay.
func TestFinishedDeliveriesArePruned(t *testing.T) { forEachStore(t, testFinishedDeliveriesArePruned) }

func testFinishedDeliveriesArePruned(t *testing.T) {
	fx := realFixture(t)
	clk := testclock.New()
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{Now: clk.Now})
	MustAccount(t, s, "acme", 10)
	ep, _ := s.CreateWebhook(ctx, "acme", "https://hooks.example/", "")
	finishAll := func() {
		tasks, _, _ := s.DueWebhooks(clk.Now().Add(time.Hour), func(string) bool { return false }, 10)
		for len(tasks) > 0 {
			s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: ep.ID, EventID: tasks[0].EventID,
				Attempt: companydocs.WebhookAttempt{Attempt: 1, StatusCode: 200}, State: companydocs.DeliveryDelivered})
			tasks, _, _ = s.DueWebhooks(clk.Now().Add(time.Hour), func(string) bool { return false }, 10)
		}
	}
	s.CreateOrder(ctx, "acme", request(fx.live[0], "AD", "subscription-basic"), "") // 2 events
	s.FanOutEvents(100)
	finishAll()
	clk.Advance(keepDeliveries + time.Hour)
	s.CreateOrder(ctx, "acme", request(fx.live[1], "AD", "subscription-basic"), "")
	s.FanOutEvents(100)
	if ds, _ := s.WebhookDeliveries(ctx, "acme", ep.ID); len(ds) != 4 {
		t.Fatalf("%d deliveries before pruning, want 4", len(ds))
	}
	finishAll()
	ds, _ := s.WebhookDeliveries(ctx, "acme", ep.ID)
	if len(ds) != 2 || !ds[0].CreatedAt.After(clk.Now().Add(-time.Hour)) {
		t.Errorf("after pruning: %d deliveries, want the 2 recent ones", len(ds))
	}
}

// TestDueOrderWithABacklog: with many deliveries pending per endpoint,
// DueWebhooks hands out each endpoint's earliest due one, the next due time
// of an endpoint whose deliveries all wait for a retry, and the same after
// the due order is rebuilt for a file written before it existed.
func TestDueOrderWithABacklog(t *testing.T) { forEachStore(t, testDueOrderWithABacklog) }

func testDueOrderWithABacklog(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	mine, _ := s.CreateWebhook(ctx, acct, "https://hooks.example/acme", "")
	ops, _ := s.CreateWebhook(ctx, op, "https://hooks.example/ops", "")
	for i := range 20 {
		if _, err := s.CreateOrder(ctx, acct, request(fx.live[i%len(fx.live)], "AD", "ad-single"), fmt.Sprint("key-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.FanOutEvents(100); err != nil {
		t.Fatal(err)
	}
	none := func(string) bool { return false }
	tasks, _, err := s.DueWebhooks(time.Now(), none, 10)
	if err != nil || len(tasks) != 2 {
		t.Fatalf("due: %d tasks (%v), want one per endpoint", len(tasks), err)
	}
	first := tasks[0].EventID
	// acme's earliest fails and waits an hour: its next one is due now.
	retry := time.Now().Add(time.Hour)
	if err := s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: mine.ID, EventID: first,
		Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 500}, State: companydocs.DeliveryPending, NextAttempt: retry}); err != nil {
		t.Fatal(err)
	}
	tasks, _, _ = s.DueWebhooks(time.Now(), func(id string) bool { return id == ops.ID }, 10)
	if len(tasks) != 1 || tasks[0].EventID == first || tasks[0].EndpointID != mine.ID {
		t.Fatalf("after a retry is scheduled: %+v, want acme's next event", tasks)
	}
	// Every acme delivery but the first delivered: only the retry is left.
	for {
		tasks, _, _ := s.DueWebhooks(time.Now(), func(id string) bool { return id == ops.ID }, 10)
		if len(tasks) == 0 {
			break
		}
		if err := s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: mine.ID, EventID: tasks[0].EventID,
			Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered}); err != nil {
			t.Fatal(err)
		}
	}
	_, next, _ := s.DueWebhooks(time.Now(), func(id string) bool { return id == ops.ID }, 10)
	if next.Sub(retry).Abs() > time.Microsecond {
		t.Errorf("next due %v, want the retry at %v", next, retry)
	}
}

// TestWebhookBodyStoredOnce: fan-out stores each event's signed body once
// however many endpoints receive it; every endpoint's attempt carries
// exactly the bytes the body always had (type, timestamp, the order as
// GET shows it), and the body goes with the last delivery of its event.
func TestWebhookBodyStoredOnce(t *testing.T) { forEachStore(t, testWebhookBodyStoredOnce) }

func testWebhookBodyStoredOnce(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	var endpoints []string
	for i := range 3 {
		ep, err := s.CreateWebhook(ctx, acct, fmt.Sprintf("https://hooks.example/%d", i), "")
		if err != nil {
			t.Fatal(err)
		}
		endpoints = append(endpoints, ep.ID)
	}
	ops, _ := s.CreateWebhook(ctx, op, "https://hooks.example/ops", "")
	endpoints = append(endpoints, ops.ID)
	o, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CancelOrder(ctx, acct, o.ID, strings.Repeat("<ä\u2028", companydocs.MaxNote/3)); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for _, e := range storedEvents(t, s) {
		want[e.ID], _ = json.Marshal(webhookBody{Type: e.Type, Timestamp: e.At, Data: e.Payload})
	}
	if n, err := s.FanOutEvents(100); n != 2 || err != nil {
		t.Fatalf("fan-out took %d events (%v), want created and cancelled", n, err)
	}
	view := func(fn func(tx Tx) error) {
		if err := s.store.View(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	view(func(tx Tx) error {
		for id, body := range want {
			got, err := tx.EventBody(id)
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("stored body of %s: %s (%v), want %s", id, got, err, body)
			}
			for _, ep := range endpoints {
				if d, _ := tx.Delivery(ep, id); d == nil || len(d.Body) != 0 {
					t.Errorf("delivery of %s to %s: %+v, want one without a body of its own", id, ep, d)
				}
			}
		}
		return nil
	})
	sent := 0
	for range 2 {
		tasks, _, err := s.DueWebhooks(time.Now(), func(string) bool { return false }, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			if !bytes.Equal(tk.Body, want[tk.EventID]) {
				t.Errorf("attempt at %s of %s carries %s, want %s", tk.EndpointID, tk.EventID, tk.Body, want[tk.EventID])
			}
			sent++
			s.RecordWebhookAttempt(companydocs.WebhookResult{EndpointID: tk.EndpointID, EventID: tk.EventID,
				Attempt: companydocs.WebhookAttempt{Attempt: 1, At: time.Now(), StatusCode: 204}, State: companydocs.DeliveryDelivered})
		}
	}
	if sent != 2*len(endpoints) {
		t.Errorf("%d attempts, want 2 events x %d endpoints", sent, len(endpoints))
	}
	mustCheck(t, s)
	for _, ep := range endpoints[:3] {
		if err := s.DeleteWebhook(ctx, acct, ep); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteWebhook(ctx, op, ops.ID); err != nil {
		t.Fatal(err)
	}
	view(func(tx Tx) error {
		for id := range want {
			if got, err := tx.EventBody(id); got != nil || err != nil {
				t.Errorf("body of %s after its last delivery went: %s (%v), want none", id, got, err)
			}
		}
		return nil
	})
	mustCheck(t, s)
}
