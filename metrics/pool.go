package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PoolStats are the figures of a database connection pool, read at each
// scrape (postgres.PoolStats has the same fields and converts).
type PoolStats struct {
	Acquired, Idle, Constructing, Total, Max  int64
	Acquires, EmptyAcquires, CanceledAcquires int64
	AcquireWait                               time.Duration
	Retries                                   int64
}

// RegisterPool adds the collectors of the order store's connection pool;
// stats is called at each scrape.
func (m *Registry) RegisterPool(stats func() PoolStats) {
	if m == nil {
		return
	}
	m.Prometheus.MustRegister(&poolCollector{stats: stats})
}

var (
	poolConns = prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", "connections"),
		"Connections of the order store's pool by state (acquired, idle, constructing) and its size (max).", []string{"state"}, nil)
	poolAcquires = prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", "acquires_total"),
		"Connections handed out by the pool: immediately, after waiting for one (waited), or given up while waiting (canceled).", []string{"outcome"}, nil)
	poolWait = prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", "acquire_seconds_total"),
		"Time spent acquiring connections from the pool.", nil, nil)
	poolRetries = prometheus.NewDesc(prometheus.BuildFQName(namespace, "db", "transaction_retries_total"),
		"Transactions run again after a serialization failure or a deadlock.", nil, nil)
)

// poolCollector reads the pool's figures at each scrape, so that they
// need no hook on every acquire.
type poolCollector struct {
	stats func() PoolStats
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- poolConns
	ch <- poolAcquires
	ch <- poolWait
	ch <- poolRetries
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for state, n := range map[string]int64{"acquired": s.Acquired, "idle": s.Idle, "constructing": s.Constructing, "max": s.Max} {
		ch <- prometheus.MustNewConstMetric(poolConns, prometheus.GaugeValue, float64(n), state)
	}
	immediate := s.Acquires - s.EmptyAcquires
	for outcome, n := range map[string]int64{"immediate": immediate, "waited": s.EmptyAcquires, "canceled": s.CanceledAcquires} {
		ch <- prometheus.MustNewConstMetric(poolAcquires, prometheus.CounterValue, float64(n), outcome)
	}
	ch <- prometheus.MustNewConstMetric(poolWait, prometheus.CounterValue, s.AcquireWait.Seconds())
	ch <- prometheus.MustNewConstMetric(poolRetries, prometheus.CounterValue, float64(s.Retries))
}
