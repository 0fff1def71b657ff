package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
)

// SearchDiscover runs a search for query with discover and returns its
// candidates.
func (s *TestServer) SearchDiscover(tb testing.TB, query string) []Candidate {
	tb.Helper()
	var res struct{ Candidates []Candidate }
	body, _ := json.Marshal(map[string]any{"query": query, "discover": true})
	s.MustJSON(tb, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", string(body))
	return res.Candidates
}
