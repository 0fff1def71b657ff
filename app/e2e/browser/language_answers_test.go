package browser

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"companydocs/internal/realdata"
)

// TestAnswersSayTheirSentencesInTheAskedLanguage asks the real server on
// real records in English and in German: a search's reasons and the
// summary of how the query was read, a preview's blockers and the plans'
// labels come in the language Accept-Language asks for, with the same
// codes; the limits are the service's.
func TestAnswersSayTheirSentencesInTheAskedLanguage(t *testing.T) {
	m := startBrowserServer(t, realdata.Path(t, "offeneregister", "fixtures_665.jsonl"))
	base := "http://" + m.Addr() + "/api/v1"
	key, err := m.Accounts.CreateAccount("sprache", 0)
	if err != nil {
		t.Fatal(err)
	}
	ask := func(method, path, lang, token string, body any, out any) http.Header {
		t.Helper()
		var payload bytes.Buffer
		if body != nil {
			json.NewEncoder(&payload).Encode(body)
		}
		req, _ := http.NewRequest(method, base+path, &payload)
		req.Header.Set("Accept-Language", lang)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %s", method, path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatal(err)
		}
		return resp.Header
	}
	type search struct {
		Candidates []struct {
			Reasons []string `json:"confidence_reasons"`
			Details []struct {
				Code string `json:"code"`
			} `json:"reason_details"`
		} `json:"candidates"`
		Understanding struct {
			Summary string `json:"summary"`
		} `json:"query_understanding"`
	}
	var en, de search
	ask("POST", "/documents/companies/search/", "en", "", map[string]any{"query": "Rheinbahn AG Düsseldorf"}, &en)
	h := ask("POST", "/documents/companies/search/", "de-DE,de;q=0.9", "", map[string]any{"query": "Rheinbahn AG Düsseldorf"}, &de)
	if h.Get("Content-Language") != "de" || !strings.Contains(h.Get("Vary"), "Accept-Language") {
		t.Errorf("German search answer: Content-Language %q, Vary %q", h.Get("Content-Language"), h.Get("Vary"))
	}
	if len(en.Candidates) == 0 || len(de.Candidates) != len(en.Candidates) {
		t.Fatalf("%d English and %d German candidates", len(en.Candidates), len(de.Candidates))
	}
	top, oben := en.Candidates[0], de.Candidates[0]
	if !strings.Contains(strings.Join(top.Reasons, " | "), "Seat Düsseldorf matches") ||
		!strings.Contains(strings.Join(oben.Reasons, " | "), "Sitz Düsseldorf stimmt überein") || len(oben.Details) != len(top.Details) {
		t.Errorf("reasons in English %q, in German %q", top.Reasons, oben.Reasons)
	}
	for i := range top.Details {
		if top.Details[i].Code != oben.Details[i].Code {
			t.Errorf("reason %d: code %s in English, %s in German", i, top.Details[i].Code, oben.Details[i].Code)
		}
	}
	if want := "name words “Rheinbahn Düsseldorf”; legal form AG; seat Düsseldorf"; en.Understanding.Summary != want {
		t.Errorf("English summary %q, want %q", en.Understanding.Summary, want)
	}
	if want := "Namensbestandteile „Rheinbahn Düsseldorf“; Rechtsform AG; Sitz Düsseldorf"; de.Understanding.Summary != want {
		t.Errorf("German summary %q, want %q", de.Understanding.Summary, want)
	}

	var plans struct {
		Plans []struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		} `json:"plans"`
	}
	ask("GET", "/documents/plans/", "de", "", nil, &plans)
	if len(plans.Plans) != 3 || plans.Plans[0].Label != "AD, Einzelkauf: 4,50 EUR" || plans.Plans[2].Label != "AD + CD, Abo: 1 Guthabenpunkt" {
		t.Errorf("German plan labels %+v", plans.Plans)
	}

	var session struct {
		Token string `json:"token"`
	}
	ask("POST", "/auth/sessions/", "de", "", map[string]string{"api_key": key}, &session)
	var found struct {
		Candidates []struct {
			ProfileID string `json:"profile_id"`
		} `json:"candidates"`
	}
	ask("POST", "/documents/companies/search/", "de", "", map[string]any{"query": "HRB 562 Düsseldorf"}, &found)
	var preview struct {
		Blockers []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"blockers"`
	}
	ask("POST", "/documents/orders/preview/", "de", session.Token, map[string]string{
		"company_profile_id": found.Candidates[0].ProfileID, "document_type": "AD", "plan_id": "subscription-basic"}, &preview)
	if len(preview.Blockers) != 1 || preview.Blockers[0].Code != "insufficient_credits" ||
		!strings.Contains(preview.Blockers[0].Message, "Guthaben") || strings.Contains(preview.Blockers[0].Message, "credits") {
		t.Errorf("German preview blockers %+v", preview.Blockers)
	}

	var limits map[string]int64
	ask("GET", "/limits", "", "", nil, &limits)
	if limits["query_chars"] != 2000 || limits["note_chars"] != 1000 || limits["document_bytes"] != 20<<20 || limits["batch_queries"] != 1000 {
		t.Errorf("limits %v", limits)
	}
}
