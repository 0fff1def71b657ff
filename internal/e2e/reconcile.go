package e2e

import (
	"net/http"
	"net/url"
	"testing"
)

// ReconcilePath is the route of the reconciliation endpoint.
const ReconcilePath = "/api/v1/reconcile"

// ReconcileForm posts a form field to the endpoint.
func (s *TestServer) ReconcileForm(tb testing.TB, field, value string, headers ...string) (int, []byte, http.Header) {
	tb.Helper()
	body := url.Values{field: {value}}.Encode()
	return s.Do(tb, "POST", ReconcilePath, body, append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}
