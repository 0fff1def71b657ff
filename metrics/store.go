package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterOrderStore adds companydocs_order_store_up, the gauge an alert
// on a lost database reads: answers is called at each scrape (so the
// gauge is as fresh as the scrape, with no loop of its own) and bounds its
// own time. cmd/companydocs registers it for the PostgreSQL store, with
// the ping /readyz makes; orders.db lives in the process, which serves
// only while it is open.
func (m *Registry) RegisterOrderStore(answers func() bool) {
	if m == nil {
		return
	}
	m.Prometheus.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace, Name: "order_store_up",
		Help: "1 when the PostgreSQL order store answered a ping at this scrape, 0 when it did not (then /readyz is 503 and requests that need it answer 503).",
	}, func() float64 {
		if answers() {
			return 1
		}
		return 0
	}))
}
