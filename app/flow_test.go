package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

type searchResult struct {
	Candidates    []companydocs.Candidate `json:"candidates"`
	Understanding resolver.Understanding  `json:"query_understanding"`
}

type errorResult struct {
	Error struct{ Code, Message string } `json:"error"`
	Order *companydocs.Order             `json:"order"`
}

// flowServer serves 2,000 sample records plus the 665 real fixture records,
// which hold Rheinbahn AG (Düsseldorf HRB 562).
func flowServer(t *testing.T, flags ...string) (*testServer, string) {
	dir := t.TempDir()
	mustBuild(t, dir, 2000, sampleFile(t), offeneRegister(t, "fixtures_665.jsonl"))
	return startServer(t, dir, flags...), dir
}

// forEachServerStore runs fn against a server on orders.db and against
// one on a fresh PostgreSQL database, passing the flags that choose the
// store.
func forEachServerStore(t *testing.T, fn func(t *testing.T, storeFlags ...string)) {
	t.Run("bbolt", func(t *testing.T) { fn(t) })
	t.Run("postgres", func(t *testing.T) {
		_, url := startTestCluster(t)
		fn(t, "--store", url)
	})
}

// flowSearch returns candidates and query understanding of a search.
func (s *testServer) flowSearch(t *testing.T, query string) searchResult {
	t.Helper()
	var res searchResult
	s.mustJSON(t, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", `{"query": `+jsonString(query)+`}`)
	return res
}

// call sends body (a string, or a value encoded as JSON) with a bearer
// token, decodes the answer into out and returns the status and body.
func (s *testServer) call(t *testing.T, method, path, token string, body any, out any, headers ...string) (int, []byte) {
	t.Helper()
	text, ok := body.(string)
	if !ok && body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	status, raw, _ := s.do(t, method, path, text, headers...)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return status, raw
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

func (s *testServer) session(t *testing.T, name string, credits int64) string {
	t.Helper()
	key, err := s.Accounts.CreateAccount(name, credits)
	if err != nil {
		t.Fatal(err)
	}
	var sess companydocs.Session
	if status, raw := s.call(t, "POST", "/api/v1/auth/sessions/", "", map[string]string{"api_key": key}, &sess); status != http.StatusCreated {
		t.Fatalf("create session: %d %s", status, raw)
	}
	return sess.Token
}

func TestOrderFlow(t *testing.T) {
	ts, _ := flowServer(t)

	var plans struct{ Plans []companydocs.Plan }
	if status, raw := ts.call(t, "GET", "/api/v1/documents/plans/", "", nil, &plans); status != 200 || len(plans.Plans) == 0 {
		t.Fatalf("plans: %d %s", status, raw)
	}
	res := ts.flowSearch(t, "HRB 562 Düsseldorf")
	top := res.Candidates[0]
	if top.Name != "Rheinbahn AG" || top.ConfidenceLabel != companydocs.LabelExact || !top.OrderingEligible || top.ProfileID == "" {
		t.Fatalf("top candidate = %+v", top)
	}
	if res.Understanding.RegisterReference == nil || res.Understanding.RegisterReference.Court != "Düsseldorf" {
		t.Errorf("understanding = %+v", res.Understanding)
	}

	token := ts.session(t, "acme", 10)
	req := map[string]string{"company_profile_id": top.ProfileID, "document_type": "AD", "plan_id": "ad-single"}
	var preview companydocs.Preview
	if status, raw := ts.call(t, "POST", "/api/v1/documents/orders/preview/", token, req, &preview); status != 200 || !preview.OrderingEligible || preview.EstimatedTotal != "4.50" {
		t.Fatalf("preview: %d %s", status, raw)
	}
	var order companydocs.Order
	status, raw := ts.call(t, "POST", "/api/v1/documents/orders/", token, req, &order, "Idempotency-Key", "flow-1")
	if status != http.StatusCreated || order.Status != "PREVIEW_READY" || order.WorkflowStatus != "started" || order.CompanyProfileID != top.ProfileID {
		t.Fatalf("create: %d %s", status, raw)
	}
	if order.Company.Name != "Rheinbahn AG" || order.Company.RegistryNumber != "HRB 562" {
		t.Errorf("order snapshot = %+v", order.Company)
	}

	var dup errorResult
	if status, _ := ts.call(t, "POST", "/api/v1/documents/orders", token, req, &dup, "Idempotency-Key", "flow-1"); status != http.StatusConflict || dup.Error.Code != "duplicate_order" || dup.Order == nil || dup.Order.ID != order.ID {
		t.Errorf("repeat by key: %d %+v", status, dup)
	}
	if status, _ := ts.call(t, "POST", "/api/v1/documents/orders/", token, req, &dup); status != http.StatusConflict || dup.Order == nil || dup.Order.ID != order.ID {
		t.Errorf("repeat by content: %d %+v", status, dup)
	}

	var got companydocs.Order
	if status, raw := ts.call(t, "GET", "/api/v1/documents/orders/"+order.ID+"/", token, nil, &got); status != 200 || got.ID != order.ID {
		t.Errorf("read own order: %d %s", status, raw)
	}
	other := ts.session(t, "other", 10)
	var notFound errorResult
	if status, raw := ts.call(t, "GET", "/api/v1/documents/orders/"+order.ID, other, nil, &notFound); status != http.StatusNotFound || strings.Contains(string(raw), "Rheinbahn") {
		t.Errorf("other account reads order: %d %s", status, raw)
	}
	var list struct{ Orders []companydocs.Order }
	if ts.call(t, "GET", "/api/v1/documents/orders/", other, nil, &list); len(list.Orders) != 0 {
		t.Errorf("other account lists %d orders", len(list.Orders))
	}
}

func TestOrderGateRejectsWhatSearchMarksNotOrderable(t *testing.T) {
	ts, _ := flowServer(t)
	token := ts.session(t, "gate", 10)
	// A removed company (real fixture record): search says not orderable,
	// the order endpoint agrees.
	res := ts.flowSearch(t, "Hamburg HRB 32784")
	if len(res.Candidates) == 0 || res.Candidates[0].Name != "Eckelmann Umwelt Holding GmbH" {
		t.Fatalf("Hamburg HRB 32784: %+v", res.Candidates)
	}
	removed := res.Candidates[0]
	if removed.Status != companydocs.StatusRemoved || removed.ConfidenceLabel == companydocs.LabelExact {
		t.Errorf("removed entry: status %s, label %s", removed.Status, removed.ConfidenceLabel)
	}
	if removed.OrderingEligible {
		t.Fatalf("removed candidate %s is orderable", removed.Name)
	}
	req := map[string]string{"company_profile_id": removed.ProfileID, "document_type": "AD", "plan_id": "ad-single"}
	var preview companydocs.Preview
	if status, raw := ts.call(t, "POST", "/api/v1/documents/orders/preview/", token, req, &preview); status != 200 || preview.OrderingEligible || len(preview.Blockers) == 0 {
		t.Errorf("preview of removed: %d %s", status, raw)
	}
	var e errorResult
	if status, _ := ts.call(t, "POST", "/api/v1/documents/orders/", token, req, &e); status != http.StatusUnprocessableEntity || e.Error.Code != "verified_company_required" {
		t.Errorf("order of removed: %d %+v", status, e)
	}
	// Name, court or number sent by the client never make an order.
	forged := `{"name": "Rheinbahn AG", "court": "Düsseldorf", "registry_number": "HRB 562", "document_type": "AD", "plan_id": "ad-single"}`
	if status, _ := ts.call(t, "POST", "/api/v1/documents/orders/", token, forged, &e); status < 400 {
		t.Errorf("order without profile id accepted: %d", status)
	}
}

func TestConcurrentIdenticalOrdersMakeOne(t *testing.T) {
	ts, _ := flowServer(t)
	top := ts.flowSearch(t, "Rheinbahn AG Düsseldorf").Candidates[0]
	token := ts.session(t, "race", 5)
	req := map[string]string{"company_profile_id": top.ProfileID, "document_type": "CD", "plan_id": "subscription-basic"}
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = ts.call(t, "POST", "/api/v1/documents/orders/", token, req, nil)
		}()
	}
	wg.Wait()
	created := 0
	for _, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Errorf("status %d", s)
		}
	}
	acct, err := ts.Accounts.Account("race")
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || acct.Credits != 4 {
		t.Errorf("created %d orders, credits left %d; want 1 order and 4 credits", created, acct.Credits)
	}
}

func TestOrdersSurviveRestart(t *testing.T) {
	ts, dir := flowServer(t)
	top := ts.flowSearch(t, "HRB 562 Düsseldorf").Candidates[0]
	key, err := ts.Accounts.CreateAccount("durable", 3)
	if err != nil {
		t.Fatal(err)
	}
	var sess companydocs.Session
	ts.call(t, "POST", "/api/v1/auth/sessions/", "", map[string]string{"api_key": key}, &sess)
	var order companydocs.Order
	if status, raw := ts.call(t, "POST", "/api/v1/documents/orders/", sess.Token, map[string]string{"company_profile_id": top.ProfileID, "document_type": "AD", "plan_id": "ad-single"}, &order); status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	again := startServer(t, dir)
	var got companydocs.Order
	if status, raw := again.call(t, "GET", "/api/v1/documents/orders/"+order.ID+"/", sess.Token, nil, &got); status != 200 || got.ID != order.ID || got.Company.Name != "Rheinbahn AG" {
		t.Errorf("after restart: %d %s", status, raw)
	}
	if err := again.OrderStore.Check(); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
}

func TestSearchErrorsAndRateLimit(t *testing.T) {
	ts, _ := flowServer(t, "--search-rate", "1", "--search-burst", "3")
	for _, body := range []string{``, `not json`, `{"query": ""}`, `{"query": 42}`, `{"query": "x", "mode": "fast"}`, `{"query": "Müller", "limit": 0.5}`, `{"query": "a\u0000b"}`} {
		var e errorResult
		status, raw := ts.call(t, "POST", "/api/v1/documents/companies/search", "", body, &e)
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusBadRequest || e.Error.Code != "invalid_query" || e.Error.Message == "" {
			t.Errorf("body %q: %d %s", body, status, raw)
		}
	}
	limited := false
	for range 10 {
		status, raw := ts.call(t, "POST", "/api/v1/documents/companies/search/", "", `{"query": "Rheinbahn"}`, nil)
		if status == http.StatusTooManyRequests {
			limited = strings.Contains(string(raw), "rate_limited")
			break
		}
	}
	if !limited {
		t.Error("no rate_limited answer after a burst of searches")
	}
}
