package follow

import (
	"math"
	"net/http"
	"testing"
	"time"

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
func TestRateLimitSharedByTwoServedNodes(t *testing.T) {
	const rate, burst, seconds, interval = 10, 20, 10, time.Second
	f := e2e.NewFollowSetup(t)
	gen := f.Publish(t, 300)
	limits := []string{"--search-rate", "10", "--search-burst", "20", "--follow-interval", interval.String()}
	var nodes []*e2e.TestServer
	for _, name := range []string{"a", "b"} {
		n := e2e.StartServer(t, t.TempDir(), append([]string{"--store", f.Store, "--index-source", f.Source, "--node-name", name}, limits...)...)
		e2e.WaitServing(t, n, gen)
		nodes = append(nodes, n)
	}
	f.WaitReported(t, gen, "a", "b")
	// each node counts the other at its next heartbeat, within one
	// interval; three make sure on a loaded machine, and let the buckets
	// fill to the shared burst
	time.Sleep(3 * interval)

	granted, refused := 0, 0
	tick := time.NewTicker(time.Second / (4 * rate))
	defer tick.Stop()
	began := time.Now()
	for i := 0; i < 4*rate*seconds; i++ {
		<-tick.C
		status, body, _ := nodes[i%2].Do(t, "POST", "/api/v1/documents/companies/search/", `{"query":"Bau GmbH"}`)
		switch status {
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
	allowed := int(math.Ceil(rate * took.Seconds()))
	t.Logf("two nodes granted %d of %d searches in %s (rate %d/s, burst %d)", granted, granted+refused, took.Round(time.Millisecond), rate, burst)
	if granted > allowed+burst {
		t.Errorf("two nodes granted %d searches in %s: more than the rate's %d plus the burst %d", granted, took.Round(time.Millisecond), allowed, burst)
	}
	if least := 2 * rate * seconds / 3; granted < least {
		t.Errorf("two nodes granted only %d searches in %s: fewer than two thirds of the rate's %d", granted, took.Round(time.Millisecond), rate*seconds)
	}
}
