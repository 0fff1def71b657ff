package app

import (
	"strings"
	"testing"
	"time"
)

// TestFollowReportsTheSwapAtOnce: a node that swaps in a newly installed
// generation reports it to the metastore at once, not at its next follow
// interval: companydocs nodes (and the behind gauge, set by the same
// heartbeat) stops saying the node serves the old generation, one behind,
// within seconds although the interval is a minute.
func TestFollowReportsTheSwapAtOnce(t *testing.T) {
	f := newFollowSetup(t)
	first := f.publish(t, 300)
	node := startServer(t, t.TempDir(), "--store", f.store, "--index-source", f.source, "--follow-interval", "1m", "--node-name", "n1")
	waitServing(t, node, first)
	f.waitReported(t, first, "n1")

	second := f.publish(t, 400)
	node.follower.WakeUp() // as a rollout's gate does; the interval would take a minute
	waitServing(t, node, second)
	began := time.Now()
	f.waitReported(t, second, "n1")
	t.Logf("reported %s %s after the swap", second, time.Since(began).Round(time.Millisecond))
	if _, page, _ := node.do(t, "GET", "/metrics", ""); !strings.Contains(string(page), "\ncompanydocs_index_generations_behind 0\n") {
		t.Errorf("the behind gauge is not 0 once the swap is reported")
	}
}
