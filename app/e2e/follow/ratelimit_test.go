package follow

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"companydocs/data"
	"companydocs/internal/e2e"
)

// TestRateLimitSharedByTwoServedNodes runs two nodes that follow one
// published index over one metastore, each a served HTTP listener on
// 127.0.0.1 with the same search rate and burst, and sends one client's
// searches to them in turn, four times faster than the rate, for ten
// seconds: together they grant at most the rate plus the burst
// (docs/operations.md, "Rate limits, shared by the live nodes"; its margin,
// (N+1)/N for one follow interval after a node joins, is waited out), and
// at least two thirds of it (one node's share alone would be half).
// Without the share each node would grant the whole rate: twice as much.
// Both the address's budget (anonymous searches) and a signed-in
// account's (its plan's search_rate, spent by search batches) are held.
func TestRateLimitSharedByTwoServedNodes(t *testing.T) {
	const rate, burst, interval = 10, 20, time.Second
	f := e2e.NewFollowSetup(t)
	gen := f.Publish(t, 300)
	args := []string{"--store", f.Store, "--index-source", f.Source, "--follow-interval", interval.String(),
		"--search-rate", "10", "--search-burst", "20", "--plans", plansAtSearchRate(t, rate)}
	var nodes []*e2e.TestServer
	for _, name := range []string{"a", "b"} {
		n := e2e.StartServer(t, t.TempDir(), append(args, "--node-name", name)...)
		e2e.WaitServing(t, n, gen)
		nodes = append(nodes, n)
	}
	f.WaitReported(t, gen, "a", "b")
	// each node counts the other at its next heartbeat, within one
	// interval; three make sure on a loaded machine, and let the buckets
	// fill to the shared burst
	time.Sleep(3 * interval)

	t.Run("address", func(t *testing.T) {
		checkSharedRate(t, nodes, rate, burst, func(n *e2e.TestServer) (int, []byte) {
			status, body, _ := n.Do(t, "POST", "/api/v1/documents/companies/search/", `{"query":"Bau GmbH"}`)
			return status, body
		})
	})
	t.Run("account", func(t *testing.T) {
		token := nodes[0].Session(t, "rate-client", 0) // a session of the shared store: both nodes know it
		checkSharedRate(t, nodes, rate, 2*rate, func(n *e2e.TestServer) (int, []byte) {
			status, body, _ := n.Do(t, "POST", "/api/v1/documents/companies/search/batch", `{"queries":[{"query":"Bau GmbH"}]}`, "Authorization", "Bearer "+token)
			return status, body
		})
	})
}

// checkSharedRate sends 40 searches a second for ten seconds, to the
// nodes in turn, and checks that they granted at most the rate over the
// time taken plus the burst, and the documented margin (a node that
// missed the other's heartbeat for one follow interval of a second grants
// its whole rate then: at most one second's rate more), and at least two
// thirds of the rate. Without the share they grant twice the rate.
func checkSharedRate(t *testing.T, nodes []*e2e.TestServer, rate, burst int, search func(*e2e.TestServer) (int, []byte)) {
	const seconds = 10
	granted, refused := 0, 0
	tick := time.NewTicker(time.Second / time.Duration(4*rate))
	defer tick.Stop()
	began := time.Now()
	for i := 0; i < 4*rate*seconds; i++ {
		<-tick.C
		switch status, body := search(nodes[i%2]); status {
		case http.StatusOK:
			granted++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("search %d on node %d: %d %s", i, i%2, status, body)
		}
	}
	// a loaded machine may take longer than planned; the rate holds over
	// the time the searches took
	took := time.Since(began)
	allowed := int(math.Ceil(float64(rate) * took.Seconds()))
	t.Logf("two nodes granted %d of %d searches in %s (rate %d/s, burst %d)", granted, granted+refused, took.Round(time.Millisecond), rate, burst)
	if margin := rate; granted > allowed+burst+margin {
		t.Errorf("two nodes granted %d searches in %s: more than the rate's %d plus the burst %d and the margin %d", granted, took.Round(time.Millisecond), allowed, burst, margin)
	}
	if least := 2 * rate * seconds / 3; granted < least {
		t.Errorf("two nodes granted only %d searches in %s: fewer than two thirds of the rate's %d", granted, took.Round(time.Millisecond), rate*seconds)
	}
}

// plansAtSearchRate writes the embedded example plans with every
// search_rate set to rate, and returns the file's path.
func plansAtSearchRate(t *testing.T, rate int) string {
	t.Helper()
	var plans map[string]any
	if err := json.Unmarshal(data.Plans, &plans); err != nil {
		t.Fatal(err)
	}
	for _, p := range plans["plans"].([]any) {
		if p := p.(map[string]any); p["search_rate"] != nil {
			p["search_rate"] = rate
		}
	}
	raw, err := json.Marshal(plans)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
