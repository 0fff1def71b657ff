package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/syncbuf"
)

// send sends one request through the server's HTTP handler and returns the
// response with its body read.
func send(t *testing.T, s *Server, method, path, body string) (*http.Response, []byte) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

// TestUnknownMethodsInTheErrorShape sends methods Fiber does not know
// (PROPFIND, FOO) and one it knows that the endpoint does not take: each is
// answered in the error shape, 405 with Allow on a path that exists, 404
// on one that does not, and each is logged and counted.
func TestUnknownMethodsInTheErrorShape(t *testing.T) {
	logs := &syncbuf.Buffer{}
	s := newTestServer(t, Deps{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	for _, c := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{"PROPFIND", "/api/v1/documents/plans/", http.StatusMethodNotAllowed, companydocs.EMETHODNOTALLOWED, "GET, HEAD"},
		{"FOO", "/api/v1/documents/orders", http.StatusMethodNotAllowed, companydocs.EMETHODNOTALLOWED, "GET, HEAD, POST"},
		{"FOO", "/api/v1/documents/orders/ord_x/", http.StatusMethodNotAllowed, companydocs.EMETHODNOTALLOWED, "GET, HEAD"},
		{"PUT", "/api/v1/documents/plans", http.StatusMethodNotAllowed, companydocs.EMETHODNOTALLOWED, "GET, HEAD"},
		{"PROPFIND", "/no/such/path", http.StatusNotFound, companydocs.ENOTFOUND, ""},
	} {
		resp, body := send(t, s, c.method, c.path, "")
		var e errorBody
		if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != c.status || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s %s: %d %q, want %d with code %s", c.method, c.path, resp.StatusCode, body, c.status, c.code)
		}
		if got := sortedAllow(resp.Header.Get("Allow")); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
	if n := strings.Count(logs.String(), `"method":"other"`); n != 4 {
		t.Errorf("%d request log lines with method other, want 4:\n%s", n, logs)
	}
	_, metrics := send(t, s, "GET", "/metrics", "")
	for _, want := range []string{
		`companydocs_http_requests_total{method="other",route="unmatched",status="405"} 3`,
		`companydocs_http_requests_total{method="other",route="unmatched",status="404"} 1`,
		`companydocs_http_errors_total{code="method_not_allowed",route="unmatched"} 4`,
	} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// sortedAllow puts the methods of an Allow header in order.
func sortedAllow(h string) string {
	if h == "" {
		return ""
	}
	parts := strings.Split(h, ", ")
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			if parts[j] < parts[i] {
				parts[i], parts[j] = parts[j], parts[i]
			}
		}
	}
	return strings.Join(parts, ", ")
}

// TestSecurityHeaders checks nosniff on every kind of answer, and no-store
// on every answer of the session and order endpoints, errors included.
func TestSecurityHeaders(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	for _, c := range []struct {
		method, path, token, body string
		status                    int
		noStore                   bool
	}{
		{"GET", "/healthz", "", "", 200, false},
		{"GET", "/api/v1/documents/plans/", "", "", 200, false},
		{"GET", "/api/v1/no-such-thing", "", "", 404, false},
		{"FOO", "/api/v1/documents/plans/", "", "", 405, false},
		{"POST", "/api/v1/auth/sessions/", "", `{"api_key":"` + s.key + `"}`, 201, true},
		{"POST", "/api/v1/auth/sessions/", "", `{"api_key":"cdk_wrong"}`, 401, true},
		{"POST", "/api/v1/documents/orders/preview/", s.token, orderBody(s.live, "AD", "ad-single"), 200, true},
		{"POST", "/api/v1/documents/orders/preview/", s.token, `{}`, 422, true},
		{"GET", "/api/v1/documents/orders/", s.token, "", 200, true},
		{"GET", "/api/v1/documents/orders/", "", "", 401, true},
		{"GET", "/api/v1/documents/orders/ord_nope/", s.token, "", 404, true},
		{"DELETE", "/api/v1/auth/sessions/current", "cds_nope", "", 401, true},
	} {
		resp, _ := s.do(t, c.method, c.path, c.token, c.body)
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s -> %d: X-Content-Type-Options %q", c.method, c.path, resp.StatusCode, got)
		}
		if got := resp.Header.Get("Cache-Control"); c.noStore && got != "no-store" {
			t.Errorf("%s %s -> %d: Cache-Control %q, want no-store", c.method, c.path, resp.StatusCode, got)
		}
	}
}
