package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestPoolCollectorReadsAtScrape: the pool's figures are read when the
// registry is scraped, each under its state or outcome.
func TestPoolCollectorReadsAtScrape(t *testing.T) {
	m := New()
	stats := PoolStats{Acquired: 3, Idle: 1, Total: 4, Max: 8, Acquires: 10, EmptyAcquires: 4, CanceledAcquires: 1, AcquireWait: 1500 * time.Millisecond, Retries: 2}
	m.RegisterPool(func() PoolStats { return stats })
	want := `
# HELP companydocs_db_pool_acquires_total Connections handed out by the pool: immediately, after waiting for one (waited), or given up while waiting (canceled).
# TYPE companydocs_db_pool_acquires_total counter
companydocs_db_pool_acquires_total{outcome="canceled"} 1
companydocs_db_pool_acquires_total{outcome="immediate"} 6
companydocs_db_pool_acquires_total{outcome="waited"} 4
# HELP companydocs_db_pool_acquire_seconds_total Time spent acquiring connections from the pool.
# TYPE companydocs_db_pool_acquire_seconds_total counter
companydocs_db_pool_acquire_seconds_total 1.5
# HELP companydocs_db_pool_connections Connections of the order store's pool by state (acquired, idle, constructing) and its size (max).
# TYPE companydocs_db_pool_connections gauge
companydocs_db_pool_connections{state="acquired"} 3
companydocs_db_pool_connections{state="constructing"} 0
companydocs_db_pool_connections{state="idle"} 1
companydocs_db_pool_connections{state="max"} 8
# HELP companydocs_db_transaction_retries_total Transactions run again after a serialization failure or a deadlock.
# TYPE companydocs_db_transaction_retries_total counter
companydocs_db_transaction_retries_total 2
`
	names := []string{"companydocs_db_pool_acquires_total", "companydocs_db_pool_acquire_seconds_total", "companydocs_db_pool_connections", "companydocs_db_transaction_retries_total"}
	if err := testutil.GatherAndCompare(m.Prometheus, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
}
