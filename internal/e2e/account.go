package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"companydocs"
)

// Account fetches GET path with token and checks that it is not cached.
func (s *TestServer) Account(t *testing.T, path, token string) companydocs.AccountSummary {
	t.Helper()
	var a companydocs.AccountSummary
	status, raw, h := s.Do(t, "GET", path, "", "Authorization", "Bearer "+token)
	if status != http.StatusOK || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET %s: %d, Cache-Control %q: %s", path, status, h.Get("Cache-Control"), raw)
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, raw)
	}
	return a
}
