package ordering

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
)

// The tests in this file hold each registered store to the contract the
// comments of store.go state, one Tx method family at a time, below the
// rules: what "not found" answers, which errors are ErrExists and
// ErrNotFound, orders and limits of the listings, and the claims that
// must hold between concurrent transactions. The rules' own invariants,
// checked once above every store, are tested in invariants_test.go. As in real use,
// the accounts and orders a record names exist before it is stored (a
// store may enforce that with foreign keys).

// mustStore opens an empty store of the subtest's kind, closed at the end.
func mustStore(t *testing.T) Store {
	t.Helper()
	st, err := openStore(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// update runs fn in a write transaction and fails the test on an error.
func update(t *testing.T, st Store, fn func(tx Tx) error) {
	t.Helper()
	if err := st.Update(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

func view(t *testing.T, st Store, fn func(tx Tx) error) {
	t.Helper()
	if err := st.View(ctx, fn); err != nil {
		t.Fatal(err)
	}
}

// seedAccounts creates accounts with no credits.
func seedAccounts(t *testing.T, st Store, names ...string) {
	t.Helper()
	update(t, st, func(tx Tx) error {
		for _, name := range names {
			if err := tx.CreateAccount(testAccount(name, 0)); err != nil {
				return err
			}
		}
		return nil
	})
}

// seedOrders inserts PAID orders of account with these ids.
func seedOrders(t *testing.T, st Store, account string, ids ...string) {
	t.Helper()
	update(t, st, func(tx Tx) error {
		for _, id := range ids {
			if err := tx.InsertOrder(testOrder(id, account, companydocs.OrderStatusPaid)); err != nil {
				return err
			}
		}
		return nil
	})
}

func testAccount(name string, credits int64) *AccountRecord {
	h := hashSecret("cdk_" + name)
	return &AccountRecord{Account: Account{Name: name, Credits: credits, CreatedAt: time.Unix(1e9, 0).UTC(), Role: companydocs.RoleClient}, KeyHash: h}
}

func TestStoreAccounts(t *testing.T) { forEachStore(t, testStoreAccounts) }

func testStoreAccounts(t *testing.T) {
	st := mustStore(t)
	update(t, st, func(tx Tx) error { return tx.CreateAccount(testAccount("acme", 5)) })
	err := st.Update(ctx, func(tx Tx) error { return tx.CreateAccount(testAccount("acme", 1)) })
	if !errors.Is(err, ErrExists) {
		t.Errorf("second account of one name: %v, want ErrExists", err)
	}
	view(t, st, func(tx Tx) error {
		if rec, err := tx.Account("nobody"); rec != nil || err != nil {
			t.Errorf("missing account: %v, %v; want nil, nil", rec, err)
		}
		if name, err := tx.AccountForKey(hashSecret("cdk_nobody")); name != "" || err != nil {
			t.Errorf("unknown key: %q, %v", name, err)
		}
		name, err := tx.AccountForKey(hashSecret("cdk_acme"))
		if name != "acme" || err != nil {
			t.Errorf("key of acme: %q, %v", name, err)
		}
		return nil
	})
	update(t, st, func(tx Tx) error { return tx.SetAccountKey("acme", hashSecret("cdk_new")) })
	update(t, st, func(tx Tx) error { return tx.CreateAccount(testAccount("beta", 0)) })
	view(t, st, func(tx Tx) error {
		old, _ := tx.AccountForKey(hashSecret("cdk_acme"))
		now, _ := tx.AccountForKey(hashSecret("cdk_new"))
		all, err := tx.Accounts()
		if old != "" || now != "acme" || err != nil || len(all) != 2 || all[0].Name != "acme" || all[1].Name != "beta" {
			t.Errorf("after the key change: old key %q, new key %q, accounts %+v, %v", old, now, all, err)
		}
		return nil
	})
	if err := st.Update(ctx, func(tx Tx) error { return tx.SetAccountKey("nobody", hashSecret("x")) }); !errors.Is(err, ErrNotFound) {
		t.Errorf("key of a missing account: %v, want ErrNotFound", err)
	}
}

func TestStoreCredits(t *testing.T) { forEachStore(t, testStoreCredits) }

func testStoreCredits(t *testing.T) {
	st := mustStore(t)
	update(t, st, func(tx Tx) error { return tx.CreateAccount(testAccount("acme", 5)) })
	var balance int64
	update(t, st, func(tx Tx) (err error) {
		if balance, err = tx.AddCredits("acme", -5); err != nil || balance != 0 {
			return fmt.Errorf("debit of 5 from 5: %d, %v", balance, err)
		}
		balance, err = tx.AddCredits("acme", 3)
		return err
	})
	if balance != 3 {
		t.Errorf("balance after the refund: %d, want 3", balance)
	}
	view(t, st, func(tx Tx) error {
		if rec, err := tx.Account("acme"); err != nil || rec.Credits != 3 {
			t.Errorf("stored balance %+v (%v), want 3", rec, err)
		}
		return nil
	})
	for name, fn := range map[string]func(tx Tx) error{
		"debit":  func(tx Tx) error { _, err := tx.AddCredits("nobody", -1); return err },
		"credit": func(tx Tx) error { _, err := tx.AddCredits("nobody", 1); return err },
	} {
		if err := st.Update(ctx, fn); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of a missing account: %v, want ErrNotFound", name, err)
		}
	}
}

// TestStoreUpdateRollsBack: a failing fn commits nothing it wrote.
func TestStoreUpdateRollsBack(t *testing.T) { forEachStore(t, testStoreUpdateRollsBack) }

func testStoreUpdateRollsBack(t *testing.T) {
	st := mustStore(t)
	update(t, st, func(tx Tx) error { return tx.CreateAccount(testAccount("acme", 5)) })
	refused := errors.New("refused")
	err := st.Update(ctx, func(tx Tx) error {
		if _, err := tx.AddCredits("acme", -5); err != nil {
			return err
		}
		if err := tx.CreateAccount(testAccount("beta", 1)); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Update: %v, want fn's error", err)
	}
	view(t, st, func(tx Tx) error {
		acme, _ := tx.Account("acme")
		beta, _ := tx.Account("beta")
		if acme.Credits != 5 || beta != nil {
			t.Errorf("after a failed update: acme %+v, beta %+v; want 5 credits and no beta", acme, beta)
		}
		return nil
	})
}

func TestStoreSessions(t *testing.T) { forEachStore(t, testStoreSessions) }

func testStoreSessions(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme", "beta")
	start := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	var hashes [][32]byte
	update(t, st, func(tx Tx) error {
		hashes = nil
		for i := range 5 {
			h := [32]byte{byte(5 - i)} // hash order is not creation order
			created := start.Add(time.Duration(i) * time.Minute)
			rec := &SessionRecord{Account: "acme", CreatedAt: created, ExpiresAt: created.Add(2 * time.Minute)}
			if err := tx.PutSession(h, rec); err != nil {
				return err
			}
			hashes = append(hashes, h)
		}
		return tx.PutSession([32]byte{9}, &SessionRecord{Account: "beta", CreatedAt: start, ExpiresAt: start.Add(time.Hour)})
	})
	view(t, st, func(tx Tx) error {
		n, err := tx.CountSessions("acme")
		oldest, err2 := tx.OldestSessions("acme", 2)
		missing, err3 := tx.Session([32]byte{42})
		if n != 5 || len(oldest) != 2 || oldest[0] != hashes[0] || oldest[1] != hashes[1] || missing != nil || errors.Join(err, err2, err3) != nil {
			t.Errorf("count %d, oldest two %v, missing %v (%v); want 5, the first two created, nil", n, oldest, missing, errors.Join(err, err2, err3))
		}
		return nil
	})
	var revoked [][32]byte
	update(t, st, func(tx Tx) error {
		if err := tx.DeleteSessions([][32]byte{hashes[0], {77}}); err != nil {
			return err
		}
		var err error
		revoked, err = tx.RevokeSessions("acme", "key_rotation")
		return err
	})
	view(t, st, func(tx Tx) error {
		rec, _ := tx.Session(hashes[1])
		beta, _ := tx.Session([32]byte{9})
		n, _ := tx.CountSessions("acme")
		if len(revoked) != 4 || n != 4 || !rec.Revoked || rec.EndedBy != "key_rotation" || beta.Revoked {
			t.Errorf("revoked %d, %d left, one of them %+v, beta's %+v", len(revoked), n, rec, beta)
		}
		return nil
	})
	// At start+4m, of the four sessions left, those created at +1m and +2m
	// have expired (at +3m and +4m: expiry is inclusive); the sweep in
	// batches of 2 finds both.
	deleted, from := 0, ""
	for batches := 0; ; batches++ {
		update(t, st, func(tx Tx) error {
			n, next, err := tx.SweepSessions(start.Add(4*time.Minute), from, 2)
			deleted, from = deleted+n, next
			return err
		})
		if from == "" || batches > 10 {
			break
		}
	}
	view(t, st, func(tx Tx) error {
		n, _ := tx.CountSessions("acme")
		if deleted != 2 || n != 2 {
			t.Errorf("swept %d, %d left; want 2 swept (created +1m, +2m), 2 left", deleted, n)
		}
		return nil
	})
}

func testOrder(id, account, status string) *OrderRecord {
	return &OrderRecord{Account: account, Order: companydocs.Order{ID: id, Status: status, CompanyProfileID: "dp_x", DocumentType: "AD", PlanID: "ad-single"}}
}

func TestStoreOrders(t *testing.T) { forEachStore(t, testStoreOrders) }

func testStoreOrders(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme", "beta")
	g := idGenerator{now: testclock.New().Now}
	var ids []string
	update(t, st, func(tx Tx) error {
		ids = nil
		for i := range 6 {
			account := []string{"acme", "beta"}[i%2]
			rec := testOrder(g.next(), account, companydocs.OrderStatusPaid)
			if i == 0 {
				rec.Order.Status = companydocs.OrderStatusPreviewReady
			}
			if err := tx.InsertOrder(rec); err != nil {
				return err
			}
			ids = append(ids, rec.Order.ID)
		}
		return nil
	})
	err := st.Update(ctx, func(tx Tx) error { return tx.InsertOrder(testOrder(ids[0], "acme", "PAID")) })
	if !errors.Is(err, ErrExists) {
		t.Errorf("second order with one id: %v, want ErrExists", err)
	}
	if err := st.Update(ctx, func(tx Tx) error { return tx.UpdateOrder(testOrder(g.next(), "acme", "PAID"), "PAID") }); !errors.Is(err, ErrNotFound) {
		t.Errorf("update of a missing order: %v, want ErrNotFound", err)
	}
	update(t, st, func(tx Tx) error {
		rec, err := tx.Order(ids[2])
		if err != nil {
			return err
		}
		rec.Order.Status = companydocs.OrderStatusCancelled
		return tx.UpdateOrder(rec, companydocs.OrderStatusPaid)
	})
	view(t, st, func(tx Tx) error {
		acme, _ := tx.AccountOrders("acme", "", "", 10)             // ids 4, 2, 0
		page, _ := tx.AccountOrders("acme", "", ids[4], 1)          // id 2
		paid, _ := tx.AccountOrders("acme", "PAID", "", 10)         // id 4
		queue, _ := tx.QueuedOrders("", ids[1], 2)                  // ids 2, 3
		queued, _ := tx.QueuedOrders("PAID", "", 10)                // ids 1, 3, 4, 5
		counts, err := tx.CountOrdersByStatus()                     // 1 PREVIEW_READY, 4 PAID, 1 CANCELLED
		missing, err2 := tx.Order("ord_00000000000000000000000000") // none
		got := fmt.Sprint(orderIDs(acme), orderIDs(page), orderIDs(paid), orderIDs(queue), orderIDs(queued), counts, missing)
		want := fmt.Sprint([]string{ids[4], ids[2], ids[0]}, []string{ids[2]}, []string{ids[4]}, []string{ids[2], ids[3]},
			[]string{ids[1], ids[3], ids[4], ids[5]}, map[string]int{"CANCELLED": 1, "PAID": 4, "PREVIEW_READY": 1}, (*OrderRecord)(nil))
		if got != want || errors.Join(err, err2) != nil {
			t.Errorf("listings:\n got %s\nwant %s (%v)", got, want, errors.Join(err, err2))
		}
		return nil
	})
}

func orderIDs(recs []*OrderRecord) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Order.ID
	}
	return out
}

// TestStoreClaims: the Idempotency-Key and the open-order slot go to the
// first claim; the others learn the holder, also when they run at once.
func TestStoreClaims(t *testing.T) { forEachStore(t, testStoreClaims) }

func testStoreClaims(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme", "beta")
	slot := OpenSlot{Account: "acme", ProfileID: "dp_x", DocumentType: "AD", PlanID: "ad-single"}
	holders := make([]string, 10)
	for i := range holders {
		seedOrders(t, st, "acme", fmt.Sprintf("ord_%026d", i))
	}
	seedOrders(t, st, "acme", "ord_a", "ord_b")
	seedOrders(t, st, "beta", "ord_c")
	var wg sync.WaitGroup
	for i := range holders {
		wg.Go(func() {
			id := fmt.Sprintf("ord_%026d", i)
			err := st.Update(ctx, func(tx Tx) error {
				var err error
				holders[i], err = tx.ClaimOpenOrder(slot, id)
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var winner string
	view(t, st, func(tx Tx) (err error) {
		winner, err = tx.OpenOrder(slot)
		return err
	})
	free := 0
	for i, h := range holders {
		if h == "" {
			free++
			if winner != fmt.Sprintf("ord_%026d", i) {
				t.Errorf("claim %d found the slot free, but %s holds it", i, winner)
			}
		} else if h != winner {
			t.Errorf("claim %d was told %s holds the slot, but %s does", i, h, winner)
		}
	}
	if free != 1 {
		t.Errorf("%d claims found the slot free, want 1", free)
	}
	update(t, st, func(tx Tx) error {
		if h, err := tx.ClaimIdempotencyKey("acme", "k1", "ord_a"); h != "" || err != nil {
			return fmt.Errorf("first claim of a key: %q, %v", h, err)
		}
		if h, _ := tx.ClaimIdempotencyKey("acme", "k1", "ord_b"); h != "ord_a" {
			return fmt.Errorf("second claim of a key: holder %q, want ord_a", h)
		}
		if h, _ := tx.ClaimIdempotencyKey("beta", "k1", "ord_c"); h != "" {
			return fmt.Errorf("another account's key: holder %q", h)
		}
		if id, _ := tx.IdempotentOrder("acme", "k2"); id != "" {
			return fmt.Errorf("an unused key names %q", id)
		}
		return tx.ReleaseOpenOrder(slot)
	})
	view(t, st, func(tx Tx) error {
		if id, _ := tx.OpenOrder(slot); id != "" {
			t.Errorf("after the holder's release the slot holds %q", id)
		}
		return nil
	})
}

func TestStoreOutbox(t *testing.T) { forEachStore(t, testStoreOutbox) }

func testStoreOutbox(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme")
	seedOrders(t, st, "acme", "ord_x")
	at := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	update(t, st, func(tx Tx) error {
		for i := range 4 {
			e := Event{ID: fmt.Sprintf("evt_%026d", i+1), Type: EventOrderCreated, OrderID: "ord_x", Account: "acme", At: at.Add(time.Duration(i) * time.Second), Payload: []byte(`{}`)}
			if err := tx.AppendEvent(&e); err != nil {
				return err
			}
		}
		return nil
	})
	update(t, st, func(tx Tx) error {
		if err := tx.DeleteEvent("evt_00000000000000000000000001"); err != nil {
			return err
		}
		return tx.DeleteEvent("evt_unknown")
	})
	view(t, st, func(tx Tx) error {
		floor, _ := tx.EventIDFloor() // "" from a store whose transactions overlap
		after, _ := tx.Events("evt_00000000000000000000000002", 10)
		depth, oldest, err := tx.OutboxStats()
		if (floor != "" && floor != "evt_00000000000000000000000004") || len(after) != 2 || after[0].ID != "evt_00000000000000000000000003" || depth != 3 || !oldest.Equal(at.Add(time.Second)) || err != nil {
			t.Errorf("floor %s, after the 2nd %d events, depth %d, oldest %v, %v", floor, len(after), depth, oldest, err)
		}
		return nil
	})
	var claimed []Event
	update(t, st, func(tx Tx) (err error) {
		claimed, err = tx.ClaimEvents(2)
		return err
	})
	if len(claimed) != 2 || claimed[0].ID != "evt_00000000000000000000000002" {
		t.Errorf("claimed %+v, want the two oldest", claimed)
	}
}

func TestStoreWebhooks(t *testing.T) { forEachStore(t, testStoreWebhooks) }

func testStoreWebhooks(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme", "beta")
	seedOrders(t, st, "acme", "ord_x")
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	update(t, st, func(tx Tx) error {
		for _, ep := range []EndpointRecord{{Account: "acme", WebhookEndpoint: companydocs.WebhookEndpoint{ID: "wh_a", URL: "https://a.example", Secret: "whsec_a"}},
			{Account: "beta", WebhookEndpoint: companydocs.WebhookEndpoint{ID: "wh_b", URL: "https://b.example", Secret: "whsec_b"}}} {
			if err := tx.InsertWebhookEndpoint(&ep); err != nil {
				return err
			}
		}
		for i, ep := range []string{"wh_a", "wh_a", "wh_a", "wh_b"} {
			ev := fmt.Sprintf("evt_%026d", i+1)
			if err := tx.PutEventBody(ev, []byte(`{}`), 1); err != nil {
				return err
			}
			d := DeliveryRecord{WebhookDelivery: companydocs.WebhookDelivery{EventID: ev, OrderID: "ord_x", State: companydocs.DeliveryPending, CreatedAt: now.Add(-60 * 24 * time.Hour)}}
			if err := tx.PutDelivery(ep, &d); err != nil {
				return err
			}
			if err := tx.ScheduleDelivery(ep, ev, now.Add(time.Duration(i-1)*time.Minute)); err != nil { // -1m, 0, +1m, +2m
				return err
			}
		}
		return nil
	})
	if err := st.Update(ctx, func(tx Tx) error {
		return tx.InsertWebhookEndpoint(&EndpointRecord{Account: "beta", WebhookEndpoint: companydocs.WebhookEndpoint{ID: "wh_a", URL: "https://c.example", Secret: "whsec_c"}})
	}); !errors.Is(err, ErrExists) {
		t.Errorf("second endpoint with one id: %v, want ErrExists", err)
	}
	none := func(string) bool { return false }
	var due []DueDelivery
	var next time.Time
	update(t, st, func(tx Tx) (err error) {
		due, next, err = tx.ClaimDueDeliveries(now, time.Minute, none, 10)
		return err
	})
	if len(due) != 1 || due[0].EndpointID != "wh_a" || due[0].EventID != "evt_00000000000000000000000001" || !next.Equal(now.Add(2*time.Minute)) {
		t.Errorf("due %+v, next %v; want wh_a's first (one per endpoint) and wh_b's at +2m", due, next)
	}
	update(t, st, func(tx Tx) error {
		for _, ev := range []string{"evt_00000000000000000000000001", "evt_00000000000000000000000002"} {
			d, err := tx.Delivery("wh_a", ev)
			if err != nil || d == nil {
				return fmt.Errorf("delivery %s: %v, %v", ev, d, err)
			}
			d.State = companydocs.DeliveryDelivered
			if err := tx.PutDelivery("wh_a", d); err != nil {
				return err
			}
			if err := tx.UnscheduleDelivery("wh_a", ev); err != nil {
				return err
			}
		}
		return tx.PruneDeliveries("wh_a", now.Add(-30*24*time.Hour), 5)
	})
	view(t, st, func(tx Tx) error {
		recent, _ := tx.RecentDeliveries("wh_a", 10)
		n, _ := tx.CountScheduledDeliveries()
		mine, _ := tx.WebhookEndpoints("acme")
		all, _ := tx.WebhookEndpoints("")
		missing, err := tx.Delivery("wh_b", "evt_none")
		if len(recent) != 1 || recent[0].EventID != "evt_00000000000000000000000003" || n != 2 || len(mine) != 1 || len(all) != 2 || missing != nil || err != nil {
			t.Errorf("after two delivered and pruned: recent %d, scheduled %d, acme's endpoints %d, all %d, missing delivery %v (%v)", len(recent), n, len(mine), len(all), missing, err)
		}
		return nil
	})
	update(t, st, func(tx Tx) error { return tx.DeleteWebhookEndpoint("wh_a") })
	view(t, st, func(tx Tx) error {
		ep, _ := tx.WebhookEndpoint("wh_a")
		d, _ := tx.Delivery("wh_a", "evt_00000000000000000000000003")
		n, _ := tx.CountScheduledDeliveries()
		if ep != nil || d != nil || n != 1 {
			t.Errorf("after deleting wh_a: endpoint %v, delivery %v, %d scheduled; want none, none, 1", ep, d, n)
		}
		return nil
	})
}

// TestStoreWebhookBodies: an event's body is stored once for all its
// deliveries, read back byte for byte, and deleted with the last delivery
// that refers to it, whether pruned or deleted with its endpoint.
func TestStoreWebhookBodies(t *testing.T) { forEachStore(t, testStoreWebhookBodies) }

func testStoreWebhookBodies(t *testing.T) {
	st := mustStore(t)
	seedAccounts(t, st, "acme")
	seedOrders(t, st, "acme", "ord_x")
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	shared, alone := "evt_00000000000000000000000001", "evt_00000000000000000000000002"
	body := []byte(`{"type":"order.created","data":{"note":"<\u0000 \u2028 ä>"}}`)
	update(t, st, func(tx Tx) error {
		for _, id := range []string{"wh_a", "wh_b"} {
			if err := tx.InsertWebhookEndpoint(&EndpointRecord{Account: "acme", WebhookEndpoint: companydocs.WebhookEndpoint{ID: id, URL: "https://a.example", Secret: "whsec_a"}}); err != nil {
				return err
			}
		}
		if err := tx.PutEventBody(shared, body, 2); err != nil {
			return err
		}
		if err := tx.PutEventBody(alone, []byte(`{}`), 1); err != nil {
			return err
		}
		for _, d := range []struct{ ep, ev string }{{"wh_a", shared}, {"wh_b", shared}, {"wh_b", alone}} {
			rec := DeliveryRecord{WebhookDelivery: companydocs.WebhookDelivery{EventID: d.ev, OrderID: "ord_x", State: companydocs.DeliveryDelivered, CreatedAt: now.Add(-60 * 24 * time.Hour)}}
			if err := tx.PutDelivery(d.ep, &rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err := st.Update(ctx, func(tx Tx) error { return tx.PutEventBody(shared, body, 1) }); !errors.Is(err, ErrExists) {
		t.Errorf("a second body for one event: %v, want ErrExists", err)
	}
	stored := func(ev string) []byte {
		var got []byte
		view(t, st, func(tx Tx) (err error) {
			got, err = tx.EventBody(ev)
			return err
		})
		return got
	}
	if got := stored(shared); string(got) != string(body) {
		t.Errorf("body read back as %s, want the bytes stored: %s", got, body)
	}
	update(t, st, func(tx Tx) error { return tx.PruneDeliveries("wh_a", now, 10) })
	if got := stored(shared); string(got) != string(body) {
		t.Errorf("after one of two deliveries is pruned the body is %q, want it kept", got)
	}
	update(t, st, func(tx Tx) error { return tx.DeleteWebhookEndpoint("wh_b") })
	if got, other := stored(shared), stored(alone); got != nil || other != nil {
		t.Errorf("after the last deliveries went with their endpoint the bodies are %q and %q, want none", got, other)
	}
}
