package metrics

import "github.com/prometheus/client_golang/prometheus"

// paymentCollectors count what payment providers tell the service and the
// refunds it asks of them.
type paymentCollectors struct {
	events        *prometheus.CounterVec
	refunds       *prometheus.CounterVec
	refundPending prometheus.Gauge
}

func (m *Registry) registerPayments() {
	p := &m.payments
	p.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "payment_events_total",
		Help: "Events of payment providers by provider and outcome: applied (the order moved), replayed (its id was applied before), late (the order is past its checkout), unknown (no order has the checkout), ignored (a type not acted on), mismatch (paid, but not the order's amount or currency: not marked paid), invalid_signature (refused, 400).",
	}, []string{"provider", "outcome"})
	for _, o := range []string{"applied", "replayed", "late", "unknown", "ignored", "mismatch", "invalid_signature"} {
		p.events.WithLabelValues("stripe", o)
	}
	p.refunds = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "payment_refunds_total",
		Help: "Refund attempts at payment providers by outcome: refunded (asked and made), found (an earlier ask whose answer was lost had made it, found by a look-up and not asked again), retry (refused, unanswered or not looked up, tried again later with a backoff).",
	}, []string{"outcome"})
	for _, o := range []string{"refunded", "found", "retry"} {
		p.refunds.WithLabelValues(o)
	}
	p.refundPending = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "payment_refunds_pending",
		Help: "Refunds scheduled and not yet made by their payment provider (as of the last refund round of this node).",
	})
	m.Prometheus.MustRegister(p.events, p.refunds, p.refundPending)
}

// ObservePaymentEvent counts one event of a provider by outcome.
func (m *Registry) ObservePaymentEvent(provider, outcome string) {
	if m == nil {
		return
	}
	m.payments.events.WithLabelValues(provider, outcome).Inc()
}

// ObserveRefund counts one refund attempt by outcome.
func (m *Registry) ObserveRefund(outcome string) {
	if m == nil {
		return
	}
	m.payments.refunds.WithLabelValues(outcome).Inc()
}

// SetRefundsPending sets the number of refunds waiting for their provider.
func (m *Registry) SetRefundsPending(n int) {
	if m == nil {
		return
	}
	m.payments.refundPending.Set(float64(n))
}
