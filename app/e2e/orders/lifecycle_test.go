package orders

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestLifecycleEndToEnd drives both plans through the real server: a
// one-off order paid, requested and delivered by an operator and
// downloaded by its owner; a credit order paid at creation, cancelled with
// a refund (once), re-ordered and failed with a refund.
func TestLifecycleEndToEnd(t *testing.T) { e2e.ForEachServerStore(t, testLifecycleEndToEnd) }

func testLifecycleEndToEnd(t *testing.T, storeFlags ...string) {
	ts, _ := e2e.FlowServer(t, storeFlags...)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.Session(t, "acme", 10)
	other := ts.Session(t, "other", 10)
	op := ts.OperatorSession(t, "ops")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"

	one := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "AD", "ad-single"))
	if one.Status != "PREVIEW_READY" || one.NextStep.Kind != "payment" || strings.Contains(one.NextStep.Message, "billing") || len(one.History) != 1 {
		t.Errorf("one-off create: %+v", one.Order)
	}
	ts.WantError(t, 404, "not_found", "GET", orders+one.ID+"/document", "", "Authorization", "Bearer "+client)
	ts.Act(t, 200, "POST", operator+one.ID+"/pay", op, nil)
	ts.Act(t, 200, "POST", operator+one.ID+"/request", op, `{"note":"asked the register"}`)
	upload := operator + one.ID + "/document"
	pdf := []string{"Content-Type", "application/pdf"}
	ts.WantError(t, 422, "validation_error", "PUT", upload, "<html>not a pdf</html>", append(pdf, "Authorization", "Bearer "+op)...)
	ts.WantError(t, 413, "payload_too_large", "PUT", upload, "%PDF-"+strings.Repeat("x", 20<<20), append(pdf, "Authorization", "Bearer "+op)...)
	if o := ts.Act(t, 200, "GET", operator+one.ID+"/", op, nil); o.Status != "REQUESTED" || o.Account != "acme" {
		t.Errorf("after the refused uploads: %s of %q, want REQUESTED of acme", o.Status, o.Account)
	}
	d := ts.Act(t, 200, "PUT", upload, op, string(e2e.LifecyclePDF), pdf...)
	if d.Status != "DELIVERED" || d.WorkflowStatus != "completed" || d.Document == nil || d.Document.DownloadURL != orders+one.ID+"/document" || len(d.History) != 4 {
		t.Fatalf("delivered: %+v", d.Order)
	}
	checkDownload(t, ts, one.ID, d.Document.SHA256, client, other, op)

	// Re-ordering after DELIVERED works; the open one then blocks.
	again := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "AD", "ad-single"))
	ts.WantError(t, 409, "duplicate_order", "POST", orders, e2e.OrderJSON(profile, "AD", "ad-single"), "Authorization", "Bearer "+client)
	ts.Act(t, 200, "POST", orders+again.ID+"/cancel", client, nil)

	credit := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "subscription-basic"))
	if credit.Status != "PREVIEW_READY" || credit.NextStep.Kind != "delivery" || ts.Balance(t, "acme") != 9 {
		t.Errorf("credit create: %+v, balance %d", credit.Order, ts.Balance(t, "acme"))
	}
	if got := ts.Act(t, 200, "GET", orders+credit.ID+"/", client, nil); got.Status != "PAID" || got.History[1].Actor != "system" {
		t.Errorf("credit order after create: %s %+v", got.Status, got.History)
	}
	var paid struct{ Orders []companydocs.Order }
	ts.Call(t, "GET", orders+"?status=PAID", client, nil, &paid)
	if len(paid.Orders) != 1 || paid.Orders[0].ID != credit.ID {
		t.Errorf("?status=PAID lists %d orders", len(paid.Orders))
	}
	ts.WantError(t, 422, "validation_error", "GET", orders+"?status=SHIPPED", "", "Authorization", "Bearer "+client)
	c := ts.Act(t, 200, "POST", orders+credit.ID+"/cancel", client, `{"note":"ordered by mistake"}`)
	if c.Status != "CANCELLED" || c.CreditsRefunded != 1 || ts.Balance(t, "acme") != 10 {
		t.Errorf("cancel: %+v, balance %d, want refunded to 10", c.Order, ts.Balance(t, "acme"))
	}
	ts.WantError(t, 409, "invalid_transition", "POST", orders+credit.ID+"/cancel", "", "Authorization", "Bearer "+client)
	if b := ts.Balance(t, "acme"); b != 10 {
		t.Errorf("balance after the second cancel %d, want 10", b)
	}

	// Re-ordered, requested, failed with a refund; then ordered again.
	credit2 := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "subscription-basic"))
	ts.Act(t, 200, "POST", operator+credit2.ID+"/request", op, nil)
	ts.WantError(t, 422, "validation_error", "POST", operator+credit2.ID+"/fail", `{}`, "Authorization", "Bearer "+op)
	ts.WantError(t, 409, "invalid_transition", "POST", orders+credit2.ID+"/cancel", "", "Authorization", "Bearer "+client)
	f := ts.Act(t, 200, "POST", operator+credit2.ID+"/fail", op, `{"reason":"The register does not answer."}`)
	if f.Status != "FAILED" || f.CreditsRefunded != 1 || ts.Balance(t, "acme") != 10 || !strings.Contains(f.NextStep.Message, "does not answer") {
		t.Errorf("fail: %+v, balance %d", f.Order, ts.Balance(t, "acme"))
	}
	ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "subscription-basic"))

	// Idempotency-Key: replay vs a different request under the same key.
	first := ts.Act(t, 201, "POST", orders, client, e2e.OrderJSON(profile, "CD", "cd-single"), "Idempotency-Key", "k-1")
	var replay, differ e2e.ErrorResult
	ts.Call(t, "POST", orders, client, e2e.OrderJSON(profile, "CD", "cd-single"), &replay, "Idempotency-Key", "k-1")
	status, _ := ts.Call(t, "POST", orders, client, e2e.OrderJSON(profile, "AD", "subscription-basic"), &differ, "Idempotency-Key", "k-1")
	if replay.Error.Code != "duplicate_order" || strings.Contains(replay.Error.Message, "different") || replay.Order == nil || replay.Order.ID != first.ID {
		t.Errorf("replay: %+v", replay)
	}
	if status != 409 || differ.Error.Code != "duplicate_order" || !strings.Contains(differ.Error.Message, "different request") || differ.Order == nil || differ.Order.ID != first.ID {
		t.Errorf("same key, different body: %d %+v", status, differ)
	}

	var queue struct {
		Orders []e2e.LifecycleOrder
	}
	ts.Call(t, "GET", operator+"?status=PREVIEW_READY", op, nil, &queue)
	if len(queue.Orders) != 1 || queue.Orders[0].ID != first.ID || queue.Orders[0].Account != "acme" {
		t.Errorf("operator queue of PREVIEW_READY: %+v", queue.Orders)
	}
	if n, _ := ts.Metric(t, "companydocs_order_transitions_total"); n < 15 {
		t.Errorf("order_transitions_total = %v", n)
	}
	if n, _ := ts.Metric(t, "companydocs_orders_by_status", "status", "CANCELLED"); n != 2 {
		t.Errorf("orders_by_status{CANCELLED} = %v, want 2", n)
	}
	ts.CheckAgainstOpenAPI(t)
}

// checkDownload: the owner gets the bytes with the headers; another
// client 404, an operator 403; If-None-Match answers 304.
func checkDownload(t *testing.T, ts *e2e.TestServer, id, sha, client, other, op string) {
	t.Helper()
	path := "/api/v1/documents/orders/" + id + "/document"
	status, body, h := ts.Do(t, "GET", path, "", "Authorization", "Bearer "+client)
	if status != 200 || !bytes.Equal(body, e2e.LifecyclePDF) {
		t.Fatalf("download: %d %q", status, body)
	}
	today := ""
	if o, err := ts.Ordering.Orders.Order(t.Context(), "acme", id); err == nil {
		today = o.History[len(o.History)-1].At.Format("2006-01-02")
	}
	wantName := `attachment; filename="Duesseldorf_HRB-562_AD_` + today + `.pdf"`
	if h.Get("Content-Type") != "application/pdf" || h.Get("Content-Disposition") != wantName || h.Get("ETag") != `"`+sha+`"` {
		t.Errorf("download headers: %q %q %q, want disposition %s", h.Get("Content-Type"), h.Get("Content-Disposition"), h.Get("ETag"), wantName)
	}
	if status, _, _ := ts.Do(t, "GET", path, "", "Authorization", "Bearer "+client, "If-None-Match", `"`+sha+`"`); status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", status)
	}
	ts.WantError(t, 404, "not_found", "GET", path, "", "Authorization", "Bearer "+other)
	ts.WantError(t, 403, "forbidden", "GET", path, "", "Authorization", "Bearer "+op)
}

// TestEveryIllegalTransitionRefusedOverHTTP brings an order into each
// status and tries every action of the client and the operator: the
// transition table decides, a refusal is 409 invalid_transition and leaves
// the order as it was.
func TestEveryIllegalTransitionRefusedOverHTTP(t *testing.T) {
	ts, _ := e2e.FlowServer(t)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.Session(t, "acme", 0)
	op := ts.OperatorSession(t, "ops")
	type action struct{ actor, name, to string }
	actions := []action{
		{"client", "cancel", "CANCELLED"}, {"operator", "pay", "PAID"}, {"operator", "request", "REQUESTED"},
		{"operator", "document", "DELIVERED"}, {"operator", "fail", "FAILED"}, {"operator", "cancel", "CANCELLED"},
	}
	run := func(id string, a action) (int, []byte) {
		switch {
		case a.actor == "client":
			return ts.Call(t, "POST", "/api/v1/documents/orders/"+id+"/cancel", client, nil, nil)
		case a.name == "document":
			return ts.Call(t, "PUT", "/api/v1/operator/orders/"+id+"/document", op, string(e2e.LifecyclePDF), nil, "Content-Type", "application/pdf")
		}
		return ts.Call(t, "POST", "/api/v1/operator/orders/"+id+"/"+a.name, op, `{"reason":"test"}`, nil)
	}
	paths := map[string][]action{
		"PREVIEW_READY": nil,
		"PAID":          {actions[1]},
		"REQUESTED":     {actions[1], actions[2]},
		"DELIVERED":     {actions[1], actions[2], actions[3]},
		"FAILED":        {actions[1], actions[4]},
		"CANCELLED":     {actions[0]},
	}
	for from, path := range paths {
		for _, a := range actions {
			o := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "AD", "ad-single"))
			for _, step := range path {
				if status, raw := run(o.ID, step); status != 200 {
					t.Fatalf("%s %s: %d %s", step.actor, step.name, status, raw)
				}
			}
			status, raw := run(o.ID, a)
			allowed := companydocs.CanTransition(from, a.to, a.actor)
			if allowed != (status == 200) || (!allowed && (status != 409 || !bytes.Contains(raw, []byte(`"invalid_transition"`)))) {
				t.Errorf("%s %s on %s: %d %s (allowed=%v)", a.actor, a.name, from, status, raw, allowed)
			}
			var now e2e.LifecycleOrder
			ts.Call(t, "GET", "/api/v1/operator/orders/"+o.ID+"/", op, nil, &now)
			if !allowed && now.Status != from {
				t.Errorf("refused %s %s moved %s to %s", a.actor, a.name, from, now.Status)
			}
			if !companydocs.TerminalStatus(now.Status) {
				run(o.ID, actions[5])
			}
		}
	}
}
