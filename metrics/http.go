package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTP holds the collectors of the HTTP layer: requests, their durations,
// error answers, order creations by outcome, rate-limited searches,
// refused connections, search batches and reconciliation work. It is what
// httpapi reports to (httpapi.Metrics, which it declares itself) and what
// it serves at /metrics: the whole registry, the other collectors of
// Registry included. Every method is safe on a nil *HTTP, which records
// nothing.
type HTTP struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	errors      *prometheus.CounterVec
	orders      *prometheus.CounterVec
	rateLimited prometheus.Counter
	connRefused prometheus.Counter
	batchSizes  prometheus.Histogram
	batchItems  *prometheus.CounterVec
	batchCharge *prometheus.CounterVec
	batchRefuse *prometheus.CounterVec
	reconcile   *prometheus.CounterVec

	page http.Handler
}

// newHTTP registers the HTTP collectors on reg and serves reg.
func newHTTP(reg *prometheus.Registry) *HTTP {
	m := &HTTP{}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_requests_total",
		Help: "HTTP requests by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "http_request_duration_seconds",
		Help:    "Time from the request's arrival to its response, by route pattern, method and status.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"route", "method", "status"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_errors_total",
		Help: "Error responses by route pattern and error code.",
	}, []string{"route", "code"})
	m.orders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "orders_total",
		Help: "Order creation attempts by outcome (created, rejected) and error code (empty when created).",
	}, []string{"outcome", "code"})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "search_rate_limited_total",
		Help: "Searches rejected with rate_limited.",
	})
	m.connRefused = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "http_connections_refused_total",
		Help: "Connections answered 503 and closed because the server or the client address held the most connections allowed.",
	})
	m.registerBatches()
	reg.MustRegister(m.requests, m.duration, m.errors, m.orders, m.rateLimited, m.connRefused, m.batchSizes, m.batchItems, m.batchCharge, m.batchRefuse, m.reconcile)
	m.page = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	})
	return m
}

// registerBatches makes the collectors of search batches and
// reconciliation work.
func (m *HTTP) registerBatches() {
	m.batchSizes = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: namespace, Name: "search_batch_size",
		Help:    "Queries per answered search batch (POST /api/v1/documents/companies/search/batch).",
		Buckets: []float64{1, 10, 50, 100, 250, 500, 1000},
	})
	m.batchItems = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "search_batch_items_total",
		Help: "Queries of answered search batches by outcome: answered, or the error code of the item (invalid_query, service_unavailable ...).",
	}, []string{"outcome"})
	m.batchCharge = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "search_batch_charged_total",
		Help: "Queries of answered search batches by whether they were charged to the search budget: not for an error of the service's own (service_unavailable, internal), nor twice under one Idempotency-Key.",
	}, []string{"charged"})
	m.batchRefuse = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "batches_refused_total",
		Help: "Search batches and reconciliation query batches refused before their body was read: the client address had one being resolved (reason client, 429), or the node as many as --batches-in-flight (reason node, 503).",
	}, []string{"reason"})
	m.reconcile = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "reconcile_total",
		Help: "Reconciliation service (/api/v1/reconcile) work by kind: queries by outcome (match, candidates, none, invalid_query), and manifest, suggest, preview and extend (entities extended).",
	}, []string{"kind"})
}

// ServeHTTP serves the registry in the Prometheus text format (/metrics).
func (m *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m == nil {
		http.NotFound(w, r)
		return
	}
	m.page.ServeHTTP(w, r)
}

// ObserveRequest records one answered request by route pattern, method
// and status; code is the error code of an error response, empty
// otherwise.
func (m *HTTP) ObserveRequest(route, method string, status int, code string, elapsed time.Duration) {
	if m == nil {
		return
	}
	st := strconv.Itoa(status)
	m.requests.WithLabelValues(route, method, st).Inc()
	m.duration.WithLabelValues(route, method, st).Observe(elapsed.Seconds())
	if code != "" {
		m.errors.WithLabelValues(route, code).Inc()
	}
}

// ObserveOrderCreation counts an order creation attempt by outcome
// (created, rejected) and error code (empty when created).
func (m *HTTP) ObserveOrderCreation(outcome, code string) {
	if m == nil {
		return
	}
	m.orders.WithLabelValues(outcome, code).Inc()
}

// ObserveRateLimited counts a search answered rate_limited.
func (m *HTTP) ObserveRateLimited() {
	if m == nil {
		return
	}
	m.rateLimited.Inc()
}

// ObserveConnRefused counts a connection refused over a cap.
func (m *HTTP) ObserveConnRefused() {
	if m == nil {
		return
	}
	m.connRefused.Inc()
}

// ObserveBatch records an answered batch: its size, each item's outcome
// (answered, or its error code) and how many items were charged.
func (m *HTTP) ObserveBatch(size int, outcomes map[string]int, charged int) {
	if m == nil {
		return
	}
	m.batchSizes.Observe(float64(size))
	for outcome, n := range outcomes {
		m.batchItems.WithLabelValues(outcome).Add(float64(n))
	}
	m.batchCharge.WithLabelValues("true").Add(float64(charged))
	m.batchCharge.WithLabelValues("false").Add(float64(size - charged))
}

// ObserveBatchRefused counts a batch refused for want of a slot, by the
// bound that was full (client, node).
func (m *HTTP) ObserveBatchRefused(reason string) {
	if m == nil {
		return
	}
	m.batchRefuse.WithLabelValues(reason).Inc()
}

// ObserveReconcile counts n of a kind of reconciliation work.
func (m *HTTP) ObserveReconcile(kind string, n int) {
	if m == nil {
		return
	}
	m.reconcile.WithLabelValues(kind).Add(float64(n))
}
