package orders

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
)

// eventReceiver is a webhook endpoint on 127.0.0.1 that records the
// distinct event ids it received by type and order.
type eventReceiver struct {
	URL   string
	mu    sync.Mutex
	ids   map[string]map[string]bool      // type + " " + order id -> event ids
	steps map[string]companydocs.NextStep // type + " " + order id -> the order's next step in the payload
}

func startEventReceiver(t *testing.T) *eventReceiver {
	r := &eventReceiver{ids: map[string]map[string]bool{}, steps: map[string]companydocs.NextStep{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body struct {
			Type string
			Data struct {
				ID       string
				NextStep companydocs.NextStep `json:"next_step"`
			}
		}
		raw, _ := io.ReadAll(req.Body)
		if json.Unmarshal(raw, &body) == nil {
			k := body.Type + " " + body.Data.ID
			r.mu.Lock()
			if r.ids[k] == nil {
				r.ids[k] = map[string]bool{}
			}
			r.ids[k][req.Header.Get("webhook-id")] = true
			r.steps[k] = body.Data.NextStep
			r.mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// events counts the distinct events of typ about order.
func (r *eventReceiver) events(typ, order string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids[typ+" "+order])
}

// TestStripeEventOnTwoNodes delivers one signed checkout.session.completed
// 50 times to each of two nodes on one PostgreSQL database, all at once:
// every delivery is answered 200, the order is paid once, with one
// history entry and one order.paid event, and the nodes count one applied
// event between them.
func TestStripeEventOnTwoNodes(t *testing.T) {
	_, url := e2e.StartTestCluster(t)
	dirA := t.TempDir()
	e2e.MustBuild(t, dirA, e2e.TwoNodesRecords, e2e.SampleFile(t))
	dirB := filepath.Join(t.TempDir(), "b")
	if err := os.CopyFS(dirB, os.DirFS(dirA)); err != nil {
		t.Fatal(err)
	}
	profile := e2e.CrashProfiles(t, e2e.TwoNodesRecords)[0]
	front := e2e.StartStripeFront(t, 0)
	_, flags := e2e.StripeEnv(t, front)
	accounts := sharedAccounts(t, url)
	a := e2e.StartCrashServer(t, dirA, append([]string{"--store", url, "--store-pool-size", "8"}, flags...)...)
	defer a.Kill(t)
	b := e2e.StartCrashServer(t, dirB, append([]string{"--store", url, "--store-pool-size", "8"}, flags...)...)
	defer b.Kill(t)
	token := e2e.TwoNodeAccount(t, accounts, a, "payer", companydocs.RoleClient, 0)
	receiver := startEventReceiver(t)
	if status, raw := a.Call(t, "POST", "/api/v1/webhooks", "application/json", token, `{"url":"`+receiver.URL+`/hook"}`, ""); status != http.StatusCreated {
		t.Fatalf("register the webhook: %d %s", status, raw)
	}
	var o companydocs.Order
	if status := a.Post(t, "/api/v1/documents/orders", token, e2e.OrderJSON(profile, "AD", "stripe-single"), "", &o); status != http.StatusCreated || o.Payment == nil {
		t.Fatalf("create on a Stripe plan: %d %+v", status, o)
	}

	paid := e2e.CheckoutEvent(o, "checkout.session.completed", "pi_test_two_nodes")
	const perNode = 50
	outcomes := make([]string, 2*perNode)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range outcomes {
		node := []*e2e.CrashServer{a, b}[i%2]
		wg.Go(func() {
			<-start
			status, raw, err := node.PostStripeEvent(paid)
			var answer struct{ Outcome string }
			if err != nil || status != 200 || json.Unmarshal(raw, &answer) != nil {
				t.Errorf("delivery %d: %d %s %v", i, status, raw, err)
			}
			outcomes[i] = answer.Outcome
		})
	}
	close(start)
	wg.Wait()
	counts := map[string]int{}
	for _, oc := range outcomes {
		counts[oc]++
	}
	t.Logf("outcomes of %d deliveries: %v", 2*perNode, counts)
	if counts["applied"] != 1 || counts["applied"]+counts["replayed"]+counts["late"] != 2*perNode {
		t.Errorf("outcomes of %d deliveries: %v, want one applied and the rest replayed or late", 2*perNode, counts)
	}

	var got companydocs.Order
	if status, raw := b.Call(t, "GET", "/api/v1/documents/orders/"+o.ID+"/", "", token, "", ""); status != 200 || json.Unmarshal(raw, &got) != nil {
		t.Fatalf("read the order on B: %d %s", status, raw)
	}
	paidEntries := 0
	for _, h := range got.History {
		if h.Status == "PAID" {
			paidEntries++
		}
	}
	if got.Status != "PAID" || len(got.History) != 2 || paidEntries != 1 || got.Payment.PaymentID != "pi_test_two_nodes" {
		t.Errorf("after the deliveries: %s with history %+v", got.Status, got.History)
	}
	e2e.WaitFor(t, "the order.paid webhook", func() bool { return receiver.events("order.paid", o.ID) > 0 })
	time.Sleep(500 * time.Millisecond) // a second event would be delivered by now (retry base 20 ms)
	if n := receiver.events("order.paid", o.ID); n != 1 {
		t.Errorf("%d distinct order.paid events, want 1", n)
	}
	receiver.mu.Lock()
	created := receiver.steps["order.created "+o.ID]
	receiver.mu.Unlock()
	if created.Kind != "pay" || created.Params == nil || created.Params.PaymentURL != o.Payment.URL || created.Params.ExpiresAt == nil {
		t.Errorf("the order.created webhook's next step: %+v, want pay with the payment page", created)
	}
	applied := 0.0
	for _, node := range []*e2e.CrashServer{a, b} {
		applied += metricValue(t, node, `companydocs_payment_events_total{outcome="applied",provider="stripe"}`)
	}
	if applied != 1 {
		t.Errorf("the nodes count %v applied events, want 1", applied)
	}
}

// metricValue reads one sample of node's /metrics by its exact name and
// labels (0 when absent).
func metricValue(t *testing.T, node *e2e.CrashServer, sample string) float64 {
	t.Helper()
	status, raw := node.Call(t, "GET", "/metrics", "", "", "", "")
	if status != 200 {
		t.Fatalf("/metrics: %d", status)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// sharedAccounts opens the accounts of the PostgreSQL database at url,
// which the test's nodes share, until the test ends.
func sharedAccounts(t *testing.T, url string) *ordering.Accounts {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	accounts := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	t.Cleanup(func() {
		accounts.Close()
		db.Close()
	})
	return accounts
}
