package store

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/internal/e2e"
)

// TestAccountsWhileServing runs the accounts commands against a data
// directory a real server on 127.0.0.1 holds: before the fix they needed
// the data directory's lock and told the operator to stop the server.
// They now reach the server through its owner-only socket: an operator
// created meanwhile signs in at once and sees the queue, a credit counts
// at once, a refusal says its sentence and changes nothing. Without a
// server the same commands work on the file directly.
func TestAccountsWhileServing(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 500, e2e.SampleFile(t))
	// No server yet: the command works on orders.db itself.
	if _, err := os.Stat(filepath.Join(dir, bbolt.SocketFile)); !os.IsNotExist(err) {
		t.Fatalf("a store socket before any server: %v", err)
	}
	early := createWithCLI(t, dir, "early", "--credits", "2")

	s := e2e.StartServer(t, dir)
	sock, err := os.Stat(filepath.Join(dir, bbolt.SocketFile))
	if err != nil || sock.Mode()&os.ModeSocket == 0 || sock.Mode().Perm() != 0o600 {
		t.Fatalf("store socket %v (%v), want a socket only its owner may open (0600)", sock, err)
	}
	if a := s.Account(t, "/api/v1/account", e2e.AccessLogin(t, s, early.APIKey)); a.Credits != 2 || a.Role != companydocs.RoleClient {
		t.Errorf("the account made without a server sees %+v, want a client with 2 credits", a)
	}

	desk := createWithCLI(t, dir, "desk", "--operator")
	operator := e2e.AccessLogin(t, s, desk.APIKey)
	if status, raw, _ := s.Do(t, "GET", "/api/v1/operator/orders/", "", "Authorization", "Bearer "+operator); status != http.StatusOK {
		t.Fatalf("the new operator's queue: %d %s", status, raw)
	}
	client := e2e.AccessLogin(t, s, createWithCLI(t, dir, "acme").APIKey)
	if out, err := e2e.RunCmd("accounts", "credit", "--data-dir", dir, "--name", "acme", "--add", "3"); err != nil || !strings.Contains(out, "Added 3 credits to acme.") {
		t.Fatalf("accounts credit while serving: %v\n%s", err, out)
	}
	if a := s.Account(t, "/api/v1/account", client); a.Credits != 3 {
		t.Errorf("balance right after accounts credit %d, want 3", a.Credits)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"credit", "--name", "acme", "--add", "-5"}, `Account "acme" has only 3 credit(s); it cannot lose 5.`},
		{[]string{"credit", "--name", "nobody", "--add", "1"}, "nobody"},
		{[]string{"create", "--name", "acme"}, `An account named "acme" exists already.`},
	} {
		out, err := e2e.RunCmd(append(append([]string{"accounts"}, c.args...), "--data-dir", dir)...)
		if err == nil || app.ExitCode(err) != 1 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("accounts %v while serving: %v (exit %d), want %q\n%s", c.args, err, app.ExitCode(err), c.want, out)
		}
	}
	if a := s.Account(t, "/api/v1/account", client); a.Credits != 3 {
		t.Errorf("balance after the refusals %d, want 3", a.Credits)
	}
	out, err := e2e.RunCmd("accounts", "list", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "desk") || !strings.Contains(out, "operator") || !strings.Contains(out, "early") {
		t.Errorf("accounts list while serving: %v\n%s", err, out)
	}
	if !strings.Contains(s.Logs.String(), "account created through the store socket") {
		t.Errorf("the server did not log the accounts it created")
	}
}

// createWithCLI runs accounts create --json in dir and returns its answer.
func createWithCLI(t *testing.T, dir, name string, args ...string) bbolt.CreatedAccount {
	t.Helper()
	out, err := e2e.RunCmd(append([]string{"accounts", "create", "--data-dir", dir, "--name", name, "--json"}, args...)...)
	if err != nil {
		t.Fatalf("accounts create %s: %v\n%s", name, err, out)
	}
	var a bbolt.CreatedAccount
	if err := json.Unmarshal([]byte(out), &a); err != nil || a.Name != name || !strings.HasPrefix(a.APIKey, "cdk_") {
		t.Fatalf("accounts create %s printed %q (%v)", name, out, err)
	}
	return a
}
