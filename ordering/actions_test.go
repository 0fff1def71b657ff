package ordering

import (
	"bytes"
	"io"
	"slices"
	"testing"

	"companydocs"
)

// wantActions is what each role may do in each status, spelled out, so
// that a change of the transition table shows up here as a decision.
var wantActions = map[string]map[string][]string{
	companydocs.OrderStatusPreviewReady: {companydocs.RoleClient: {ActionCancel}, companydocs.RoleOperator: {ActionPay, ActionCancel}},
	companydocs.OrderStatusPaid:         {companydocs.RoleClient: {ActionCancel}, companydocs.RoleOperator: {ActionRequest, ActionFail, ActionCancel}},
	companydocs.OrderStatusRequested:    {companydocs.RoleClient: {}, companydocs.RoleOperator: {ActionDeliver, ActionFail, ActionCancel}},
	companydocs.OrderStatusDelivered:    {companydocs.RoleClient: {ActionDownload}, companydocs.RoleOperator: {}},
	companydocs.OrderStatusFailed:       {companydocs.RoleClient: {}, companydocs.RoleOperator: {}},
	companydocs.OrderStatusCancelled:    {companydocs.RoleClient: {}, companydocs.RoleOperator: {}},
}

// pathTo is the operator's way from PREVIEW_READY to each status.
var pathTo = map[string][]string{
	companydocs.OrderStatusPreviewReady: nil,
	companydocs.OrderStatusPaid:         {ActionPay},
	companydocs.OrderStatusRequested:    {ActionPay, ActionRequest},
	companydocs.OrderStatusDelivered:    {ActionPay, ActionRequest, ActionDeliver},
	companydocs.OrderStatusFailed:       {ActionPay, ActionFail},
	companydocs.OrderStatusCancelled:    {ActionCancel},
}

// TestAllowedActions brings an order into every status and checks, for
// the client that owns it and for an operator, that every answer showing
// it lists exactly the actions of wantActions; then it tries every action
// as each of them on a fresh order in that status: a listed action
// succeeds and its answer lists the actions of the new status, an action
// not listed is refused and changes nothing.
func TestAllowedActions(t *testing.T) { forEachStore(t, testAllowedActions) }

func testAllowedActions(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	caller := map[string]string{companydocs.RoleClient: acct, companydocs.RoleOperator: op}
	orderIn := func(status string) *companydocs.Order {
		t.Helper()
		o, err := s.CreateOrder(ctx, acct, request(fx.live[2], "CD", "cd-single"), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range pathTo[status] {
			if _, err := act(s, op, o.ID, step); err != nil {
				t.Fatalf("%s on the way to %s: %v", step, status, err)
			}
		}
		return o
	}
	for _, status := range companydocs.OrderStatuses {
		o := orderIn(status)
		checkShownActions(t, s, acct, op, o.ID, status)
		closeOrder(t, s, op, o.ID)
		for _, role := range []string{companydocs.RoleClient, companydocs.RoleOperator} {
			for _, action := range Actions {
				o := orderIn(status)
				listed := slices.Contains(wantActions[status][role], action)
				got, err := act(s, caller[role], o.ID, action)
				switch {
				case listed && err != nil:
					t.Errorf("%s %s on %s is listed but failed: %v", role, action, status, err)
				case listed && got != nil && !slices.Equal(got.AllowedActions, wantActions[got.Status][role]):
					t.Errorf("%s %s on %s answered %s with actions %q, want %q", role, action, status, got.Status, got.AllowedActions, wantActions[got.Status][role])
				case !listed && err == nil:
					t.Errorf("%s %s on %s is not listed but succeeded", role, action, status)
				}
				if now, _ := s.OperatorOrder(ctx, op, o.ID); !listed && now.Status != status {
					t.Errorf("refused %s %s changed %s to %s", role, action, status, now.Status)
				}
				closeOrder(t, s, op, o.ID)
			}
		}
	}
}

// closeOrder cancels the order unless it is terminal, which frees its
// slot for the next order of the same company, document and plan.
func closeOrder(t *testing.T, s *service, op, id string) {
	t.Helper()
	if now, _ := s.OperatorOrder(ctx, op, id); !companydocs.TerminalStatus(now.Status) {
		if _, err := s.OperatorAction(ctx, op, id, ActionCancel, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// shownOrder is an order as one answer (where) showed it to role.
type shownOrder struct {
	where, role string
	o           *companydocs.Order
}

// checkShownActions compares the actions of every answer that shows the
// order, to its owner and to the operator, with wantActions.
func checkShownActions(t *testing.T, s *service, acct, op, id, status string) {
	t.Helper()
	var shown []shownOrder
	if o, err := s.Order(ctx, acct, id); err == nil {
		shown = append(shown, shownOrder{"Order", companydocs.RoleClient, o})
	}
	if list, _, err := s.List(ctx, acct, status, "", 1); err == nil && len(list) == 1 {
		shown = append(shown, shownOrder{"List", companydocs.RoleClient, list[0]})
	}
	if o, err := s.OperatorOrder(ctx, op, id); err == nil {
		shown = append(shown, shownOrder{"OperatorOrder", companydocs.RoleOperator, o})
	}
	if list, _, err := s.OperatorOrders(ctx, op, status, "", 100); err == nil && len(list) > 0 {
		shown = append(shown, shownOrder{"OperatorOrders", companydocs.RoleOperator, list[len(list)-1]})
	}
	if len(shown) != 4 {
		t.Fatalf("order %s in %s: %d of 4 answers show it", id, status, len(shown))
	}
	for _, sh := range shown {
		if sh.o.ID != id || sh.o.Status != status {
			t.Fatalf("%s shows %s in %s, want %s in %s", sh.where, sh.o.ID, sh.o.Status, id, status)
		}
		if want := wantActions[status][sh.role]; sh.o.AllowedActions == nil || !slices.Equal(sh.o.AllowedActions, want) {
			t.Errorf("%s of a %s order lists %q for the %s, want %q", sh.where, status, sh.o.AllowedActions, sh.role, want)
		}
	}
}

// act takes an action as account, through the method a front end calls
// for it; a client's "operator" actions go to the operator's methods,
// which must refuse them.
func act(s *service, account, id, action string) (*companydocs.Order, error) {
	role, err := s.Orders.roleOf(account)
	if err != nil {
		return nil, err
	}
	switch {
	case action == ActionDownload:
		o, r, err := s.Document(ctx, account, id)
		if err == nil {
			_, err = io.Copy(io.Discard, r)
			r.Close()
		}
		return o, err
	case action == ActionDeliver:
		return s.Deliver(ctx, account, id, bytes.NewReader(testPDF))
	case action == ActionCancel && role == companydocs.RoleClient:
		return s.CancelOrder(ctx, account, id, "")
	}
	return s.OperatorAction(ctx, account, id, action, "reason")
}
