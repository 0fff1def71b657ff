package ordering

import (
	"math"
	"sync"
	"testing"

	"companydocs"
)

// The rules that every store used to check on its own and that package
// ordering now checks once, above the Store interface: each runs on every
// registered store.

// TestDebitsNeverOverdraw: an account holding N credits meets 3N debits
// at once, credit orders and operator debits mixed: exactly N succeed,
// the rest are insufficient_credits, and the balance ends at 0. The
// check is the rules' (the account read in the transaction, its row
// locked), not the store's.
func TestDebitsNeverOverdraw(t *testing.T) { forEachStore(t, testDebitsNeverOverdraw) }

func testDebitsNeverOverdraw(t *testing.T) {
	const n = 10
	s, fx, acct, _ := lifecycleService(t)
	if err := s.AddCredits(acct, n-5); err != nil { // lifecycleService gives 5
		t.Fatal(err)
	}
	var mu sync.Mutex
	codes := map[string]int{}
	count := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		codes[companydocs.ErrorCode(err)]++
	}
	var wg sync.WaitGroup
	for i := range n {
		for _, doc := range []companydocs.DocumentType{"AD", "CD"} {
			wg.Go(func() {
				_, err := s.CreateOrder(ctx, acct, request(fx.live[i], doc, "subscription-basic"), "")
				count(err)
			})
		}
		wg.Go(func() { count(s.AddCredits(acct, -1)) })
	}
	wg.Wait()
	a, err := s.Account(acct)
	if err != nil || a.Credits != 0 || codes[""] != n || codes[companydocs.EINSUFFICIENTFUNDS] != 2*n || len(codes) != 2 {
		t.Errorf("%d credits met %d debits: %v, balance %+v (%v); want %d done, %d insufficient_credits, balance 0", n, 3*n, codes, a, err, n, 2*n)
	}
}

// TestSmallestDebitRefused: a debit of the smallest int64, whose
// negation overflows, is refused like any debit past the balance, and
// the balance stays. A store that checked "balance < -n" itself let it
// through and wrapped the balance around.
func TestSmallestDebitRefused(t *testing.T) { forEachStore(t, testSmallestDebitRefused) }

func testSmallestDebitRefused(t *testing.T) {
	s, _, acct, _ := lifecycleService(t)
	wantCode(t, s.AddCredits(acct, math.MinInt64), companydocs.EINSUFFICIENTFUNDS)
	wantCode(t, s.AddCredits(acct, math.MaxInt64), companydocs.EVALIDATION)
	if a, err := s.Account(acct); err != nil || a.Credits != 5 {
		t.Errorf("balance after the refused changes %+v (%v), want 5", a, err)
	}
}

// TestTerminalOrderFreesOnlyItsOwnSlot: an order that ends frees its
// open-order slot only if it holds it. Order b is stored in the slot that
// order a holds without claiming it (as orders stored before slots
// existed are); cancelling b leaves a's claim, so the same order again is
// still duplicate_order with a, until a ends too.
func TestTerminalOrderFreesOnlyItsOwnSlot(t *testing.T) {
	forEachStore(t, testTerminalOrderFreesOnlyItsOwnSlot)
}

func testTerminalOrderFreesOnlyItsOwnSlot(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	req := request(fx.live[0], "AD", "ad-single")
	a, err := s.CreateOrder(ctx, acct, req, "")
	if err != nil {
		t.Fatal(err)
	}
	var b string
	update(t, s.store, func(tx Tx) error {
		rec, err := tx.Order(a.ID)
		if err != nil {
			return err
		}
		unclaimed := *rec
		unclaimed.Order.ID = s.Orders.ids.next()
		b = unclaimed.Order.ID
		return tx.InsertOrder(&unclaimed)
	})
	mustAct(t, s, op, b, ActionCancel, "")
	if e := wantCode(t, createErr(s, acct, req), companydocs.EDUPLICATEORDER); e.Order == nil || e.Order.ID != a.ID {
		t.Errorf("after the unclaimed order ended, the same order again names %+v, want %s", e.Order, a.ID)
	}
	mustAct(t, s, op, a.ID, ActionCancel, "")
	if err := createErr(s, acct, req); err != nil {
		t.Errorf("after the holder ended, the same order again: %v", err)
	}
}

func createErr(s *service, acct string, req companydocs.OrderRequest) error {
	_, err := s.CreateOrder(ctx, acct, req, "")
	return err
}
