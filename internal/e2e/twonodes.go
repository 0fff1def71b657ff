package e2e

import (
	"net/http"
	"testing"

	"companydocs/ordering"
)

// TwoNodesRecords is the size of the generation both nodes serve.
const TwoNodesRecords = 300

// Call sends a request and returns the status and the raw body; status 0
// is a failed connection.
func (s *CrashServer) Call(tb testing.TB, method, path, contentType, token, body, idemKey string) (int, []byte) {
	status, raw, err := s.Exchange(method, path, contentType, token, body, idemKey)
	if status == -1 {
		tb.Fatal(err)
	}
	if err != nil {
		tb.Errorf("%s %s: %v", method, path, err)
	}
	return status, raw
}

// TwoNodeAccount creates an account in the shared database and opens a
// session for it on node s.
func TwoNodeAccount(t *testing.T, accounts *ordering.Accounts, s *CrashServer, name, role string, credits int64) string {
	t.Helper()
	key, err := accounts.CreateAccountWithRole(name, role, credits)
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	if status := s.Post(t, "/api/v1/auth/sessions", "", `{"api_key":"`+key+`"}`, "", &sess); status != http.StatusCreated || sess.Token == "" {
		t.Fatalf("session for %s on %s: status %d", name, s.Base, status)
	}
	return sess.Token
}

// DataDir is the --data-dir the node was started with.
func (s *CrashServer) DataDir(tb testing.TB) string {
	for i, arg := range s.Cmd.Args {
		if arg == "--data-dir" && i+1 < len(s.Cmd.Args) {
			return s.Cmd.Args[i+1]
		}
	}
	tb.Fatal("the node has no --data-dir")
	return ""
}
