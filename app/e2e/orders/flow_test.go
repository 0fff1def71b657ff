package orders

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

func TestOrderFlow(t *testing.T) {
	ts, _ := e2e.FlowServer(t)

	var plans struct{ Plans []companydocs.Plan }
	if status, raw := ts.Call(t, "GET", "/api/v1/documents/plans/", "", nil, &plans); status != 200 || len(plans.Plans) == 0 {
		t.Fatalf("plans: %d %s", status, raw)
	}
	res := ts.FlowSearch(t, "HRB 562 Düsseldorf")
	top := res.Candidates[0]
	if top.Name != "Rheinbahn AG" || top.ConfidenceLabel != companydocs.LabelExact || !top.OrderingEligible || top.ProfileID == "" {
		t.Fatalf("top candidate = %+v", top)
	}
	if res.Understanding.RegisterReference == nil || res.Understanding.RegisterReference.Court != "Düsseldorf" {
		t.Errorf("understanding = %+v", res.Understanding)
	}

	token := ts.Session(t, "acme", 10)
	req := map[string]string{"company_profile_id": top.ProfileID, "document_type": "AD", "plan_id": "ad-single"}
	var preview companydocs.Preview
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/preview/", token, req, &preview); status != 200 || !preview.OrderingEligible || preview.EstimatedTotal != "4.50" {
		t.Fatalf("preview: %d %s", status, raw)
	}
	var order companydocs.Order
	status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, &order, "Idempotency-Key", "flow-1")
	if status != http.StatusCreated || order.Status != "PREVIEW_READY" || order.WorkflowStatus != "started" || order.CompanyProfileID != top.ProfileID {
		t.Fatalf("create: %d %s", status, raw)
	}
	if order.Company.Name != "Rheinbahn AG" || order.Company.RegistryNumber != "HRB 562" {
		t.Errorf("order snapshot = %+v", order.Company)
	}

	var dup e2e.ErrorResult
	if status, _ := ts.Call(t, "POST", "/api/v1/documents/orders", token, req, &dup, "Idempotency-Key", "flow-1"); status != http.StatusConflict || dup.Error.Code != "duplicate_order" || dup.Order == nil || dup.Order.ID != order.ID {
		t.Errorf("repeat by key: %d %+v", status, dup)
	}
	if status, _ := ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, &dup); status != http.StatusConflict || dup.Order == nil || dup.Order.ID != order.ID {
		t.Errorf("repeat by content: %d %+v", status, dup)
	}

	var got companydocs.Order
	if status, raw := ts.Call(t, "GET", "/api/v1/documents/orders/"+order.ID+"/", token, nil, &got); status != 200 || got.ID != order.ID {
		t.Errorf("read own order: %d %s", status, raw)
	}
	other := ts.Session(t, "other", 10)
	var notFound e2e.ErrorResult
	if status, raw := ts.Call(t, "GET", "/api/v1/documents/orders/"+order.ID, other, nil, &notFound); status != http.StatusNotFound || strings.Contains(string(raw), "Rheinbahn") {
		t.Errorf("other account reads order: %d %s", status, raw)
	}
	var list struct{ Orders []companydocs.Order }
	if ts.Call(t, "GET", "/api/v1/documents/orders/", other, nil, &list); len(list.Orders) != 0 {
		t.Errorf("other account lists %d orders", len(list.Orders))
	}
}

func TestOrderGateRejectsWhatSearchMarksNotOrderable(t *testing.T) {
	ts, _ := e2e.FlowServer(t)
	token := ts.Session(t, "gate", 10)
	// A removed company (real fixture record): search says not orderable,
	// the order endpoint agrees.
	res := ts.FlowSearch(t, "Hamburg HRB 32784")
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
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/preview/", token, req, &preview); status != 200 || preview.OrderingEligible || len(preview.Blockers) == 0 {
		t.Errorf("preview of removed: %d %s", status, raw)
	}
	var e e2e.ErrorResult
	if status, _ := ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, &e); status != http.StatusUnprocessableEntity || e.Error.Code != "verified_company_required" {
		t.Errorf("order of removed: %d %+v", status, e)
	}
	// Name, court or number sent by the client never make an order.
	forged := `{"name": "Rheinbahn AG", "court": "Düsseldorf", "registry_number": "HRB 562", "document_type": "AD", "plan_id": "ad-single"}`
	if status, _ := ts.Call(t, "POST", "/api/v1/documents/orders/", token, forged, &e); status < 400 {
		t.Errorf("order without profile id accepted: %d", status)
	}
}

func TestConcurrentIdenticalOrdersMakeOne(t *testing.T) {
	ts, _ := e2e.FlowServer(t)
	top := ts.FlowSearch(t, "Rheinbahn AG Düsseldorf").Candidates[0]
	token := ts.Session(t, "race", 5)
	req := map[string]string{"company_profile_id": top.ProfileID, "document_type": "CD", "plan_id": "subscription-basic"}
	var wg sync.WaitGroup
	statuses := make([]int, 50)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = ts.Call(t, "POST", "/api/v1/documents/orders/", token, req, nil)
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
	ts, dir := e2e.FlowServer(t)
	top := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0]
	key, err := ts.Accounts.CreateAccount("durable", 3)
	if err != nil {
		t.Fatal(err)
	}
	var sess companydocs.Session
	ts.Call(t, "POST", "/api/v1/auth/sessions/", "", map[string]string{"api_key": key}, &sess)
	var order companydocs.Order
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", sess.Token, map[string]string{"company_profile_id": top.ProfileID, "document_type": "AD", "plan_id": "ad-single"}, &order); status != 201 {
		t.Fatalf("create: %d %s", status, raw)
	}
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	again := e2e.StartServer(t, dir)
	var got companydocs.Order
	if status, raw := again.Call(t, "GET", "/api/v1/documents/orders/"+order.ID+"/", sess.Token, nil, &got); status != 200 || got.ID != order.ID || got.Company.Name != "Rheinbahn AG" {
		t.Errorf("after restart: %d %s", status, raw)
	}
	if err := again.OrderStore.Check(); err != nil {
		t.Errorf("bbolt check: %v", err)
	}
}

func TestSearchErrorsAndRateLimit(t *testing.T) {
	ts, _ := e2e.FlowServer(t, "--search-rate", "1", "--search-burst", "3")
	for _, body := range []string{``, `not json`, `{"query": ""}`, `{"query": 42}`, `{"query": "x", "mode": "fast"}`, `{"query": "Müller", "limit": 0.5}`, `{"query": "a\u0000b"}`} {
		var e e2e.ErrorResult
		status, raw := ts.Call(t, "POST", "/api/v1/documents/companies/search", "", body, &e)
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusBadRequest || e.Error.Code != "invalid_query" || e.Error.Message == "" {
			t.Errorf("body %q: %d %s", body, status, raw)
		}
	}
	limited := false
	for range 10 {
		status, raw := ts.Call(t, "POST", "/api/v1/documents/companies/search/", "", `{"query": "Rheinbahn"}`, nil)
		if status == http.StatusTooManyRequests {
			limited = strings.Contains(string(raw), "rate_limited")
			break
		}
	}
	if !limited {
		t.Error("no rate_limited answer after a burst of searches")
	}
}
