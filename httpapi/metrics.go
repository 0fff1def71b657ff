package httpapi

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Route labels for requests that matched no route, so that scanners probing
// random paths cannot grow the label set.
const unmatchedRoute = "unmatched"

// routeCreateOrder is the route pattern whose outcomes count as orders.
const routeCreateOrder = "/api/v1/documents/orders"

// Metrics is what the server reports what it does to, and serves at
// /metrics (package metrics implements it with its HTTP collectors, on the
// registry that holds the service's other metrics). The server declares
// it, so that it knows no metrics package: cmd/companydocs wires one in.
type Metrics interface {
	// ServeHTTP serves the metrics in the Prometheus text format.
	http.Handler
	// ObserveRequest records one answered request; code is the error code
	// of an error response, empty otherwise.
	ObserveRequest(route, method string, status int, code string, elapsed time.Duration)
	// ObserveOrderCreation counts an order creation attempt by outcome
	// (created, rejected) and error code (empty when created).
	ObserveOrderCreation(outcome, code string)
	// ObserveRateLimited counts a search answered rate_limited.
	ObserveRateLimited()
	// ObserveConnRefused counts a connection refused over a cap.
	ObserveConnRefused()
	// ObserveBatch records an answered batch: its size, each item's
	// outcome (answered, or its error code) and how many were charged.
	ObserveBatch(size int, outcomes map[string]int, charged int)
	// ObserveBatchRefused counts a batch refused for want of a slot, by
	// the bound that was full (client, node).
	ObserveBatchRefused(reason string)
	// ObserveReconcile counts n of a kind of reconciliation work.
	ObserveReconcile(kind string, n int)
}

// observeRequest records one answered request and, for the order
// creation route, its outcome. code is the error code of an error
// response, empty otherwise.
func observeRequest(m Metrics, route, method string, status int, code string, elapsed time.Duration) {
	m.ObserveRequest(route, method, status, code, elapsed)
	if route == routeCreateOrder && method == fiber.MethodPost {
		switch {
		case status == http.StatusCreated:
			m.ObserveOrderCreation("created", "")
		case code != "":
			m.ObserveOrderCreation("rejected", code)
		}
	}
}

// handleMetrics serves the metrics in the Prometheus text format.
func (s *Server) handleMetrics(c *fiber.Ctx) error {
	return s.metricsPage(c)
}
