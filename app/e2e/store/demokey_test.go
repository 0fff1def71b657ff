package store

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/internal/e2e"
)

// TestDemoKeyKeptAcrossRestarts: serve --demo prints a key and keeps it in
// the data directory; a restart of the same directory prints the same key,
// which still opens a session. Without the kept file (or with a key that
// is no longer the demo account's) a start issues a new key, says so, and
// the old key is refused.
func TestDemoKeyKeptAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 100, e2e.SampleFile(t))
	path := filepath.Join(dir, app.DemoKeyName)
	signIn := func(s *e2e.TestServer, key string) int {
		code, _, _ := s.Do(t, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+key+`"}`)
		return code
	}

	first := e2e.StartServer(t, dir, "--demo")
	if want := "Demo API key (new, kept in " + path + " for the next starts of this data directory): " + first.DemoKey; !strings.Contains(first.Out.String(), want) {
		t.Errorf("the first start printed %q, want %q", first.Out.String(), want)
	}
	if err := first.Shutdown(); err != nil {
		t.Fatal(err)
	}
	again := e2e.StartServer(t, dir, "--demo")
	if again.DemoKey != first.DemoKey || !strings.Contains(again.Out.String(), "Demo API key (the one of the last start, kept in "+path+"): "+first.DemoKey) {
		t.Errorf("the restart printed %q, want the first start's key %s", again.Out.String(), first.DemoKey)
	}
	if code := signIn(again, first.DemoKey); code != http.StatusCreated {
		t.Errorf("the kept key opens no session after a restart: %d", code)
	}
	if err := again.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the kept key's file: %v, mode %v; want it readable by its owner alone", err, info.Mode().Perm())
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fresh := e2e.StartServer(t, dir, "--demo")
	if fresh.DemoKey == first.DemoKey || !strings.Contains(fresh.Out.String(), "Demo API key (new, kept in ") {
		t.Errorf("without the kept file the start printed %q, want a new key", fresh.Out.String())
	}
	if code := signIn(fresh, first.DemoKey); code != http.StatusUnauthorized {
		t.Errorf("the replaced key: %d, want 401", code)
	}
	if code := signIn(fresh, fresh.DemoKey); code != http.StatusCreated {
		t.Errorf("the new key: %d, want 201", code)
	}
}
