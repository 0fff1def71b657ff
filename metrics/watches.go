package metrics

import "github.com/prometheus/client_golang/prometheus"

// watchCollectors are the collectors of watches: how many are live, and
// what each comparison with a swapped-in generation found and emitted.
type watchCollectors struct {
	watches      prometheus.Gauge
	changes      prometheus.Counter
	changedWatch *prometheus.CounterVec
	events       prometheus.Counter
	compared     prometheus.Counter
}

func (m *Registry) registerWatches() {
	w := &m.watch
	w.watches = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "watches",
		Help: "Live watches of every account (not ended): counted at start and after each comparison, kept by creates and deletes.",
	})
	w.compared = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "watch_comparisons_total",
		Help: "Watches this node compared with a swapped-in generation (one skipped because another node or an earlier run compared it is not counted).",
	})
	w.changes = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "watch_changes_total",
		Help: "Changed fields of watched profiles found by this node's comparisons with swapped-in generations.",
	})
	w.changedWatch = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "watch_changed_total",
		Help: "Watches found changed by this node's comparisons, by outcome: changed (the profile is still held) or ended (the generation no longer holds it).",
	}, []string{"outcome"})
	for _, o := range []string{"changed", "ended"} {
		w.changedWatch.WithLabelValues(o)
	}
	w.events = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "watch_events_total",
		Help: "company.changed events this node wrote to the outbox, one per changed watch.",
	})
	m.Prometheus.MustRegister(w.watches, w.compared, w.changes, w.changedWatch, w.events)
}

// SetWatches sets the number of live watches.
func (m *Registry) SetWatches(n int) {
	if m == nil {
		return
	}
	m.watch.watches.Set(float64(n))
}

// AddWatches moves the number of live watches by delta (a create, a
// delete); it fits ordering.Options.OnWatches.
func (m *Registry) AddWatches(delta int) {
	if m == nil {
		return
	}
	m.watch.watches.Add(float64(delta))
}

// ObserveWatchRun counts what one comparison with a generation did.
func (m *Registry) ObserveWatchRun(compared, changes, changed, ended, events int) {
	if m == nil {
		return
	}
	w := &m.watch
	w.compared.Add(float64(compared))
	w.changes.Add(float64(changes))
	w.changedWatch.WithLabelValues("changed").Add(float64(changed))
	w.changedWatch.WithLabelValues("ended").Add(float64(ended))
	w.events.Add(float64(events))
}
