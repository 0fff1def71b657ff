package search

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestSearchBatchOverHTTP sends real companies of the sample as one batch
// with an invalid query among them: each answer is the single search's
// answer for its query, in the order sent, the invalid one gets its own
// invalid_query, and every exchange conforms to the OpenAPI document.
func TestSearchBatchOverHTTP(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	recs := e2e.ReadRecords(t, e2e.SampleFile(t), 40)
	var queries []map[string]any
	var names []string
	for _, r := range recs {
		if r.CurrentStatus == "removed" || len(names) == 12 {
			continue
		}
		queries = append(queries, map[string]any{"query": r.Name, "limit": 3})
		names = append(names, r.Name)
	}
	invalidAt := 5
	queries = append(queries[:invalidAt], append([]map[string]any{{"query": "Bau", "properties": map[string]string{"town": "Köln"}}}, queries[invalidAt:]...)...)
	body, _ := json.Marshal(map[string]any{"queries": queries})
	var res struct {
		Results []struct {
			e2e.SearchResult
			Error *struct{ Code, Message string } `json:"error"`
		} `json:"results"`
	}
	s.MustJSON(t, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/batch", string(body))
	if len(res.Results) != len(queries) {
		t.Fatalf("%d results for %d queries", len(res.Results), len(queries))
	}
	for i, r := range res.Results {
		if i == invalidAt {
			if r.Error == nil || r.Error.Code != companydocs.EINVALIDQUERY || !strings.Contains(r.Error.Message, "town") {
				t.Errorf("the invalid query's answer is %+v, want invalid_query naming \"town\"", r)
			}
			continue
		}
		name := names[i-boolInt(i > invalidAt)]
		single := s.FlowSearch(t, name)
		if r.Error != nil || len(r.Candidates) == 0 || r.Candidates[0].ProfileID != single.Candidates[0].ProfileID ||
			r.Candidates[0].Confidence != single.Candidates[0].Confidence {
			t.Errorf("answer %d (%q) = %+v, the single search's first is %+v", i, name, r, single.Candidates[0])
		}
	}
	if n, _ := s.Metric(t, "companydocs_search_batch_items_total", "outcome", "answered"); n != float64(len(names)) {
		t.Errorf("companydocs_search_batch_items_total{outcome=answered} = %v, want %d", n, len(names))
	}
	s.CheckAgainstOpenAPI(t)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
