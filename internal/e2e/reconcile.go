package e2e

import (
	"net/http"
	"net/url"
	"testing"
)

const ReconcilePath = "/api/v1/reconcile"

// reconcileForm posts a form field to the endpoint.
func (s *TestServer) ReconcileForm(tb testing.TB, field, value string, headers ...string) (int, []byte, http.Header) {
	tb.Helper()
	body := url.Values{field: {value}}.Encode()
	return s.Do(tb, "POST", ReconcilePath, body, append([]string{"Content-Type", "application/x-www-form-urlencoded"}, headers...)...)
}
