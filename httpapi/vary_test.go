package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswersNameWhatTheyDependOn: an answer that depends on a request
// header says so in Vary, or does not depend on it. The search batch's
// items are said in Accept-Language; the reconciliation routes allow
// every origin whether or not the request has an Origin, so a cache may
// hand any of their answers to a browser's page.
func TestAnswersNameWhatTheyDependOn(t *testing.T) {
	s, _ := batchServer(t, 0, 0)
	req := httptest.NewRequest(http.MethodPost, batchPath, strings.NewReader(`{"queries":[{"mode":"fast"}]}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Language", "de")
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Vary"), "Accept-Language") {
		t.Errorf("search batch: %d, Vary %q, want Accept-Language named", resp.StatusCode, resp.Header.Get("Vary"))
	}
	for _, path := range []string{routeReconcile, routeReconcile + "/suggest/property?prefix=ci", routeReconcile + "/properties?type=company",
		routeReconcile + "/preview"} {
		for _, origin := range []string{"", "https://openrefine.example"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			resp, err := s.app.Test(req, -1)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "*" {
				t.Errorf("GET %s with Origin %q: %d, Access-Control-Allow-Origin %q, want *", path, origin, resp.StatusCode, got)
			}
		}
	}
}
