package ordering

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"companydocs"
	"companydocs/internal/testclock"
)

func TestCreateOrderStoresVerifiedSnapshot(t *testing.T) {
	forEachStore(t, testCreateOrderStoresVerifiedSnapshot)
}

func testCreateOrderStoresVerifiedSnapshot(t *testing.T) {
	fx := realFixture(t)
	c := testclock.New()
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{Now: c.Now})
	acct := MustAccount(t, s, "acme", 3)
	live := fx.live[2]

	o, err := s.CreateOrder(ctx, acct, request(live, "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	if !validOrderID(o.ID) || o.Status != companydocs.OrderStatusPreviewReady || o.WorkflowStatus != companydocs.WorkflowStarted {
		t.Errorf("order id/status = %q %q %q", o.ID, o.Status, o.WorkflowStatus)
	}
	if o.Company != companydocs.SnapshotOf(live) || o.CompanyProfileID != live.ID {
		t.Errorf("snapshot = %+v, want the profile's %+v", o.Company, companydocs.SnapshotOf(live))
	}
	if o.Total != "4.50" || o.Currency != "EUR" || o.CreditsCharged != 0 || o.NextStep.Kind != NextStepPayment {
		t.Errorf("one-off order total %s %s credits %d next %q", o.Total, o.Currency, o.CreditsCharged, o.NextStep.Kind)
	}
	if !o.CreatedAt.Equal(c.Now()) || o.DiscoveryCandidateID != "" || o.Account != acct {
		t.Errorf("created_at %v, discovery id %q, account %q", o.CreatedAt, o.DiscoveryCandidateID, o.Account)
	}

	sub, err := s.CreateOrder(ctx, acct, request(live, "CD", "subscription-basic"), "")
	if err != nil {
		t.Fatal(err)
	}
	if sub.NextStep.Kind != NextStepDelivery || sub.CreditsCharged != 1 || sub.Total != "0.00" {
		t.Errorf("subscription order next %q credits %d total %s", sub.NextStep.Kind, sub.CreditsCharged, sub.Total)
	}
	if a, _ := s.Account(acct); a.Credits != 2 {
		t.Errorf("credits after one subscription order = %d, want 2", a.Credits)
	}
	// One credit is "1 credit", in the next step and in the history.
	paid, err := s.Order(ctx, acct, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	words := sub.NextStep.Message
	for _, h := range paid.History {
		words += " " + h.Note
	}
	if !strings.Contains(words, "Paid with 1 credit.") || !strings.Contains(words, "1 credit charged") || strings.Contains(words, "1 credits") {
		t.Errorf("next step and history %q, want \"1 credit\", never \"1 credits\"", words)
	}
	got, err := s.Order(ctx, acct, o.ID)
	if err != nil || !reflect.DeepEqual(got, o) {
		t.Errorf("Order(%s) = %+v, %v; want %+v", o.ID, got, err, o)
	}
}

func TestCreateOrderErrors(t *testing.T) { forEachStore(t, testCreateOrderErrors) }

func testCreateOrderErrors(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 0)
	live := fx.live[3]
	for _, tc := range []struct {
		name string
		req  companydocs.OrderRequest
		code string
	}{
		{"profile id missing", companydocs.OrderRequest{DocumentType: "AD", PlanID: "ad-single"}, companydocs.EVERIFIEDREQUIRED},
		{"unknown profile", companydocs.OrderRequest{CompanyProfileID: "dp_aaaaaaaaaaaaaaaaaaaa", DocumentType: "AD", PlanID: "ad-single"}, companydocs.EVERIFIEDREQUIRED},
		{"company name instead of id", companydocs.OrderRequest{CompanyProfileID: live.Name, DocumentType: "AD", PlanID: "ad-single"}, companydocs.EVERIFIEDREQUIRED},
		{"removed company", request(fx.removedCD, "CD", "cd-single"), companydocs.EVERIFIEDREQUIRED},
		{"document not held", request(fx.removedNo, "AD", "ad-single"), companydocs.EVERIFIEDREQUIRED},
		{"unverified discovery record", request(fx.unverified, "AD", "ad-single"), companydocs.EVERIFIEDREQUIRED},
		{"unknown plan", request(live, "AD", "gold"), companydocs.EVALIDATION},
		{"document not in plan", request(live, "CD", "ad-single"), companydocs.EVALIDATION},
		{"document type not sold", request(live, "DK", "ad-single"), companydocs.EVALIDATION},
		{"document type missing", request(live, "", "ad-single"), companydocs.EVALIDATION},
		{"insufficient credits", request(live, "AD", "subscription-basic"), companydocs.EINSUFFICIENTFUNDS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateOrder(ctx, acct, tc.req, "key-"+tc.name)
			e := wantCode(t, err, tc.code)
			if tc.code == companydocs.EVERIFIEDREQUIRED && !strings.Contains(e.Message, "Return to search") {
				t.Errorf("message %q does not send the client back to search", e.Message)
			}
		})
	}
	orders, _, err := s.List(ctx, acct, "", "", 0)
	if err != nil || len(orders) != 0 {
		t.Errorf("after failed creates: %d orders, %v; want none", len(orders), err)
	}
	if a, _ := s.Account(acct); a.Credits != 0 {
		t.Errorf("credits = %d after failed creates", a.Credits)
	}
	// A failed create must not reserve its Idempotency-Key.
	if _, err := s.CreateOrder(ctx, acct, request(live, "AD", "ad-single"), "key-insufficient credits"); err != nil {
		t.Errorf("create with the key of a failed create: %v", err)
	}
}

func TestCreateOrderWithoutPlans(t *testing.T) { forEachStore(t, testCreateOrderWithoutPlans) }

func testCreateOrderWithoutPlans(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, nil, Options{})
	acct := MustAccount(t, s, "acme", 5)
	_, err := s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), "")
	wantCode(t, err, companydocs.EPLANMISSING)
	p, err := s.Preview(ctx, acct, request(fx.live[0], "AD", "ad-single"))
	if err != nil || p.OrderingEligible || p.Blockers[0].Code != BlockerNoPlanConfigured {
		t.Errorf("preview without plans = %+v, %v", p, err)
	}
}

func TestCreateOrderDuplicates(t *testing.T) { forEachStore(t, testCreateOrderDuplicates) }

func testCreateOrderDuplicates(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 10)
	other := MustAccount(t, s, "other", 10)
	live := fx.live[4]

	first, err := s.CreateOrder(ctx, acct, request(live, "AD", "subscription-basic"), "click-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("same idempotency key, other document", func(t *testing.T) {
		_, err := s.CreateOrder(ctx, acct, request(live, "CD", "subscription-basic"), "click-1")
		e := wantCode(t, err, companydocs.EDUPLICATEORDER)
		if e.Order == nil || e.Order.ID != first.ID {
			t.Errorf("duplicate carries %+v, want order %s", e.Order, first.ID)
		}
	})
	t.Run("same open order without key", func(t *testing.T) {
		_, err := s.CreateOrder(ctx, acct, request(live, "AD", "subscription-basic"), "")
		e := wantCode(t, err, companydocs.EDUPLICATEORDER)
		if e.Order == nil || e.Order.ID != first.ID || e.Order.Company.Name != live.Name {
			t.Errorf("duplicate carries %+v, want order %s", e.Order, first.ID)
		}
	})
	t.Run("preview reports the open order", func(t *testing.T) {
		p, err := s.Preview(ctx, acct, request(live, "AD", "subscription-basic"))
		if err != nil || p.OrderingEligible || len(p.Blockers) != 1 || p.Blockers[0].Code != BlockerOpenOrderExists {
			t.Errorf("preview = %+v, %v", p, err)
		}
	})
	t.Run("other account, same key and request", func(t *testing.T) {
		o, err := s.CreateOrder(ctx, other, request(live, "AD", "subscription-basic"), "click-1")
		if err != nil || o.ID == first.ID {
			t.Errorf("other account's create = %v, %v", o, err)
		}
	})
	t.Run("other plan is another order", func(t *testing.T) {
		if _, err := s.CreateOrder(ctx, acct, request(live, "AD", "ad-single"), ""); err != nil {
			t.Error(err)
		}
	})
	if a, _ := s.Account(acct); a.Credits != 9 {
		t.Errorf("credits = %d, want 9 (one debit)", a.Credits)
	}
}

func TestConcurrentIdenticalCreatesMakeOneOrder(t *testing.T) {
	forEachStore(t, testConcurrentIdenticalCreatesMakeOneOrder)
}

func testConcurrentIdenticalCreatesMakeOneOrder(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 100)
	for _, idemKey := range []string{"", "double-click"} {
		t.Run("key="+idemKey, func(t *testing.T) {
			req := request(fx.live[5], "AD", "subscription-basic")
			if idemKey == "" {
				req.DocumentType = "CD"
			}
			const n = 50
			var wg sync.WaitGroup
			ids := make([]string, n)
			created := make([]bool, n)
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					o, err := s.CreateOrder(ctx, acct, req, idemKey)
					var e *companydocs.Error
					switch {
					case err == nil:
						ids[i], created[i] = o.ID, true
					case errors.As(err, &e) && e.Code == companydocs.EDUPLICATEORDER && e.Order != nil:
						ids[i] = e.Order.ID
					default:
						errs[i] = err
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var nCreated int
			for i := range n {
				if created[i] {
					nCreated++
				}
				if ids[i] != ids[0] {
					t.Errorf("request %d saw order %s, request 0 saw %s", i, ids[i], ids[0])
				}
			}
			if nCreated != 1 {
				t.Errorf("%d orders created, want 1", nCreated)
			}
		})
	}
	if a, _ := s.Account(acct); a.Credits != 98 {
		t.Errorf("credits = %d, want 98 (one debit per request group)", a.Credits)
	}
	orders, _, _ := s.List(ctx, acct, "", "", companydocs.MaxOrdersPage)
	if len(orders) != 2 {
		t.Errorf("%d orders stored, want 2", len(orders))
	}
}

func TestOrdersAreOwnedByTheirAccount(t *testing.T) {
	forEachStore(t, testOrdersAreOwnedByTheirAccount)
}

func testOrdersAreOwnedByTheirAccount(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 0)
	other := MustAccount(t, s, "other", 0)
	o, err := s.CreateOrder(ctx, acct, request(fx.live[6], "AD", "ad-single"), "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Order(ctx, other, o.ID)
	e := wantCode(t, err, companydocs.ENOTFOUND)
	if got != nil || e.Order != nil || strings.Contains(e.Message, fx.live[6].Name) {
		t.Errorf("other account got %+v / %+v", got, e)
	}
	_, missingErr := s.Order(ctx, other, "ord_0000000000000000000000000z")
	if missingErr.Error() != strings.Replace(e.Message, o.ID, "ord_0000000000000000000000000z", 1) {
		t.Errorf("another account's order and a missing order answer differently: %q vs %q", e.Message, missingErr.Error())
	}
	list, _, err := s.List(ctx, other, "", "", 0)
	if err != nil || len(list) != 0 {
		t.Errorf("other account lists %d orders, %v", len(list), err)
	}
}

func TestOrdersNewestFirstPaginated(t *testing.T) { forEachStore(t, testOrdersNewestFirstPaginated) }

func testOrdersNewestFirstPaginated(t *testing.T) {
	fx := realFixture(t)
	c := testclock.New()
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{Now: c.Now})
	acct := MustAccount(t, s, "acme", 0)
	other := MustAccount(t, s, "acmf", 0) // sorts right after "acme"
	var created []string
	for i, p := range fx.live[:7] {
		for _, a := range []string{acct, other} {
			o, err := s.CreateOrder(ctx, a, request(p, "AD", "ad-single"), "")
			if err != nil {
				t.Fatal(err)
			}
			if a == acct {
				created = append(created, o.ID)
			}
		}
		if i%3 == 0 {
			c.Advance(1) // several orders share a millisecond, others do not
		}
	}
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		orders, next, err := s.List(ctx, acct, "", cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(orders) > 3 || page > 5 {
			t.Fatalf("page %d has %d orders", page, len(orders))
		}
		for _, o := range orders {
			seen = append(seen, o.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != len(created) {
		t.Fatalf("listed %d orders, created %d", len(seen), len(created))
	}
	for i := range seen {
		if seen[i] != created[len(created)-1-i] {
			t.Errorf("position %d: %s, want %s (newest first)", i, seen[i], created[len(created)-1-i])
		}
	}
	_, _, err := s.List(ctx, acct, "", "garbage!", 3)
	wantCode(t, err, companydocs.EVALIDATION)
}

func TestOrdersSurviveReopen(t *testing.T) { forEachStore(t, testOrdersSurviveReopen) }

func testOrdersSurviveReopen(t *testing.T) {
	fx := realFixture(t)
	dir := t.TempDir()
	s, err := OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.CreateAccount("acme", 5)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.CreateOrder(ctx, "acme", request(fx.live[7], "CD", "subscription-basic"), "k1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := OpenAt(t, dir, fx.profiles, shippedPlans(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Order(ctx, "acme", o.ID)
	if err != nil || got.Company != o.Company || !got.CreatedAt.Equal(o.CreatedAt) {
		t.Errorf("after reopen: %+v, %v; want %+v", got, err, o)
	}
	if _, err := s2.CreateOrder(ctx, "acme", request(fx.live[7], "AD", "subscription-basic"), "k1"); companydocs.ErrorCode(err) != companydocs.EDUPLICATEORDER {
		t.Errorf("idempotency key forgotten after reopen: %v", err)
	}
	if _, err := s2.CreateSession(ctx, key); err != nil {
		t.Errorf("API key forgotten after reopen: %v", err)
	}
	mustCheck(t, s2)
}

func TestOrderIDsSortByTime(t *testing.T) {
	c := testclock.New()
	g := idGenerator{now: c.Now}
	prev := ""
	for i := range 1000 {
		if i%100 == 0 {
			c.Advance(1e6)
		}
		id := g.next()
		if !validOrderID(id) || len(id) != orderIDLength || id <= prev {
			t.Fatalf("id %d = %q after %q", i, id, prev)
		}
		prev = id
	}
	for _, bad := range []string{"", "ord_", "ord_0000000000000000000000000", "ord_000000000000000000000000u0", "ORD_00000000000000000000000000", "ord_80000000000000000000000000"} {
		if validOrderID(bad) {
			t.Errorf("validOrderID(%q) = true", bad)
		}
	}
}

// BenchmarkCreateOrder measures durable creates per second from parallel
// clients (goroutines per CPU), each order a distinct company, document,
// plan and account combination.
func BenchmarkCreateOrder(b *testing.B) {
	fx := realFixture(b)
	for _, store := range slices.Sorted(maps.Keys(TestStores)) {
		b.Run(store, func(b *testing.B) {
			for _, perCPU := range []int{1, 8, 32} {
				b.Run(fmt.Sprintf("clients=%dxCPU", perCPU), func(b *testing.B) {
					benchmarkCreateOrder(b, fx, perCPU)
				})
			}
		})
	}
}

func benchmarkCreateOrder(b *testing.B, fx *fixture, perCPU int) {
	s := MustOpen(b, fx.profiles, shippedPlans(b), Options{})
	perAccount := len(fx.live) * 2
	for i := 0; i <= b.N/perAccount; i++ {
		MustAccount(b, s, fmt.Sprintf("bench%d", i), 0)
	}
	var next atomic.Int64
	b.SetParallelism(perCPU)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := int(next.Add(1) - 1)
			req := request(fx.live[i%len(fx.live)], "AD", "ad-single")
			if i/len(fx.live)%2 == 1 {
				req.DocumentType, req.PlanID = "CD", "cd-single"
			}
			if _, err := s.CreateOrder(ctx, fmt.Sprintf("bench%d", i/perAccount), req, ""); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
}

// An account sees its own name, role and balance; a client may order
// with every configured plan, an operator with none.
func TestAccountSummary(t *testing.T) { forEachStore(t, testAccountSummary) }

func testAccountSummary(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 3)
	if _, err := s.CreateAccountWithRole("ops", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateOrder(ctx, acct, request(fx.live[2], "CD", "subscription-basic"), ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateWatch(ctx, acct, fx.live[2].ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.AccountSummary(ctx, acct)
	if err != nil {
		t.Fatal(err)
	}
	want := companydocs.AccountSummary{Name: "acme", Role: companydocs.RoleClient, Credits: 2,
		Plans: []string{"ad-single", "cd-single", "subscription-basic"}, Watches: companydocs.WatchCount{Count: 1, Limit: 25}}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("client sees %+v, want %+v", *got, want)
	}
	op, err := s.AccountSummary(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if want := (companydocs.AccountSummary{Name: "ops", Role: companydocs.RoleOperator, Plans: []string{}}); !reflect.DeepEqual(*op, want) {
		t.Errorf("operator sees %+v, want %+v", *op, want)
	}
	_, err = s.AccountSummary(ctx, "nobody")
	wantCode(t, err, companydocs.ENOTFOUND)
}

// Without plans a client may order with none, and still sees itself.
func TestAccountSummaryWithoutPlans(t *testing.T) { forEachStore(t, testAccountSummaryWithoutPlans) }

func testAccountSummaryWithoutPlans(t *testing.T) {
	s := MustOpen(t, realFixture(t).profiles, nil, Options{})
	got, err := s.AccountSummary(ctx, MustAccount(t, s, "acme", 1))
	if err != nil || got.Credits != 1 || got.Plans == nil || len(got.Plans) != 0 {
		t.Errorf("without plans: %+v, %v", got, err)
	}
}
