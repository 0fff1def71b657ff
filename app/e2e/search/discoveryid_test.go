package search

import (
	"net/http"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// checkDiscoveryCandidateIDs is the second half of
// TestDiscoveryCandidatesThroughTheAPI, on the embedded sample: the order
// made with the verified candidate's own discovery_candidate_id carries
// it; another real candidate's id, a malformed id and markup are refused
// with validation_error naming the field, in preview and create, for the
// discovery profile and for a registry-cache profile alike.
func checkDiscoveryCandidateIDs(t *testing.T, ts *e2e.TestServer, token string, own companydocs.Candidate, order companydocs.Order, unrelated string) {
	t.Helper()
	if order.DiscoveryCandidateID != own.DiscoveryCandidateID || own.DiscoveryCandidateID != own.ProfileID {
		t.Errorf("order carries discovery_candidate_id %q, candidate %q (profile %q)", order.DiscoveryCandidateID, own.DiscoveryCandidateID, own.ProfileID)
	}
	live, _, _ := e2e.PickCompanies(t, ts, e2e.ReadRecords(t, e2e.SampleFile(t), 300))
	register := live.ProfileID
	cases := []struct{ profile, candidate string }{
		{own.ProfileID, unrelated},
		{own.ProfileID, "dc_123"},
		{own.ProfileID, "<img src=x onerror=alert(1)>"},
		{register, own.DiscoveryCandidateID},
	}
	for _, c := range cases {
		req := map[string]string{"company_profile_id": c.profile, "discovery_candidate_id": c.candidate, "document_type": "CD", "plan_id": "cd-single"}
		for _, path := range []string{"/api/v1/documents/orders/preview/", "/api/v1/documents/orders/"} {
			var e e2e.ErrorResult
			status, raw := ts.Call(t, "POST", path, token, req, &e)
			if status != http.StatusUnprocessableEntity || e.Error.Code != companydocs.EVALIDATION || !strings.Contains(e.Error.Message, `"discovery_candidate_id"`) {
				t.Errorf("%s with profile %s and discovery_candidate_id %q: %d %s", path, c.profile, c.candidate, status, raw)
			}
		}
	}
}
