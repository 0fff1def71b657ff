package postgres

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/ordering"
)

// t0 is the tests' clock: whole microseconds, as PostgreSQL keeps times.
var t0 = time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)

func mustUpdate(t *testing.T, db *DB, fn func(ordering.Tx) error) {
	t.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

func newAccount(t *testing.T, db *DB, name string, credits int64) {
	t.Helper()
	mustUpdate(t, db, func(tx ordering.Tx) error {
		return tx.CreateAccount(&ordering.AccountRecord{Account: ordering.Account{Name: name, Credits: credits, CreatedAt: t0, Role: companydocs.RoleClient},
			KeyHash: []byte("key of " + name)})
	})
}

func testOrder(id, account string) *ordering.OrderRecord {
	return &ordering.OrderRecord{Account: account, IdempotencyKey: "key-" + id, Fingerprint: "fp",
		Order: companydocs.Order{ID: id, Status: companydocs.OrderStatusPreviewReady, WorkflowStatus: companydocs.WorkflowStarted,
			CompanyProfileID: "p1", Company: companydocs.CompanySnapshot{ProfileID: "p1", Name: "Siemens AG"},
			DocumentType: "AD", PlanID: "basic", Total: "4.50", Currency: "EUR", CreditsCharged: 1, CreatedAt: t0,
			History: []companydocs.HistoryEntry{{Status: companydocs.OrderStatusPreviewReady, At: t0.Add(time.Nanosecond), Actor: companydocs.ActorClient, Note: "Order created."}}}}
}

// TestRecordsRoundTrip: what a Tx stores is what it reads back, the
// order record exactly (nanoseconds included), and the keys the rules
// rely on answer ErrExists and ErrNotFound.
func TestRecordsRoundTrip(t *testing.T) {
	db := mustOpen(t, Options{})
	newAccount(t, db, "acme", 5)
	o := testOrder("ord_1", "acme")
	mustUpdate(t, db, func(tx ordering.Tx) error { return tx.InsertOrder(o) })
	err := db.Update(context.Background(), func(tx ordering.Tx) error {
		if err := tx.InsertOrder(o); !errors.Is(err, ordering.ErrExists) {
			return fmt.Errorf("second insert of an order: %v, want ErrExists", err)
		}
		if _, err := tx.AddCredits("nobody", 1); !errors.Is(err, ordering.ErrNotFound) {
			return fmt.Errorf("credits for a missing account: %v, want ErrNotFound", err)
		}
		err := tx.CreateAccount(&ordering.AccountRecord{Account: ordering.Account{Name: "other", CreatedAt: t0, Role: companydocs.RoleClient}, KeyHash: []byte("key of acme")})
		if !errors.Is(err, ordering.ErrExists) {
			return fmt.Errorf("an account with a taken key hash: %v, want ErrExists", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(context.Background(), func(tx ordering.Tx) error {
		got, err := tx.Order("ord_1")
		if err != nil || !reflect.DeepEqual(got, o) {
			return fmt.Errorf("order read back: %+v, %v; want %+v", got, err, o)
		}
		a, err := tx.Account("acme")
		if err != nil || a.Credits != 5 || !a.CreatedAt.Equal(t0) || a.Role != companydocs.RoleClient {
			return fmt.Errorf("account read back: %+v, %v", a, err)
		}
		if name, err := tx.AccountForKey([]byte("key of acme")); name != "acme" || err != nil {
			return fmt.Errorf("account for its key: %q, %v", name, err)
		}
		if err := tx.AddDocumentRef("ab", "ord_1"); !errors.Is(err, errReadOnly) {
			return fmt.Errorf("a write in View: %v, want it refused", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIdempotencyKeyClaimedOnceAcrossNodes: 32 creates with the same
// Idempotency-Key on two nodes (two pools on one database) at once: one
// claims the key, every other one finds that order as the holder, and
// exactly one order is stored.
func TestIdempotencyKeyClaimedOnceAcrossNodes(t *testing.T) {
	url := newDatabase(t)
	nodes := openNodes(t, url, 2)
	newAccount(t, nodes[0], "acme", 0)
	var wg sync.WaitGroup
	holders := make([]string, 32)
	errs := make([]error, 32)
	for i := range holders {
		wg.Go(func() {
			errs[i] = nodes[i%2].Update(context.Background(), func(tx ordering.Tx) error {
				o := testOrder(fmt.Sprintf("ord_%02d", i), "acme")
				if err := tx.InsertOrder(o); err != nil {
					return err
				}
				holder, err := tx.ClaimIdempotencyKey("acme", "same-key", o.Order.ID)
				if holder != "" {
					holders[i] = holder
					return ordering.ErrExists // the rules answer duplicate_order and write nothing
				}
				return err
			})
		})
	}
	wg.Wait()
	winner := ""
	for i, err := range errs {
		switch {
		case err == nil && winner == "":
			winner = fmt.Sprintf("ord_%02d", i)
		case err == nil:
			t.Fatalf("two creates claimed the key: %s and ord_%02d", winner, i)
		case !errors.Is(err, ordering.ErrExists):
			t.Fatalf("create %d: %v", i, err)
		}
	}
	for i, h := range holders {
		if errs[i] != nil && h != winner {
			t.Fatalf("create %d was told the key belongs to %q, want %q", i, h, winner)
		}
	}
	counts := countOrders(t, nodes[0])
	if winner == "" || counts[companydocs.OrderStatusPreviewReady] != 1 {
		t.Fatalf("winner %q, orders stored %v; want exactly one", winner, counts)
	}
}

// TestDebitsNeverOverdrawAcrossNodes: 4N debits of one credit on two
// nodes at once against N credits, through the rules (ordering.Accounts,
// which check the balance with the account's row locked): exactly N
// succeed, the rest answer insufficient_credits, and the balance ends
// at 0.
func TestDebitsNeverOverdrawAcrossNodes(t *testing.T) {
	const n = 16
	nodes := openNodes(t, newDatabase(t), 2)
	newAccount(t, nodes[0], "acme", n)
	rules := make([]*ordering.Accounts, len(nodes))
	for i, db := range nodes {
		rules[i] = ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
		t.Cleanup(rules[i].Close)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4*n)
	for i := range errs {
		wg.Go(func() { errs[i] = rules[i%2].AddCredits("acme", -1) })
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if companydocs.ErrorCode(err) != companydocs.EINSUFFICIENTFUNDS {
			t.Fatal(err)
		}
	}
	var balance int64
	_ = nodes[1].View(context.Background(), func(tx ordering.Tx) error {
		a, err := tx.Account("acme")
		balance = a.Credits
		return err
	})
	if ok != n || balance != 0 {
		t.Fatalf("%d of %d debits succeeded on %d credits, balance %d; want %d and 0", ok, 4*n, n, balance, n)
	}
}

// TestDueDeliveriesClaimedOnceAcrossNodes: two nodes claim and record
// due deliveries at once: every delivery is attempted exactly once, and
// no endpoint ever has two attempts in flight.
func TestDueDeliveriesClaimedOnceAcrossNodes(t *testing.T) {
	const endpoints, perEndpoint = 4, 6
	nodes := openNodes(t, newDatabase(t), 2)
	scheduleDeliveries(t, nodes[0], endpoints, perEndpoint)
	var mu sync.Mutex
	inFlight, attempts := map[string]bool{}, map[string]int{}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for n, db := range nodes {
		wg.Go(func() {
			for {
				var due []ordering.DueDelivery
				err := db.Update(context.Background(), func(tx ordering.Tx) error {
					var err error
					due, _, err = tx.ClaimDueDeliveries(t0, time.Minute, func(string) bool { return false }, 3)
					return err
				})
				if err != nil || len(due) == 0 {
					errs[n] = err
					return
				}
				for _, d := range due {
					mu.Lock()
					if inFlight[d.EndpointID] {
						errs[n] = fmt.Errorf("two attempts in flight at %s", d.EndpointID)
					}
					inFlight[d.EndpointID] = true
					attempts[d.EventID]++
					mu.Unlock()
					err := db.Update(context.Background(), func(tx ordering.Tx) error {
						mu.Lock() // the claim holds until this commits
						delete(inFlight, d.EndpointID)
						mu.Unlock()
						return tx.UnscheduleDelivery(d.EndpointID, d.EventID)
					})
					if err != nil {
						errs[n] = err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for ev, n := range attempts {
		if n != 1 {
			t.Errorf("delivery %s attempted %d times", ev, n)
		}
	}
	if len(attempts) != endpoints*perEndpoint {
		t.Fatalf("%d deliveries attempted, want %d", len(attempts), endpoints*perEndpoint)
	}
}

// TestClaimOfADeadNodeRunsOut: a delivery claimed by a node that then
// dies is claimed by another node once the lease has run out, not
// before; the claiming node itself finds it again (its dispatcher's busy
// set keeps one attempt per endpoint).
func TestClaimOfADeadNodeRunsOut(t *testing.T) {
	nodes := openNodes(t, newDatabase(t), 2)
	scheduleDeliveries(t, nodes[0], 1, 1)
	claim := func(db *DB, now time.Time) (due []ordering.DueDelivery, next time.Time) {
		mustUpdate(t, db, func(tx ordering.Tx) error {
			var err error
			due, next, err = tx.ClaimDueDeliveries(now, time.Minute, func(string) bool { return false }, 10)
			return err
		})
		return due, next
	}
	if due, _ := claim(nodes[0], t0); len(due) != 1 {
		t.Fatalf("first claim: %v, want the one due delivery", due)
	}
	if due, next := claim(nodes[1], t0.Add(30*time.Second)); len(due) != 0 || !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("another node's claim during the lease: %v (next %v), want nothing until the lease ends", due, next)
	}
	if due, _ := claim(nodes[0], t0.Add(30*time.Second)); len(due) != 1 {
		t.Fatalf("the claiming node again: %v, want its delivery (its own dispatcher keeps one attempt)", due)
	}
	// the second claim renewed the lease to t0+90s
	if due, _ := claim(nodes[1], t0.Add(89*time.Second)); len(due) != 0 {
		t.Fatalf("claim before the renewed lease ends: %v, want nothing", due)
	}
	if due, _ := claim(nodes[1], t0.Add(91*time.Second)); len(due) != 1 {
		t.Fatalf("claim after the lease: %v, want the delivery again", due)
	}
}

func scheduleDeliveries(t *testing.T, db *DB, endpoints, perEndpoint int) {
	t.Helper()
	newAccount(t, db, "acme", 0)
	mustUpdate(t, db, func(tx ordering.Tx) error {
		if err := tx.InsertOrder(testOrder("ord_1", "acme")); err != nil {
			return err
		}
		for e := range endpoints {
			ep := &ordering.EndpointRecord{Account: "acme", WebhookEndpoint: companydocs.WebhookEndpoint{
				ID: fmt.Sprintf("wh_%d", e), URL: "https://example.com/hook", CreatedAt: t0, Secret: "whsec_x"}}
			if err := tx.InsertWebhookEndpoint(ep); err != nil {
				return err
			}
			for d := range perEndpoint {
				ev := fmt.Sprintf("evt_%d_%d", e, d)
				if err := tx.PutEventBody(ev, []byte(`{"type":"order.created"}`), 1); err != nil {
					return err
				}
				rec := &ordering.DeliveryRecord{WebhookDelivery: companydocs.WebhookDelivery{
					EventID: ev, EventType: "order.created", OrderID: "ord_1", State: companydocs.DeliveryPending, CreatedAt: t0}}
				if err := tx.PutDelivery(ep.ID, rec); err != nil {
					return err
				}
				if err := tx.ScheduleDelivery(ep.ID, ev, t0.Add(-time.Duration(perEndpoint-d)*time.Second)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

func openNodes(t *testing.T, url string, n int) []*DB {
	t.Helper()
	nodes := make([]*DB, n)
	for i := range nodes {
		db, err := Open(context.Background(), url, Options{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		nodes[i] = db
	}
	return nodes
}

func countOrders(t *testing.T, db *DB) map[string]int {
	t.Helper()
	var counts map[string]int
	err := db.View(context.Background(), func(tx ordering.Tx) error {
		var err error
		counts, err = tx.CountOrdersByStatus()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// TestListsSweepsAndPrunes runs the listing, sweeping and pruning
// methods on a few records and checks their order and bounds.
func TestListsSweepsAndPrunes(t *testing.T) {
	db := mustOpen(t, Options{})
	newAccount(t, db, "acme", 0)
	mustUpdate(t, db, func(tx ordering.Tx) error {
		for i := range 5 {
			o := testOrder(fmt.Sprintf("ord_%d", i), "acme")
			if i >= 3 {
				o.Order.Status = companydocs.OrderStatusPaid
			}
			if err := tx.InsertOrder(o); err != nil {
				return err
			}
			var h [32]byte
			h[0] = byte(i + 1)
			s := &ordering.SessionRecord{Account: "acme", CreatedAt: t0.Add(time.Duration(i) * time.Second), ExpiresAt: t0.Add(time.Duration(i) * time.Hour)}
			if err := tx.PutSession(h, s); err != nil {
				return err
			}
			e := &ordering.Event{ID: fmt.Sprintf("evt_%d", i), Type: "order.created", OrderID: o.Order.ID, Account: "acme", At: t0, Payload: []byte(`{"id": 1}`)}
			if err := tx.AppendEvent(e); err != nil {
				return err
			}
		}
		return nil
	})
	err := db.Update(context.Background(), func(tx ordering.Tx) error {
		newest, err := tx.AccountOrders("acme", "", "ord_4", 2)
		if err != nil || len(newest) != 2 || newest[0].Order.ID != "ord_3" || newest[1].Order.ID != "ord_2" {
			return fmt.Errorf("account orders before ord_4: %v, %v", ids(newest), err)
		}
		paid, err := tx.QueuedOrders(companydocs.OrderStatusPaid, "", 10)
		if err != nil || len(paid) != 2 || paid[0].Order.ID != "ord_3" {
			return fmt.Errorf("paid queue: %v, %v", ids(paid), err)
		}
		if floor, err := tx.EventIDFloor(); floor != "" || err != nil {
			return fmt.Errorf("event id floor: %q, %v; want none (transactions overlap)", floor, err)
		}
		claimed, err := tx.ClaimEvents(2)
		if err != nil || len(claimed) != 2 || claimed[0].ID != "evt_0" || string(claimed[0].Payload) != `{"id": 1}` {
			return fmt.Errorf("claimed events: %+v, %v", claimed, err)
		}
		if n, err := tx.CountSessions("acme"); n != 5 || err != nil {
			return fmt.Errorf("sessions: %d, %v", n, err)
		}
		oldest, err := tx.OldestSessions("acme", 2)
		if err != nil || len(oldest) != 2 || oldest[0][0] != 1 || oldest[1][0] != 2 {
			return fmt.Errorf("oldest sessions: %v, %v", oldest, err)
		}
		// expired at t0+2h: the sessions that expire at t0, t0+1h and t0+2h
		deleted, next, err := tx.SweepSessions(t0.Add(2*time.Hour), "", 3)
		if err != nil || deleted != 3 || next == "" {
			return fmt.Errorf("first sweep: %d deleted, next %q, %v", deleted, next, err)
		}
		deleted, next, err = tx.SweepSessions(t0.Add(2*time.Hour), next, 3)
		if err != nil || deleted != 0 || next != "" {
			return fmt.Errorf("second sweep: %d deleted, next %q, %v", deleted, next, err)
		}
		revoked, err := tx.RevokeSessions("acme", "key_rotation")
		if err != nil || len(revoked) != 2 {
			return fmt.Errorf("revoked: %d, %v", len(revoked), err)
		}
		depth, oldestAt, err := tx.OutboxStats()
		if err != nil || depth != 5 || !oldestAt.Equal(t0) {
			return fmt.Errorf("outbox stats: %d, %v, %v", depth, oldestAt, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPruneStopsAtPending: pruning deletes the oldest finished deliveries
// and stops at the first pending one.
func TestPruneStopsAtPending(t *testing.T) {
	db := mustOpen(t, Options{})
	scheduleDeliveries(t, db, 1, 4)
	mustUpdate(t, db, func(tx ordering.Tx) error {
		for _, ev := range []string{"evt_0_0", "evt_0_1", "evt_0_3"} {
			d, err := tx.Delivery("wh_0", ev)
			if err != nil {
				return err
			}
			d.State = companydocs.DeliveryDelivered
			if err := tx.PutDelivery("wh_0", d); err != nil {
				return err
			}
			if err := tx.UnscheduleDelivery("wh_0", ev); err != nil {
				return err
			}
		}
		return tx.PruneDeliveries("wh_0", t0.Add(time.Hour), 10)
	})
	err := db.View(context.Background(), func(tx ordering.Tx) error {
		left, err := tx.RecentDeliveries("wh_0", 10)
		if err != nil || len(left) != 2 || left[0].EventID != "evt_0_3" || left[1].EventID != "evt_0_2" {
			return fmt.Errorf("left after pruning: %+v, %v; want evt_0_3 and the pending evt_0_2", left, err)
		}
		if n, err := tx.CountScheduledDeliveries(); n != 1 || err != nil {
			return fmt.Errorf("scheduled: %d, %v", n, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ids(list []*ordering.OrderRecord) []string {
	var out []string
	for _, r := range list {
		out = append(out, r.Order.ID)
	}
	return out
}

// TestCheckFindsWhatConstraintsCannot: Check passes on consistent rows
// and names the order when a slot is held by a terminal order or an open
// order holds none.
func TestCheckFindsWhatConstraintsCannot(t *testing.T) {
	db := mustOpen(t, Options{})
	newAccount(t, db, "acme", 0)
	o := testOrder("ord_1", "acme")
	slot := ordering.OpenSlot{Account: "acme", ProfileID: "p1", DocumentType: "AD", PlanID: "basic"}
	mustUpdate(t, db, func(tx ordering.Tx) error {
		if err := tx.InsertOrder(o); err != nil {
			return err
		}
		_, err := tx.ClaimOpenOrder(slot, "ord_1")
		return err
	})
	if err := db.Check(); err != nil {
		t.Fatalf("check of consistent rows: %v", err)
	}
	o.Order.Status = companydocs.OrderStatusCancelled
	mustUpdate(t, db, func(tx ordering.Tx) error { return tx.UpdateOrder(o, companydocs.OrderStatusPreviewReady) })
	if err := db.Check(); err == nil || !strings.Contains(err.Error(), "terminal order") || !strings.Contains(err.Error(), "ord_1") {
		t.Fatalf("check of a cancelled order holding its slot: %v", err)
	}
	o.Order.Status = companydocs.OrderStatusPaid
	mustUpdate(t, db, func(tx ordering.Tx) error {
		if err := tx.UpdateOrder(o, companydocs.OrderStatusCancelled); err != nil {
			return err
		}
		return tx.ReleaseOpenOrder(slot)
	})
	if err := db.Check(); err == nil || !strings.Contains(err.Error(), "holds no slot") {
		t.Fatalf("check of an open order without its slot: %v", err)
	}
}

// TestServiceAnswersUnavailableWhileTheDatabaseIsDown: through the
// ordering rules (ordering.Accounts), a lost database answers service_unavailable, and the
// same service serves again once the database is back, its committed
// accounts and sessions intact.
func TestServiceAnswersUnavailableWhileTheDatabaseIsDown(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{})
	svc := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	defer svc.Close()
	key, err := svc.CreateAccount("acme", 3)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := svc.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	cluster.Crash()
	restarted := false
	defer func() {
		if !restarted {
			_ = cluster.Start(ctx)
		}
	}()
	if _, err := svc.CreateSession(ctx, key); companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Errorf("a session while the database is down: %v (code %s), want service_unavailable", err, companydocs.ErrorCode(err))
	}
	if err := svc.AddCredits("acme", 1); companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Errorf("credits while the database is down: %v (code %s), want service_unavailable", err, companydocs.ErrorCode(err))
	}
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	var account string
	for range 20 { // the pool meets its dead connections once each
		if account, err = svc.Authenticate(ctx, sess.Token); err == nil {
			break
		}
	}
	if err != nil || account != "acme" {
		t.Fatalf("the session made before the outage: %q, %v", account, err)
	}
	if err := svc.AddCredits("acme", 1); err != nil {
		t.Fatalf("credits after the restart: %v", err)
	}
}
