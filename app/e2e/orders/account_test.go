package orders

import (
	"net/http"
	"slices"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
)

// TestAccountSeesItself: a client and an operator each see their own
// name, role and balance at GET /api/v1/account, with and without the
// trailing slash, never cached; the client's balance follows a debit and
// the refund of a cancellation.
func TestAccountSeesItself(t *testing.T) {
	ts, _ := e2e.FlowServer(t)
	client := ts.Session(t, "acme", 3)
	key, err := ts.Accounts.CreateAccountWithRole("ops", companydocs.RoleOperator, 7)
	if err != nil {
		t.Fatal(err)
	}
	operator := e2e.AccessLogin(t, ts, key)

	if a := ts.Account(t, "/api/v1/account", client); a.Name != "acme" || a.Role != companydocs.RoleClient || a.Credits != 3 ||
		!slices.Equal(a.Plans, []string{"ad-single", "cd-single", "subscription-basic"}) {
		t.Errorf("client sees %+v", a)
	}
	if a := ts.Account(t, "/api/v1/account/", operator); a.Name != "ops" || a.Role != companydocs.RoleOperator || a.Credits != 7 || len(a.Plans) != 0 {
		t.Errorf("operator sees %+v", a)
	}

	var order companydocs.Order
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(ts.FlowProfile(t), "CD", "subscription-basic"), &order); status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, raw)
	}
	if a := ts.Account(t, "/api/v1/account/", client); a.Credits != 2 {
		t.Errorf("balance after a credit order %d, want 2", a.Credits)
	}
	if status, raw := ts.Call(t, "POST", "/api/v1/documents/orders/"+order.ID+"/cancel", client, nil, nil); status != http.StatusOK {
		t.Fatalf("cancel: %d %s", status, raw)
	}
	if a := ts.Account(t, "/api/v1/account", client); a.Credits != 3 {
		t.Errorf("balance after the cancellation %d, want 3", a.Credits)
	}
}
