package crash

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/internal/e2e"
	"companydocs/ordering"
)

func newCrashJournal() *e2e.CrashJournal {
	return &e2e.CrashJournal{Acked: map[string]e2e.CrashAttempt{}, KeyOrder: map[string]string{},
		Orders: map[string]*e2e.CrashOrder{}, Uploads: map[string]string{}}
}

// crashLoad retries the pending keyed attempts, then sends new attempts
// and transitions, each to a random one of nodes, from crashWorkers
// clients until burst has passed, and SIGKILLs nodes[victim] at that
// moment, with requests in flight (none when victim is -1). outage, if
// set, runs meanwhile.
func crashLoad(tb testing.TB, j *e2e.CrashJournal, nodes []*e2e.CrashServer, victim int, tokens map[string]string, profiles []string, seed uint64, burst time.Duration, outage func()) {
	tb.Helper()
	j.Mu.Lock()
	pending := j.Pending
	j.Pending = nil
	j.Mu.Unlock()
	for i, a := range pending {
		j.Mu.Lock()
		j.Retried++
		j.Mu.Unlock()
		nodes[i%len(nodes)].Attempt(tb, j, tokens, a)
	}
	// Also repeat some keys that already have their order: they must
	// answer duplicate_order with that same order.
	for i, a := range j.SomeAcked(5) {
		nodes[i%len(nodes)].Attempt(tb, j, tokens, a)
	}
	if burst == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), burst)
	defer cancel()
	var wg sync.WaitGroup
	if outage != nil {
		wg.Go(outage)
	}
	for w := range e2e.CrashWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < 10_000 && ctx.Err() == nil; i++ {
				s := nodes[0]
				if len(nodes) > 1 {
					s = nodes[rng.IntN(len(nodes))]
				}
				if rng.IntN(5) < 2 || !s.Move(tb, j, tokens, rng) {
					s.Attempt(tb, j, tokens, newCrashAttempt(rng, profiles, seed, w, i))
				}
			}
		})
	}
	<-ctx.Done()
	if victim >= 0 {
		nodes[victim].Cmd.Process.Signal(syscall.SIGKILL) // requests are in flight
	}
	wg.Wait()
}

func newCrashAttempt(rng *rand.Rand, profiles []string, seed uint64, worker, i int) e2e.CrashAttempt {
	account := fmt.Sprintf("crash-%d", rng.IntN(e2e.CrashAccounts))
	p := e2e.CrashPlans[rng.IntN(len(e2e.CrashPlans))]
	a := e2e.CrashAttempt{Account: account, Body: e2e.OrderJSON(profiles[rng.IntN(len(profiles))], p.Doc, p.Plan)}
	if rng.IntN(2) == 0 {
		a.IdemKey = fmt.Sprintf("k-%x-%d-%d", seed, worker, i)
	}
	return a
}

// crashCheck opens the order database left by a killed server and checks
// it against itself and against what the clients were told. It returns
// the stored orders and refreshes the journal's view of them.
func crashCheck(tb testing.TB, dir string, j *e2e.CrashJournal) map[string]*companydocs.Order {
	tb.Helper()
	svc, db := e2e.OpenOrderService(tb, dir, ordering.Options{})
	defer svc.Close()
	return crashCheckStore(tb, svc.Accounts, svc.Orders, db.Check, bbolt.DocumentsIn(filepath.Join(dir, ordering.DocumentsDir)).Open, j)
}

// crashCheckStore is crashCheck on a store opened by the caller, which
// no server changes meanwhile; check is the store's own check.
func crashCheckStore(tb testing.TB, svc *ordering.Accounts, orders *ordering.Orders, check func() error, documents ordering.DocumentReader, j *e2e.CrashJournal) map[string]*companydocs.Order {
	tb.Helper()
	if err := check(); err != nil {
		tb.Errorf("consistency check after kill: %v", err)
	}
	accounts, err := svc.All()
	if err != nil {
		tb.Fatal(err)
	}
	stored := map[string]*companydocs.Order{}
	byKey := map[string]string{}
	open := map[string]string{}
	for _, acct := range accounts {
		var charged, refunded int64
		var list []*companydocs.Order
		if acct.Role != companydocs.RoleOperator {
			list = allOrders(tb, orders, acct.Name)
		}
		for _, o := range list {
			if _, dup := stored[o.ID]; dup {
				tb.Errorf("order %s is listed twice", o.ID)
			}
			o.Account = acct.Name
			stored[o.ID] = o
			charged += o.CreditsCharged
			refunded += o.CreditsRefunded
			checkHistory(tb, o)
			checkDocument(tb, documents, o)
			if o.IdempotencyKey != "" {
				if prev, ok := byKey[o.IdempotencyKey]; ok {
					tb.Errorf("Idempotency-Key %s made two orders: %s and %s", o.IdempotencyKey, prev, o.ID)
				}
				byKey[o.IdempotencyKey] = o.ID
			}
			if companydocs.TerminalStatus(o.Status) {
				continue
			}
			combo := acct.Name + " " + o.CompanyProfileID + " " + string(o.DocumentType) + " " + o.PlanID
			if prev, ok := open[combo]; ok {
				tb.Errorf("two open orders %s and %s for %s", prev, o.ID, combo)
			}
			open[combo] = o.ID
		}
		if start := startingCredits(acct.Name); acct.Credits != start-charged+refunded || acct.Credits < 0 {
			tb.Errorf("account %s has %d credits; it started with %d, its orders charged %d and refunded %d", acct.Name, acct.Credits, start, charged, refunded)
		}
	}
	j.Mu.Lock()
	defer j.Mu.Unlock()
	checkAcknowledged(tb, j, stored, byKey)
	j.Refresh(stored)
	return stored
}

func startingCredits(account string) int64 {
	if account == e2e.CrashOperator {
		return 0
	}
	return e2e.CrashCredits
}

// checkAcknowledged compares the stored orders with the answers the
// clients got: every 201 order, every key's order, every 2xx transition
// and every acknowledged upload.
func checkAcknowledged(tb testing.TB, j *e2e.CrashJournal, stored map[string]*companydocs.Order, byKey map[string]string) {
	tb.Helper()
	for id, a := range j.Acked {
		o, ok := stored[id]
		if !ok {
			tb.Errorf("order %s was acknowledged with 201 but is not stored", id)
			continue
		}
		if o.Account != a.Account || o.IdempotencyKey != a.IdemKey {
			tb.Errorf("order %s: stored for %s key %q, acknowledged for %s key %q", id, o.Account, o.IdempotencyKey, a.Account, a.IdemKey)
		}
	}
	for k, id := range j.KeyOrder {
		if got, ok := byKey[k]; ok && got != id {
			tb.Errorf("Idempotency-Key %s: stored order %s, the server answered %s", k, got, id)
		}
	}
	for _, tr := range j.Transitions {
		o, ok := stored[tr.Order]
		if !ok || !slices.ContainsFunc(o.History, func(h companydocs.HistoryEntry) bool { return h.Status == tr.Status && h.Actor == tr.Actor }) {
			tb.Errorf("the transition of order %s to %s by the %s was acknowledged but is not in its history", tr.Order, tr.Status, tr.Actor)
		}
	}
	for id, sha := range j.Uploads {
		if o := stored[id]; o == nil || o.Document == nil || o.Document.SHA256 != sha {
			tb.Errorf("order %s: the upload of %s was acknowledged, the order shows %+v", id, sha, o)
		}
	}
}

// checkHistory: the history is a path through the transition table that
// ends in the order's status, and credits were refunded exactly when the
// order ended cancelled or failed, and then all of them.
func checkHistory(tb testing.TB, o *companydocs.Order) {
	tb.Helper()
	h := o.History
	if len(h) == 0 || h[0].Status != companydocs.OrderStatusPreviewReady || h[len(h)-1].Status != o.Status {
		tb.Errorf("order %s in %s has the history %+v", o.ID, o.Status, h)
		return
	}
	for i := 1; i < len(h); i++ {
		if !companydocs.CanTransition(h[i-1].Status, h[i].Status, h[i].Actor) {
			tb.Errorf("order %s: %s -> %s by the %s is not a transition", o.ID, h[i-1].Status, h[i].Status, h[i].Actor)
		}
	}
	want := int64(0)
	if o.Status == companydocs.OrderStatusCancelled || o.Status == companydocs.OrderStatusFailed {
		want = o.CreditsCharged
	}
	if o.CreditsRefunded != want {
		tb.Errorf("order %s in %s charged %d credits and refunded %d, want %d", o.ID, o.Status, o.CreditsCharged, o.CreditsRefunded, want)
	}
}

// checkDocument: a DELIVERED order's document is stored under its
// hash, with that hash and size; no other order has a document.
func checkDocument(tb testing.TB, documents ordering.DocumentReader, o *companydocs.Order) {
	tb.Helper()
	if o.Status != companydocs.OrderStatusDelivered {
		if o.Document != nil {
			tb.Errorf("order %s in %s has a document", o.ID, o.Status)
		}
		return
	}
	if o.Document == nil || len(o.Document.SHA256) != 64 {
		tb.Errorf("order %s is DELIVERED without a document: %+v", o.ID, o.Document)
		return
	}
	sha := o.Document.SHA256
	r, err := documents(context.Background(), sha)
	if err != nil {
		tb.Errorf("order %s points at a missing document: %v", o.ID, err)
		return
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		tb.Errorf("order %s: reading its document: %v", o.ID, err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != sha || int64(len(b)) != o.Document.Size {
		tb.Errorf("order %s: the document file of %s has %d bytes and the SHA-256 %x, the order says %d bytes", o.ID, sha, len(b), sum, o.Document.Size)
	}
}

// allOrders pages through an account's orders.
func allOrders(tb testing.TB, svc *ordering.Orders, account string) []*companydocs.Order {
	tb.Helper()
	var all []*companydocs.Order
	cursor := ""
	for {
		page, next, err := svc.List(context.Background(), account, "", cursor, companydocs.MaxOrdersPage)
		if err != nil {
			tb.Fatalf("list orders of %s: %v", account, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}
