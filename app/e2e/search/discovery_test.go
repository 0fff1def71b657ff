package search

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
	"companydocs/data"
	"companydocs/internal/e2e"
)

// TestDiscoveryCandidatesThroughTheAPI serves real GLEIF records without
// a registry-cache entry: a fully corroborated one is found exactly by its
// LEI and can be ordered; a partially corroborated one is shown only with
// discover on, as needs_verification, and the gate refuses it.
func TestDiscoveryCandidatesThroughTheAPI(t *testing.T) {
	dir := t.TempDir()
	leis := filepath.Join(t.TempDir(), "lei_sample.csv")
	if err := os.WriteFile(leis, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	e2e.MustBuild(t, dir, 300, e2e.SampleFile(t), leis)
	ts := e2e.StartServer(t, dir)
	token := ts.Session(t, "kyc", 10)

	// Deutsche Bank Europe GmbH: ISSUED, ACTIVE, FULLY_CORROBORATED.
	res := ts.FlowSearch(t, "2138 00QI-liud4rosuo03")
	if len(res.Candidates) != 1 {
		t.Fatalf("verified LEI: %d candidates", len(res.Candidates))
	}
	verified := res.Candidates[0]
	if verified.Name != "Deutsche Bank Europe GmbH" || verified.Source != companydocs.SourceDiscovery ||
		verified.ConfidenceLabel != companydocs.LabelExact || !verified.OrderingEligible || verified.ProfileID == "" {
		t.Fatalf("verified discovery candidate = %+v", verified)
	}
	req := map[string]string{"company_profile_id": verified.ProfileID, "discovery_candidate_id": verified.DiscoveryCandidateID, "document_type": "AD", "plan_id": "ad-single"}
	var order companydocs.Order
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, &order); status != http.StatusCreated || order.Company.Name != "Deutsche Bank Europe GmbH" {
		t.Fatalf("order verified discovery: %d %s", status, raw)
	}

	// Nebert GmbH: PARTIALLY_CORROBORATED, so not verified.
	var hidden e2e.SearchResult
	ts.MustJSON(t, http.StatusOK, &hidden, "POST", "/api/v1/documents/companies/search/", `{"query": "Nebert GmbH"}`)
	for _, c := range hidden.Candidates {
		if c.Source == companydocs.SourceDiscovery {
			t.Errorf("discovery candidate %s shown without discover", c.Name)
		}
	}
	var shown e2e.SearchResult
	ts.MustJSON(t, http.StatusOK, &shown, "POST", "/api/v1/documents/companies/search/", `{"query": "Nebert GmbH", "discover": true}`)
	var unverified *companydocs.Candidate
	for i, c := range shown.Candidates {
		if c.Name == "Nebert GmbH" && c.Source == companydocs.SourceDiscovery {
			unverified = &shown.Candidates[i]
		}
	}
	if unverified == nil {
		t.Fatalf("unverified discovery candidate not shown with discover: %+v", shown.Candidates)
	}
	if unverified.ConfidenceLabel != companydocs.LabelNeedsVerification || unverified.OrderingEligible || unverified.ProfileID != "" ||
		unverified.DiscoveryCandidateID == "" || !hasReason(*unverified, "not verified") {
		t.Errorf("unverified discovery candidate = %+v", *unverified)
	}
	req = map[string]string{"company_profile_id": unverified.DiscoveryCandidateID, "document_type": "AD", "plan_id": "ad-single"}
	var preview companydocs.Preview
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/preview/", token, req, &preview); status != http.StatusOK || preview.OrderingEligible || len(preview.Blockers) == 0 {
		t.Errorf("preview unverified discovery: %d %s", status, raw)
	}
	var e e2e.ErrorResult
	if status, _ := ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, &e); status != http.StatusUnprocessableEntity || e.Error.Code != companydocs.EVERIFIEDREQUIRED {
		t.Errorf("order unverified discovery: %d %+v", status, e)
	}
	checkDiscoveryCandidateIDs(t, ts, token, verified, order, unverified.DiscoveryCandidateID)
}

func hasReason(c companydocs.Candidate, part string) bool {
	for _, r := range c.ConfidenceReasons {
		if strings.Contains(r, part) {
			return true
		}
	}
	return false
}
