// Package metrics holds every Prometheus collector of the service, on
// one registry: the index generation being served and its swaps, the
// ingest, searches, orders and their transitions, the outbox and webhook
// deliveries, the document uploads and downloads in flight and refused,
// the watches and what their comparisons found, whether the PostgreSQL
// order store answers, the build being served, and HTTP's own (HTTP:
// requests, their durations, error answers, order creations, rate-limited
// searches, batches, reconciliation), which also serves the registry at
// /metrics.
// The packages they describe know nothing of it: cmd/companydocs feeds it
// from their hooks (index.LiveOptions, ordering.Options, the webhook
// dispatcher's callbacks, httpapi.Deps.OnSearch, OnTransfer and
// OnTransferRefused) and hands HTTP to httpapi as the httpapi.Metrics
// interface that httpapi declares.
package metrics

import (
	"sync/atomic"
	"time"

	"companydocs"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// namespace prefixes every metric of the service.
const namespace = companydocs.MetricsNamespace

// Registry holds the collectors on a private registry, so that two servers
// in one process (tests) never share counters. Every method is safe on a
// nil *Registry, which records nothing.
type Registry struct {
	// Prometheus holds the collectors below plus the Go runtime and
	// process collectors.
	Prometheus *prometheus.Registry
	// HTTP holds the HTTP layer's collectors on the same registry, and
	// serves all of it at /metrics.
	HTTP *HTTP

	searches *prometheus.CounterVec

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
	changedProfiles   prometheus.Gauge
	changedFields     *prometheus.GaugeVec
	createdAt         atomic.Int64 // unix nanoseconds of the current generation

	ingestRecords prometheus.Gauge
	ingestRunning prometheus.Gauge

	transfersInFlight *prometheus.GaugeVec
	transfersRefused  *prometheus.CounterVec

	watch    watchCollectors
	follow   followCollectors
	payments paymentCollectors

	buildInfo *prometheus.GaugeVec
}

// New returns the collectors registered on a new private registry.
func New() *Registry {
	m := &Registry{Prometheus: prometheus.NewRegistry()}
	m.searches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "searches_total",
		Help: "Answered searches by how the query was read (lei, register_reference, text; a pasted block of several lines as pasted_lei, pasted_register_reference, pasted_text) and the confidence label of the top candidate (none when nothing was found).",
	}, []string{"kind", "top_label"})
	m.ordersByStatus = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "orders_by_status",
		Help: "Stored orders by status: counted at start, kept by every transition.",
	}, []string{"status"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "order_transitions_total",
		Help: "Committed order transitions by from status (empty for a creation), to status and actor.",
	}, []string{"from", "to", "actor"})
	m.Prometheus.MustRegister(m.searches, m.ordersByStatus, m.transitions,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.registerWebhooks()
	m.registerPayments()
	m.registerGeneration()
	m.registerIngest()
	m.registerTransfers()
	m.registerWatches()
	m.registerFollow()
	m.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "The build being served (value 1): module version, VCS revision and Go release as labels.",
	}, []string{"version", "revision", "goversion"})
	m.Prometheus.MustRegister(m.buildInfo)
	m.HTTP = newHTTP(m.Prometheus)
	return m
}

// SetBuildInfo records the build being served; a later call replaces it.
func (m *Registry) SetBuildInfo(version, revision, goVersion string) {
	if m == nil {
		return
	}
	m.buildInfo.Reset()
	m.buildInfo.WithLabelValues(version, revision, goVersion).Set(1)
}

func (m *Registry) registerTransfers() {
	m.transfersInFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "document_transfers_in_flight",
		Help: "Document uploads (kind upload) and downloads (kind download) this node is reading or sending.",
	}, []string{"kind"})
	m.transfersRefused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "document_transfers_refused_total",
		Help: "Document uploads and downloads refused for want of a slot, by kind and by the bound that was full (node: 503, account: 429).",
	}, []string{"kind", "bound"})
	m.Prometheus.MustRegister(m.transfersInFlight, m.transfersRefused)
}

// SetTransfersInFlight records how many transfers of a kind (upload,
// download) are in flight; it fits httpapi.Deps.OnTransfer.
func (m *Registry) SetTransfersInFlight(kind string, n int) {
	if m == nil {
		return
	}
	m.transfersInFlight.WithLabelValues(kind).Set(float64(n))
}

// ObserveTransferRefused counts a transfer refused because the bound
// named (node, account) was full; it fits httpapi.Deps.OnTransferRefused.
func (m *Registry) ObserveTransferRefused(kind, bound string) {
	if m == nil {
		return
	}
	m.transfersRefused.WithLabelValues(kind, bound).Inc()
}

func (m *Registry) registerGeneration() {
	m.generation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generation_info",
		Help: "The index generation being served (value 1, id as label).",
	}, []string{"generation"})
	m.generationProfile = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_profiles",
		Help: "Company profiles in the index generation being served.",
	})
	m.generationCreated = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generation_created_timestamp_seconds",
		Help: "Unix time at which the generation being served was built.",
	})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generation_age_seconds",
		Help: "Age of the index generation being served.",
	}, m.generationAge)
	m.swaps = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_swaps_total",
		Help: "Newly published index generations swapped in since start.",
	})
	m.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "index_generations_rejected_total",
		Help: "Index generations refused before serving, by reason (meta, version, files, structure, open); a generation retried for the same reason counts once.",
	}, []string{"reason"})
	m.changedProfiles = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generation_changed_profiles",
		Help: "Profiles of the previous generation that the generation being served changed or no longer holds, as its change record counts them (-1 without a change record).",
	})
	m.changedFields = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "index_generation_changes",
		Help: "Changes the change record of the generation being served holds, by field (name, seat, address, legal_form, status, register, officers, previous_names, lei, documents; removed for profiles no longer held).",
	}, []string{"field"})
	m.Prometheus.MustRegister(m.generation, m.generationProfile, m.generationCreated, age, m.swaps, m.rejected, m.changedProfiles, m.changedFields)
}

func (m *Registry) registerIngest() {
	m.ingestRecords = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "ingest_records",
		Help: "Records read so far by the latest ingest this process ran (serve ingests the embedded sample on an empty data directory; the ingest command is a process of its own).",
	})
	m.ingestRunning = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "ingest_running",
		Help: "1 while this process ingests, 0 otherwise.",
	})
	m.Prometheus.MustRegister(m.ingestRecords, m.ingestRunning)
}

func (m *Registry) generationAge() float64 {
	ns := m.createdAt.Load()
	if ns == 0 {
		return 0
	}
	return time.Since(time.Unix(0, ns)).Seconds()
}

// SetGeneration records the generation being served.
func (m *Registry) SetGeneration(id string, profiles int, createdAt time.Time) {
	if m == nil {
		return
	}
	m.generation.Reset()
	m.generation.WithLabelValues(id).Set(1)
	m.generationProfile.Set(float64(profiles))
	m.generationCreated.Set(float64(createdAt.UnixNano()) / 1e9)
	m.createdAt.Store(createdAt.UnixNano())
}

// SetGenerationChanges records the counts of the change record of the
// generation being served: profiles changed or removed and changes by
// field; recorded false for a generation without a change record.
func (m *Registry) SetGenerationChanges(recorded bool, profiles int, byField map[string]int) {
	if m == nil {
		return
	}
	m.changedFields.Reset()
	if !recorded {
		m.changedProfiles.Set(-1)
		return
	}
	m.changedProfiles.Set(float64(profiles))
	for _, f := range append(append([]string(nil), companydocs.ChangeFields...), companydocs.FieldRemoved) {
		m.changedFields.WithLabelValues(f).Set(float64(byField[f]))
	}
}

// ObserveSwap records that a newly published generation was swapped in.
func (m *Registry) ObserveSwap(id string, profiles int, createdAt time.Time) {
	if m == nil {
		return
	}
	m.swaps.Inc()
	m.SetGeneration(id, profiles, createdAt)
}

// ObserveRejectedGeneration counts a generation refused before serving; it
// fits index.LiveOptions.OnReject.
func (m *Registry) ObserveRejectedGeneration(_, reason string) {
	if m == nil {
		return
	}
	m.rejected.WithLabelValues(reason).Inc()
}

// IngestStarted marks the start of an ingest run by this process.
func (m *Registry) IngestStarted() {
	if m != nil {
		m.ingestRunning.Set(1)
		m.ingestRecords.Set(0)
	}
}

// IngestProgress records the number of records the running ingest has read.
func (m *Registry) IngestProgress(records int) {
	if m != nil {
		m.ingestRecords.Set(float64(records))
	}
}

// IngestFinished marks the end of an ingest run.
func (m *Registry) IngestFinished() {
	if m != nil {
		m.ingestRunning.Set(0)
	}
}

// SetOrderCounts sets the orders-by-status gauge (at start).
func (m *Registry) SetOrderCounts(counts map[string]int) {
	if m == nil {
		return
	}
	for _, st := range companydocs.OrderStatuses {
		m.ordersByStatus.WithLabelValues(st).Set(float64(counts[st]))
	}
}

// ObserveTransition records a committed creation (from "") or transition.
func (m *Registry) ObserveTransition(from, to, actor string) {
	if m == nil {
		return
	}
	m.transitions.WithLabelValues(from, to, actor).Inc()
	if from != "" {
		m.ordersByStatus.WithLabelValues(from).Dec()
	}
	m.ordersByStatus.WithLabelValues(to).Inc()
}

func (m *Registry) registerWebhooks() {
	m.webhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "webhook_deliveries_total",
		Help: "Webhook delivery attempts by outcome: delivered (2xx), retry (failed, tried again later), failed (no retry left).",
	}, []string{"outcome"})
	for _, o := range []string{"delivered", "retry", "failed"} {
		m.webhookDeliveries.WithLabelValues(o)
	}
	m.outboxDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "outbox_events",
		Help: "Order events in the outbox, not yet fanned out to webhook deliveries.",
	})
	m.webhooksPending = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "webhook_deliveries_pending",
		Help: "Webhook deliveries neither delivered nor failed yet.",
	})
	oldest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace, Name: "outbox_oldest_event_age_seconds",
		Help: "Age of the oldest event in the outbox (0 when empty): the lag of webhook fan-out.",
	}, func() float64 {
		if ns := m.outboxOldest.Load(); ns != 0 {
			return time.Since(time.Unix(0, ns)).Seconds()
		}
		return 0
	})
	m.Prometheus.MustRegister(m.webhookDeliveries, m.outboxDepth, m.webhooksPending, oldest)
}

// ObserveWebhookDelivery counts one attempt by outcome (delivered, retry,
// failed).
func (m *Registry) ObserveWebhookDelivery(outcome string) {
	if m == nil {
		return
	}
	m.webhookDeliveries.WithLabelValues(outcome).Inc()
}

// SetWebhookStats sets the outbox depth, its oldest event's time (zero
// when empty) and the pending deliveries.
func (m *Registry) SetWebhookStats(outboxDepth int, oldest time.Time, pending int) {
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

// ObserveSearch counts an answered search by how the query was read and
// the confidence label of the top candidate ("none" without one).
func (m *Registry) ObserveSearch(kind, topLabel string) {
	if m == nil {
		return
	}
	m.searches.WithLabelValues(kind, topLabel).Inc()
}
