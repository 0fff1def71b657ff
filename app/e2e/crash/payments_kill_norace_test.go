//go:build !race

package crash

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
)

// paymentJournal is what the clients of the payment crash test were
// told: the orders created (201) and, per order, whether a completed or
// an expired event of it was answered 200.
type paymentJournal struct {
	mu        sync.Mutex
	orders    map[string]companydocs.Order // created, as the create answered
	completed map[string]bool              // order -> a completed event got 200
	expired   map[string]bool              // order -> an expired event got 200
	events    map[string]e2e.StripeEvent   // order -> its completed event, sent again in later rounds
	answered  int                          // events answered 200
	kills     int
}

// TestStripeEventsSurviveSIGKILL kills a server (SIGKILL) at random
// moments while signed Stripe events, creates and cancels of paid orders
// arrive, at least 20 times, restarting it on the same data directory
// each time. Every event answered 200 is applied exactly once (one
// paid_online or checkout_expired entry, never two), no order is paid
// twice, and every refund is made and asked of Stripe exactly once, under
// the order's own idempotency key: a restart finds an ask in flight and
// looks the refund up instead of asking again (Stripe refuses nothing
// here, so a second ask would be one too many). The same on PostgreSQL:
// the orders, the applied event ids and the refunds due in a throw-away
// cluster, the server killed as often; a refund claimed by a killed
// server is taken again after the claim's lease (1 s here).
func TestStripeEventsSurviveSIGKILL(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		dir := t.TempDir()
		e2e.MustBuild(t, dir, e2e.TwoNodesRecords, e2e.SampleFile(t))
		svc, _ := e2e.OpenOrderService(t, dir, ordering.Options{})
		keys := paymentAccounts(t, svc.Accounts)
		svc.Close()
		testStripeEventsSurviveSIGKILL(t, dir, keys)
	})
	t.Run("postgres", func(t *testing.T) {
		_, url := e2e.StartTestCluster(t)
		dir := t.TempDir()
		e2e.MustBuild(t, dir, e2e.TwoNodesRecords, e2e.SampleFile(t))
		db, err := postgres.Open(context.Background(), url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		accounts := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
		keys := paymentAccounts(t, accounts)
		accounts.Close()
		db.Close()
		testStripeEventsSurviveSIGKILL(t, dir, keys, "--store", url, "--refund-lease", "1s")
	})
}

// paymentAccounts creates the payment crash test's client ("payer") and
// operator ("ops") and returns their keys.
func paymentAccounts(t *testing.T, accounts *ordering.Accounts) map[string]string {
	t.Helper()
	keys := map[string]string{}
	for _, name := range []string{"payer", "ops"} {
		role := companydocs.RoleClient
		if name == "ops" {
			role = companydocs.RoleOperator
		}
		key, err := accounts.CreateAccountWithRole(name, role, 0)
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = key
	}
	return keys
}

func testStripeEventsSurviveSIGKILL(t *testing.T, dir string, keys map[string]string, store ...string) {
	profiles := e2e.CrashProfiles(t, e2e.TwoNodesRecords)
	front := e2e.StartStripeFront(t, 0)
	_, flags := e2e.StripeEnv(t, front)
	flags = append(flags, store...)
	j := &paymentJournal{orders: map[string]companydocs.Order{}, completed: map[string]bool{}, expired: map[string]bool{}, events: map[string]e2e.StripeEvent{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 38))
	// At least 22 kills; on a loaded machine, where a round between a
	// start and its kill carries less load, more (up to 60), until the
	// load checked below has been had.
	const kills, mostKills = 22, 60
	next := 0 // the next profile to order
	for round := 0; round < kills || round < mostKills && (len(j.orders) < 10 || j.answered < 10); round++ {
		s := e2e.StartCrashServer(t, dir, flags...)
		tokens := s.Login(t, keys)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := 0; ; i++ {
					if !paymentMove(t, s, j, tokens["payer"], profiles, &next, rng, round*100+w*10+i) {
						return
					}
				}
			})
		}
		time.Sleep(time.Duration(20+rng.IntN(80)) * time.Millisecond)
		s.Kill(t)
		j.kills++
		wg.Wait()
	}

	s := e2e.StartCrashServer(t, dir, flags...)
	defer s.Kill(t)
	op := s.Login(t, map[string]string{"ops": keys["ops"]})["ops"]
	orders := paymentOrders(t, s, op)
	e2e.WaitFor(t, "every refund to be made", func() bool {
		orders = paymentOrders(t, s, op)
		for _, o := range orders {
			if o.Payment != nil && o.Payment.Refund != nil && o.Payment.Refund.Status != "refunded" {
				return false
			}
		}
		return true
	})
	checkPaymentJournal(t, j, orders, front)
}

// paymentMove makes one random request of the crash test's load: create
// an order, send (or send again) a completed event, an expired event, or
// cancel a paid order; false once the server is gone.
func paymentMove(t *testing.T, s *e2e.CrashServer, j *paymentJournal, token string, profiles []string, next *int, rng *rand.Rand, seed int) bool {
	j.mu.Lock()
	var open, paid []companydocs.Order
	for _, o := range j.orders {
		switch {
		case !j.completed[o.ID] && !j.expired[o.ID]:
			open = append(open, o)
		case j.completed[o.ID]:
			paid = append(paid, o)
		}
	}
	profile := profiles[*next%len(profiles)]
	j.mu.Unlock()
	switch r := seed % 5; {
	case r == 0 || len(open) == 0:
		var o companydocs.Order
		status, raw, err := s.Exchange("POST", "/api/v1/documents/orders", "application/json", token, e2e.OrderJSON(profile, "AD", "stripe-single"), "")
		if err != nil || status == 0 {
			return false
		}
		j.mu.Lock()
		*next++
		if status == http.StatusCreated && json.Unmarshal(raw, &o) == nil {
			j.orders[o.ID] = o
		}
		j.mu.Unlock()
	case r == 1 && len(paid) > 0:
		o := paid[seed%len(paid)]
		if status, _, err := s.Exchange("POST", "/api/v1/documents/orders/"+o.ID+"/cancel", "application/json", token, "", ""); err != nil || status == 0 {
			return false
		}
	case r == 2 && len(paid) > 0:
		o := paid[seed%len(paid)]
		j.mu.Lock()
		e := j.events[o.ID]
		j.mu.Unlock()
		return sendPaymentEvent(s, j, o.ID, e, true) // a replay
	default:
		o := open[seed%len(open)]
		typ := "checkout.session.completed"
		if seed%7 == 0 {
			typ = "checkout.session.expired"
		}
		e := e2e.CheckoutEvent(o, typ, "pi_test_"+o.ID)
		if typ == "checkout.session.completed" {
			j.mu.Lock()
			j.events[o.ID] = e
			j.mu.Unlock()
		}
		return sendPaymentEvent(s, j, o.ID, e, typ == "checkout.session.completed")
	}
	return true
}

// sendPaymentEvent posts e and journals a 200.
func sendPaymentEvent(s *e2e.CrashServer, j *paymentJournal, orderID string, e e2e.StripeEvent, completed bool) bool {
	status, _, err := s.PostStripeEvent(e)
	if err != nil || status == 0 {
		return false
	}
	if status == http.StatusOK {
		j.mu.Lock()
		j.answered++
		if completed {
			j.completed[orderID] = true
		} else {
			j.expired[orderID] = true
		}
		j.mu.Unlock()
	}
	return true
}

// paymentOrders lists every order through the operator's queue.
func paymentOrders(t *testing.T, s *e2e.CrashServer, token string) []companydocs.Order {
	t.Helper()
	var all []companydocs.Order
	cursor := ""
	for {
		var page struct {
			Orders     []companydocs.Order `json:"orders"`
			NextCursor string              `json:"next_cursor"`
		}
		if status := s.Send(t, "GET", "/api/v1/operator/orders/?limit=100&cursor="+cursor, "", token, "", "", &page); status != 200 {
			t.Fatalf("operator orders: %d", status)
		}
		all = append(all, page.Orders...)
		if cursor = page.NextCursor; cursor == "" {
			return all
		}
	}
}

// checkPaymentJournal checks the orders against what the clients were
// told and the refunds against what Stripe was asked.
func checkPaymentJournal(t *testing.T, j *paymentJournal, orders []companydocs.Order, front *e2e.StripeFront) {
	t.Helper()
	refundKeys := map[string]int{}
	for _, k := range front.RefundsAsked() {
		refundKeys[k]++
	}
	front.Mu.Lock()
	defer front.Mu.Unlock()
	byID := map[string]companydocs.Order{}
	refunds := 0
	for _, o := range orders {
		byID[o.ID] = o
		codes := map[string]int{}
		for _, h := range o.History {
			codes[h.Code]++
		}
		if codes["paid_online"] > 1 || codes["checkout_expired"] > 1 || codes["refunded"] > 1 || codes["paid_online"]+codes["checkout_expired"] > 1 {
			t.Errorf("order %s: an event applied twice: %v", o.ID, codes)
		}
		if p := o.Payment; p != nil && p.Refund != nil {
			refunds++
			key := "companydocs-refund-" + o.ID
			if p.Refund.Status != "refunded" || codes["refunded"] != 1 || p.Refund.RefundID != front.MadeID(key) {
				t.Errorf("order %s: refund %+v with %d refunded entries, Stripe made %q", o.ID, p.Refund, codes["refunded"], front.MadeID(key))
			}
			if refundKeys[key] != 1 || front.Replays[key] != 0 {
				t.Errorf("order %s: its refund was asked of Stripe %d times (%d after Stripe had made it), want once", o.ID, refundKeys[key], front.Replays[key])
			}
			delete(refundKeys, key)
		}
	}
	for key, n := range refundKeys {
		t.Errorf("Stripe was asked %d times for a refund under %q, which no order's refund has", n, key)
	}
	for id := range j.orders {
		o, ok := byID[id]
		if !ok {
			t.Errorf("order %s was created (201) and is gone", id)
			continue
		}
		paidOnce := false
		for _, h := range o.History {
			paidOnce = paidOnce || h.Code == "paid_online" || h.Code == "paid_after_cancel"
		}
		expiredOnce := o.Status == "CANCELLED" && o.Payment.Status != "open"
		if j.completed[id] && !paidOnce && !expiredOnce {
			t.Errorf("order %s: a completed event was answered 200, the order shows neither the payment nor an expiry: %s %+v", id, o.Status, o.History)
		}
		if j.expired[id] && o.Status == "PREVIEW_READY" {
			t.Errorf("order %s: an expired event was answered 200, the order is still open", id)
		}
	}
	t.Logf("%d kills, %d orders created, %d events answered 200, %d refunds made, Stripe asked %d times for them; %d look-ups after a restart or a failed attempt, %d of them found the refund made",
		j.kills, len(j.orders), j.answered, refunds, len(front.RefundKeys), front.Lookups, front.Found)
	if len(j.orders) < 10 || j.answered < 10 {
		t.Errorf("too little load between the kills: %d orders, %d events answered", len(j.orders), j.answered)
	}
}
