package follow

import (
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"
)

// TestFollowReportsTheSwapAtOnce: a node that swaps in a newly installed
// generation reports it to the metastore at once, not at its next follow
// interval: companydocs nodes (and the behind gauge, set by the same
// heartbeat) stops saying the node serves the old generation, one behind,
// within seconds although the interval is a minute.
func TestFollowReportsTheSwapAtOnce(t *testing.T) {
	f := e2e.NewFollowSetup(t)
	first := f.Publish(t, 300)
	node := e2e.StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "1m", "--node-name", "n1")
	e2e.WaitServing(t, node, first)
	f.WaitReported(t, first, "n1")

	second := f.Publish(t, 400)
	node.Follower.WakeUp() // as a rollout's gate does; the metastore's notification wakes it too
	e2e.WaitServing(t, node, second)
	began := time.Now()
	f.WaitReported(t, second, "n1")
	t.Logf("reported %s %s after the swap", second, time.Since(began).Round(time.Millisecond))
	if _, page, _ := node.Do(t, "GET", "/metrics", ""); !strings.Contains(string(page), "\ncompanydocs_index_generations_behind 0\n") {
		t.Errorf("the behind gauge is not 0 once the swap is reported")
	}
}
