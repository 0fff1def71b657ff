package httpapi

import (
	"companydocs/plansfile"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"companydocs"
)

// TestAllowedActionsFollowTheCaller runs a one-off order of a real
// profile to DELIVERED over HTTP and checks at each step that every
// answer lists the actions of its caller, the client that owns the order
// or the operator, as a JSON array (never null); that a listed action
// succeeds and an unlisted one is refused.
func TestAllowedActionsFollowTheCaller(t *testing.T) {
	profiles, live, removed := loadOrderProfiles(t)
	plans, err := plansfile.Load(shippedPlansFile())
	if err != nil {
		t.Fatal(err)
	}
	accounts, orders := openOrdering(t, profiles, plans)
	s := &orderServer{Server: newTestServer(t, orderingDeps(accounts, orders)), live: live, removed: removed}
	client := s.login(t, mustKey(t, accounts, "acme", 2))
	opKey, err := accounts.CreateAccountWithRole("desk", companydocs.RoleOperator, 0)
	if err != nil {
		t.Fatal(err)
	}
	op := s.login(t, opKey)

	created := s.mustDo(t, "POST", "/api/v1/documents/orders/", client, orderBody(live, "AD", "ad-single"), http.StatusCreated, nil)
	id, _ := created["id"].(string)
	mine := "/api/v1/documents/orders/" + id + "/"
	queued := "/api/v1/operator/orders/" + id + "/"
	wantActionsIn(t, "create", created, "cancel")
	wantActionsIn(t, "client GET", s.mustDo(t, "GET", mine, client, "", http.StatusOK, nil), "cancel")
	wantActionsIn(t, "operator GET", s.mustDo(t, "GET", queued, op, "", http.StatusOK, nil), "pay", "cancel")
	list := s.mustDo(t, "GET", "/api/v1/operator/orders/?status=PREVIEW_READY", op, "", http.StatusOK, nil)
	if items, _ := list["orders"].([]any); len(items) != 1 {
		t.Fatalf("operator queue %v, want the one order", list)
	} else {
		wantActionsIn(t, "operator queue", items[0].(map[string]any), "pay", "cancel")
	}

	wantActionsIn(t, "pay", s.mustDo(t, "POST", queued+"pay", op, "{}", http.StatusOK, nil), "request", "fail", "cancel")
	wantActionsIn(t, "request", s.mustDo(t, "POST", queued+"request", op, "{}", http.StatusOK, nil), "deliver", "fail", "cancel")
	wantActionsIn(t, "client GET when requested", s.mustDo(t, "GET", mine, client, "", http.StatusOK, nil))
	s.wantError(t, "POST", mine+"cancel", client, "{}", http.StatusConflict, companydocs.EINVALIDTRANSITION)

	req := httptest.NewRequest("PUT", queued+"document", strings.NewReader("%PDF-1.7\n% the register's printout\n%%EOF\n"))
	req.Header.Set("Authorization", "Bearer "+op)
	req.Header.Set("Content-Type", "application/pdf")
	resp, err := s.app.Test(req, -1)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("deliver: %v %v", resp.Status, err)
	}
	resp.Body.Close()
	wantActionsIn(t, "operator GET when delivered", s.mustDo(t, "GET", queued, op, "", http.StatusOK, nil))
	wantActionsIn(t, "client GET when delivered", s.mustDo(t, "GET", mine, client, "", http.StatusOK, nil), "download")
	for token, status := range map[string]int{client: http.StatusOK, op: http.StatusForbidden} {
		req := httptest.NewRequest("GET", mine+"document", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := s.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != status {
			t.Errorf("download: status %d, want %d", resp.StatusCode, status)
		}
		resp.Body.Close()
	}
}

// wantActionsIn checks the allowed_actions of an order in an answer: an
// array (never null or absent) holding exactly want, in this order.
func wantActionsIn(t *testing.T, step string, order map[string]any, want ...string) {
	t.Helper()
	raw, ok := order["allowed_actions"].([]any)
	if !ok {
		t.Errorf("%s: allowed_actions is %#v, want an array", step, order["allowed_actions"])
		return
	}
	got := make([]string, len(raw))
	for i, a := range raw {
		got[i], _ = a.(string)
	}
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("%s: allowed_actions %q, want %q", step, got, want)
	}
}
