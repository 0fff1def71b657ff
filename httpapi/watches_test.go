package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
)

// oneWatchPlansFile is the shipped plans file with a watch limit of 1.
func oneWatchPlansFile(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile(shippedPlansFile())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), `"watch_limit": 25`, `"watch_limit": 1`, 1)
	if text == string(raw) {
		t.Fatal("the shipped plans file has no watch_limit of 25")
	}
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWatchEndpoints: a session watches a real profile once (201, then
// 200 with the same watch), is refused a second company over its limit
// (409 with a sentence), bad bodies are 4xx with a sentence, another
// account neither lists nor deletes the watch.
func TestWatchEndpoints(t *testing.T) {
	s := newOrderServer(t, oneWatchPlansFile(t))
	body := `{"company_profile_id":"` + s.live.ID + `"}`
	var w companydocs.Watch
	s.mustDo(t, "POST", "/api/v1/watches/", s.token, body, http.StatusCreated, &w)
	if !strings.HasPrefix(w.ID, "wat_") || w.CompanyProfileID != s.live.ID || w.Company.Name != s.live.Name || w.LastChange != nil {
		t.Fatalf("watch = %+v", w)
	}
	var again companydocs.Watch
	s.mustDo(t, "POST", "/api/v1/watches", s.token, body, http.StatusOK, &again)
	if again.ID != w.ID {
		t.Errorf("watching again gave %s, want %s", again.ID, w.ID)
	}
	other := firstOrderable(t, s.live.ID)
	out := s.wantError(t, "POST", "/api/v1/watches/", s.token, `{"company_profile_id":"`+other+`"}`, http.StatusConflict, companydocs.EWATCHLIMIT)
	if msg := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "(1)") {
		t.Errorf("limit sentence %q does not name the limit", msg)
	}
	for _, bad := range []struct {
		body   string
		status int
		code   string
	}{
		{`{"company_profile_id":"` + s.removed.ID + `"}`, http.StatusUnprocessableEntity, companydocs.EVERIFIEDREQUIRED},
		{`{}`, http.StatusUnprocessableEntity, companydocs.EVERIFIEDREQUIRED},
		{`{"company_profile_id": 7}`, http.StatusUnprocessableEntity, companydocs.EVALIDATION},
		{`{"company_profile_id":"x","extra":1}`, http.StatusUnprocessableEntity, companydocs.EVALIDATION},
		{`{"company_profile_id":"` + strings.Repeat("a", 300) + `"}`, http.StatusUnprocessableEntity, companydocs.EVALIDATION},
		{`[`, http.StatusUnprocessableEntity, companydocs.EVALIDATION},
	} {
		s.wantError(t, "POST", "/api/v1/watches/", s.token2, bad.body, bad.status, bad.code)
	}
	s.wantError(t, "POST", "/api/v1/watches/", "", body, http.StatusUnauthorized, companydocs.EUNAUTHORIZED)
	s.wantError(t, "GET", "/api/v1/watches/", "", "", http.StatusUnauthorized, companydocs.EUNAUTHORIZED)
	var list struct{ Watches []companydocs.Watch }
	s.mustDo(t, "GET", "/api/v1/watches/", s.token2, "", http.StatusOK, &list)
	if len(list.Watches) != 0 {
		t.Errorf("another account lists %d watches", len(list.Watches))
	}
	s.wantError(t, "DELETE", "/api/v1/watches/"+w.ID, s.token2, "", http.StatusNotFound, companydocs.ENOTFOUND)
	s.mustDo(t, "DELETE", "/api/v1/watches/"+w.ID, s.token, "", http.StatusNoContent, nil)
	s.wantError(t, "DELETE", "/api/v1/watches/"+w.ID, s.token, "", http.StatusNotFound, companydocs.ENOTFOUND)
	var account companydocs.AccountSummary
	s.mustDo(t, "GET", "/api/v1/account", s.token, "", http.StatusOK, &account)
	if account.Watches != (companydocs.WatchCount{Count: 0, Limit: 1}) {
		t.Errorf("account watches = %+v", account.Watches)
	}
}

// firstOrderable returns the id of an orderable fixture profile other
// than not.
func firstOrderable(t *testing.T, not string) string {
	t.Helper()
	profiles, _, _ := loadOrderProfiles(t)
	for id, p := range profiles {
		if id != not && p.OrderingEligible() {
			return id
		}
	}
	t.Fatal("no second orderable profile")
	return ""
}
