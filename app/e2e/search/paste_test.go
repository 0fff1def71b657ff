package search

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestPastedImprintOverHTTP sends a real company's imprint as pasted, over
// several lines with a phone and an e-mail line, to the real server: the
// register line makes the company exact, the answer says which lines were
// used and which set aside (as codes the OpenAPI document lists), and the
// search is counted as a pasted block read by its register line.
func TestPastedImprintOverHTTP(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	block := "Impressum\nRheinbahn AG\nLierenfelder Straße 42\n40231 Düsseldorf\nTelefon: 0211 582-0\nE-Mail: info@rheinbahn.de\n" +
		"Registergericht: Amtsgericht Düsseldorf\r\nRegisternummer: HRB 562\tUSt-IdNr.: DE119392316"
	var res struct {
		Candidates         []e2e.Candidate
		QueryUnderstanding struct {
			LineDetails []companydocs.ReasonDetail `json:"line_details"`
		} `json:"query_understanding"`
	}
	body, _ := json.Marshal(map[string]string{"query": block})
	s.MustJSON(t, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", string(body))
	if len(res.Candidates) == 0 || res.Candidates[0].Name != "Rheinbahn AG" || res.Candidates[0].ConfidenceLabel != companydocs.LabelExact {
		t.Fatalf("the imprint's first candidate is %+v, want Rheinbahn AG, exact", res.Candidates)
	}
	var codes []string
	for _, d := range res.QueryUnderstanding.LineDetails {
		codes = append(codes, d.Code)
	}
	for _, want := range []string{"aside_heading", "line_name", "line_address", "aside_phone", "aside_email", "line_register", "aside_vat_id"} {
		if !slices.Contains(codes, want) {
			t.Errorf("line codes %v lack %s", codes, want)
		}
	}
	if n, _ := s.Metric(t, "companydocs_searches_total", "kind", "pasted_register_reference", "top_label", "exact"); n != 1 {
		t.Errorf("companydocs_searches_total{kind=pasted_register_reference,top_label=exact} = %v, want 1", n)
	}
	s.WantError(t, http.StatusBadRequest, companydocs.EINVALIDQUERY, "POST", "/api/v1/documents/companies/search/", `{"query": "Rheinbahn AG\u0007Düsseldorf"}`)
	// line breaks of CR alone (old Mac files, some mail clients) and NEL
	for _, br := range []string{"\r", "\u0085"} {
		body, _ := json.Marshal(map[string]string{"query": "Rheinbahn AG" + br + "Registergericht: Amtsgericht Düsseldorf" + br + "HRB 562"})
		s.MustJSON(t, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", string(body))
		if len(res.Candidates) == 0 || res.Candidates[0].Name != "Rheinbahn AG" || res.Candidates[0].ConfidenceLabel != companydocs.LabelExact {
			t.Errorf("the imprint with %q line breaks: first candidate %+v, want Rheinbahn AG, exact", br, res.Candidates)
		}
	}
	s.CheckAgainstOpenAPI(t)
}
