package e2e

import (
	"encoding/json"
	"testing"

	"companydocs"
)

// LifecycleOrder is an order as the API answers it, with the operator's
// account field.
type LifecycleOrder struct {
	companydocs.Order
	Account string `json:"account"`
}

// OperatorSession creates the operator account name and returns the token
// of a session for it.
func (s *TestServer) OperatorSession(t *testing.T, name string) string {
	t.Helper()
	key, err := s.Accounts.CreateAccountWithRole(name, companydocs.RoleOperator, 0)
	if err != nil {
		t.Fatal(err)
	}
	return AccessLogin(t, s, key)
}

// Act calls an order route and checks the status; it returns the order.
func (s *TestServer) Act(t *testing.T, want int, method, path, token string, body any, headers ...string) LifecycleOrder {
	t.Helper()
	var o LifecycleOrder
	status, raw := s.Call(t, method, path, token, body, nil, headers...)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, status, raw, want)
	}
	if err := json.Unmarshal(raw, &o); status < 300 && err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, raw)
	}
	return o
}

// Balance returns the credits of the account name.
func (s *TestServer) Balance(t *testing.T, name string) int64 {
	t.Helper()
	a, err := s.Accounts.Account(name)
	if err != nil {
		t.Fatal(err)
	}
	return a.Credits
}

// LifecyclePDF is the document an operator delivers in the lifecycle tests.
var LifecyclePDF = []byte("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n")
