package httpapi

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"companydocs"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsNamespace prefixes every metric of the service.
const metricsNamespace = "companydocs"

// Route labels for requests that matched no route, so that scanners probing
// random paths cannot grow the label set.
const unmatchedRoute = "unmatched"

// routeCreateOrder is the route pattern whose outcomes count as orders.
const routeCreateOrder = "/api/v1/documents/orders"

// Metrics holds the Prometheus collectors of the service. They live on a
// private registry, so that two servers in one process (tests) never share
// counters. Every method is safe on a nil *Metrics, which records nothing.
type Metrics struct {
	// Registry holds the collectors below plus the Go runtime and process
	// collectors; /metrics serves it.
	Registry *prometheus.Registry

	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	errors      *prometheus.CounterVec
	searches    *prometheus.CounterVec
	orders      *prometheus.CounterVec
	rateLimited prometheus.Counter

	ordersByStatus *prometheus.GaugeVec
	transitions    *prometheus.CounterVec

	webhookDeliveries *prometheus.CounterVec
	outboxDepth       prometheus.Gauge
	outboxOldest      atomic.Int64 // unix nanoseconds of the oldest pending event, 0 when empty
	webhooksPending   prometheus.Gauge

	generation        *prometheus.GaugeVec
	generationProfile prometheus.Gauge
	generationCreated prometheus.Gauge
	swaps             prometheus.Counter
	rejected          *prometheus.CounterVec
	createdAt         atomic.Int64 // unix nanoseconds of the current generation

	ingestRecords prometheus.Gauge
	ingestRunning prometheus.Gauge

	handler fiber.Handler
}

// NewMetrics returns the collectors registered on a new private registry.
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "http_requests_total",
		Help: "HTTP requests by route pattern, method and status.",
	}, []string{"route", "method", "status"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: metricsNamespace, Name: "http_request_duration_seconds",
		Help:    "Time from the request's arrival to its response, by route pattern, method and status.",
		Buckets: []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"route", "method", "status"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "http_errors_total",
		Help: "Error responses by route pattern and error code.",
	}, []string{"route", "code"})
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "searches_total",
		Help: "Answered searches by how the query was read (lei, register_reference, text) and the confidence label of the top candidate (none when nothing was found).",
	}, []string{"kind", "top_label"})
	m.orders = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "orders_total",
		Help: "Order creation attempts by outcome (created, rejected) and error code (empty when created).",
	}, []string{"outcome", "code"})
	m.rateLimited = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "search_rate_limited_total",
		Help: "Searches rejected with rate_limited.",
	})
	m.ordersByStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "orders_by_status",
		Help: "Stored orders by status: counted at start, kept by every transition.",
	}, []string{"status"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "order_transitions_total",
		Help: "Committed order transitions by from status (empty for a creation), to status and actor.",
	}, []string{"from", "to", "actor"})
	m.Registry.MustRegister(m.ordersByStatus, m.transitions)
	m.registerWebhooks()
	m.registerGeneration()
	m.registerIngest()
	m.Registry.MustRegister(m.requests, m.duration, m.errors, m.searches, m.orders, m.rateLimited,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = adaptor.HTTPHandler(promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
	}))
	return m
}

func (m *Metrics) registerGeneration() {
	m.generation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "index_generation_info",
		Help: "The index generation being served (value 1, id as label).",
	}, []string{"generation"})
	m.generationProfile = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "index_profiles",
		Help: "Company profiles in the index generation being served.",
	})
	m.generationCreated = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "index_generation_created_timestamp_seconds",
		Help: "Unix time at which the generation being served was built.",
	})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "index_generation_age_seconds",
		Help: "Age of the index generation being served.",
	}, m.generationAge)
	m.swaps = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "index_swaps_total",
		Help: "Newly published index generations swapped in since start.",
	})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "index_generations_rejected_total",
		Help: "Index generations refused before serving, by reason (meta, version, files, structure, open); a generation retried for the same reason counts once.",
	}, []string{"reason"})
	m.Registry.MustRegister(m.generation, m.generationProfile, m.generationCreated, age, m.swaps, m.rejected)
}

func (m *Metrics) registerIngest() {
	m.ingestRecords = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "ingest_records",
		Help: "Records read so far by the latest ingest this process ran (serve ingests the embedded sample on an empty data directory; the ingest command is a process of its own).",
	})
	m.ingestRunning = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "ingest_running",
		Help: "1 while this process ingests, 0 otherwise.",
	})
	m.Registry.MustRegister(m.ingestRecords, m.ingestRunning)
}

func (m *Metrics) generationAge() float64 {
	ns := m.createdAt.Load()
	if ns == 0 {
		return 0
	}
	return time.Since(time.Unix(0, ns)).Seconds()
}

// SetGeneration records the generation being served.
func (m *Metrics) SetGeneration(id string, profiles int, createdAt time.Time) {
	if m == nil {
		return
	}
	m.generation.Reset()
	m.generation.WithLabelValues(id).Set(1)
	m.generationProfile.Set(float64(profiles))
	m.generationCreated.Set(float64(createdAt.UnixNano()) / 1e9)
	m.createdAt.Store(createdAt.UnixNano())
}

// ObserveSwap records that a newly published generation was swapped in.
func (m *Metrics) ObserveSwap(id string, profiles int, createdAt time.Time) {
	if m == nil {
		return
	}
	m.swaps.Inc()
	m.SetGeneration(id, profiles, createdAt)
}

// ObserveRejectedGeneration counts a generation refused before serving; it
// fits index.LiveOptions.OnReject.
func (m *Metrics) ObserveRejectedGeneration(_, reason string) {
	if m == nil {
		return
	}
	m.rejected.WithLabelValues(reason).Inc()
}

// ObserveSearch counts an answered search; it fits Server.OnSearch.
func (m *Metrics) ObserveSearch(res *resolver.Result) {
	if m == nil || res == nil {
		return
	}
	label := "none"
	if len(res.Candidates) > 0 {
		label = res.Candidates[0].ConfidenceLabel
	}
	m.searches.WithLabelValues(res.Understanding.Kind, label).Inc()
}

// ObserveRateLimited counts a rejected search; it fits Server.OnRateLimited.
func (m *Metrics) ObserveRateLimited() {
	if m == nil {
		return
	}
	m.rateLimited.Inc()
}

// IngestStarted marks the start of an ingest run by this process.
func (m *Metrics) IngestStarted() {
	if m != nil {
		m.ingestRunning.Set(1)
		m.ingestRecords.Set(0)
	}
}

// IngestProgress records the number of records the running ingest has read.
func (m *Metrics) IngestProgress(records int) {
	if m != nil {
		m.ingestRecords.Set(float64(records))
	}
}

// IngestFinished marks the end of an ingest run.
func (m *Metrics) IngestFinished() {
	if m != nil {
		m.ingestRunning.Set(0)
	}
}

// SetOrderCounts sets the orders-by-status gauge (at start).
func (m *Metrics) SetOrderCounts(counts map[string]int) {
	if m == nil {
		return
	}
	for _, st := range companydocs.OrderStatuses {
		m.ordersByStatus.WithLabelValues(st).Set(float64(counts[st]))
	}
}

// ObserveTransition records a committed creation (from "") or transition.
func (m *Metrics) ObserveTransition(from, to, actor string) {
	if m == nil {
		return
	}
	m.transitions.WithLabelValues(from, to, actor).Inc()
	if from != "" {
		m.ordersByStatus.WithLabelValues(from).Dec()
	}
	m.ordersByStatus.WithLabelValues(to).Inc()
}

// observeRequest records one answered request. code is the error code of an
// error response, empty otherwise.
func (m *Metrics) observeRequest(route, method string, status int, code string, elapsed time.Duration) {
	if m == nil {
		return
	}
	st := strconv.Itoa(status)
	m.requests.WithLabelValues(route, method, st).Inc()
	m.duration.WithLabelValues(route, method, st).Observe(elapsed.Seconds())
	if code != "" {
		m.errors.WithLabelValues(route, code).Inc()
	}
	if route == routeCreateOrder && method == fiber.MethodPost {
		switch {
		case status == http.StatusCreated:
			m.orders.WithLabelValues("created", "").Inc()
		case code != "":
			m.orders.WithLabelValues("rejected", code).Inc()
		}
	}
}

// handleMetrics serves the registry in the Prometheus text format.
func (s *Server) handleMetrics(c *fiber.Ctx) error {
	if s.Metrics == nil {
		return errMetricsOff()
	}
	return s.Metrics.handler(c)
}

func errMetricsOff() error {
	return companydocs.Errorf(companydocs.ENOTFOUND, "Metrics are not enabled on this server.")
}

func (m *Metrics) registerWebhooks() {
	m.webhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: metricsNamespace, Name: "webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (no retry left).",
	}, []string{"outcome"})
	for _, o := range []string{"delivered", "retry", "failed"} {
		m.webhookDeliveries.WithLabelValues(o)
	}
	m.outboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "outbox_events",
		Help: "Order events in the outbox, not yet fanned out to webhook deliveries.",
	})
	m.webhooksPending = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "webhook_deliveries_pending",
		Help: "Webhook deliveries neither delivered nor failed yet.",
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: metricsNamespace, Name: "outbox_oldest_event_age_seconds",
		Help: "Age of the oldest event in the outbox (0 when empty): the lag of webhook fan-out.",
	}, func() float64 {
		if ns := m.outboxOldest.Load(); ns != 0 {
			return time.Since(time.Unix(0, ns)).Seconds()
		}
		return 0
	})
	m.Registry.MustRegister(m.webhookDeliveries, m.outboxDepth, m.webhooksPending, oldest)
}

// ObserveWebhookDelivery counts one attempt by outcome (delivered, retry,
// failed).
func (m *Metrics) ObserveWebhookDelivery(outcome string) {
	if m == nil {
		return
	}
	m.webhookDeliveries.WithLabelValues(outcome).Inc()
}

// SetWebhookStats sets the outbox depth, its oldest event's time (zero
// when empty) and the pending deliveries.
func (m *Metrics) SetWebhookStats(outboxDepth int, oldest time.Time, pending int) {
	if m == nil {
		return
	}
	m.outboxDepth.Set(float64(outboxDepth))
	if oldest.IsZero() {
		m.outboxOldest.Store(0)
	} else {
		m.outboxOldest.Store(oldest.UnixNano())
	}
	m.webhooksPending.Set(float64(pending))
}
