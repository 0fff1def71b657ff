package store

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/internal/e2e"
	"companydocs/internal/syncbuf"
)

// newTestMain returns the real Main configured like e2e.StartServer's, without
// running it.
func newTestMain(tb testing.TB, dataDir string, args ...string) *e2e.TestServer {
	tb.Helper()
	s := &e2e.TestServer{Main: app.NewMain(), Out: &syncbuf.Buffer{}, Logs: &syncbuf.Buffer{},
		Client: &http.Client{Timeout: 30 * time.Second}}
	s.Stdout, s.Stderr = s.Out, s.Logs
	base := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--poll-interval", "100ms",
		"--search-rate", "0", "--log-format", "json", "--log-level", "debug"}
	if err := s.ParseFlags(append(base, args...)); err != nil {
		tb.Fatal(err)
	}
	return s
}

// TestSecondServerIsRefused starts two servers on one empty data
// directory: the second is refused with a message naming the directory and
// the first server's pid, before it writes anything, while the first
// finishes ingesting the embedded sample and serves searches.
func TestSecondServerIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "var")
	first := newTestMain(t, dir)
	runErr := make(chan error, 1)
	go func() { runErr <- first.Run(context.Background()) }()
	t.Cleanup(func() { first.Shutdown() })
	e2e.WaitFor(t, "the first server to start ingesting the embedded sample", func() bool {
		return strings.Contains(first.Out.String(), "ingesting the embedded sample")
	})

	second := newTestMain(t, dir)
	err := second.Run(context.Background())
	second.Close()
	wantRefused(t, err, dir)
	if out := second.Out.String(); out != "" {
		t.Errorf("the refused server printed %q", out)
	}

	if err := <-runErr; err != nil {
		t.Fatalf("the first server failed: %v\n%s", err, first.Logs.String())
	}
	first.Base = "http://" + first.Addr()
	if got := first.Search(t, "Siemens"); len(got) == 0 {
		t.Fatal("the first server finds nothing after the second was refused")
	}

	before := e2e.TreeState(t, dir)
	third := newTestMain(t, dir, "--demo")
	err = third.Run(context.Background())
	third.Close()
	wantRefused(t, err, dir)
	if after := e2e.TreeState(t, dir); after != before {
		t.Errorf("a refused server changed the data directory:\nbefore\n%s\nafter\n%s", before, after)
	}
	if got := first.Search(t, "Siemens"); len(got) == 0 {
		t.Fatal("the first server finds nothing after a third was refused")
	}
}

func wantRefused(tb testing.TB, err error, dir string) {
	tb.Helper()
	var inUse *app.DataDirInUseError
	if !errors.As(err, &inUse) {
		tb.Errorf("second server: got %v, want a refusal because the data directory is in use", err)
		return
	}
	msg := err.Error()
	for _, want := range []string{dir, "pid " + strconv.Itoa(os.Getpid()), "serve", "--data-dir"} {
		if !strings.Contains(msg, want) {
			tb.Errorf("refusal %q does not name %q", msg, want)
		}
	}
}

// TestAccountsRefusedWhileServing: a running server answers the accounts
// command on its socket; where no socket answers (a server still
// ingesting has the lock but has not opened orders.db yet, simulated by
// removing the socket file), the command takes the same lock as a server,
// so it is refused with the holder's pid, and works again after the
// server stops.
func TestAccountsRefusedWhileServing(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.SampleFile(t))
	s := e2e.StartServer(t, dir)
	var stdout, stderr bytes.Buffer
	if err := app.RunCommand(context.Background(), []string{"accounts", "list", "--data-dir", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("accounts list through the server's socket: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, bbolt.SocketFile)); err != nil {
		t.Fatal(err)
	}
	err := app.RunCommand(context.Background(), []string{"accounts", "list", "--data-dir", dir}, &stdout, &stderr)
	var inUse *app.DataDirInUseError
	if !errors.As(err, &inUse) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(err.Error(), "stop the server") {
		t.Fatalf("accounts list while serving without its socket: %v", err)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := app.RunCommand(context.Background(), []string{"accounts", "list", "--data-dir", dir}, &stdout, &stderr); err != nil {
		t.Fatalf("accounts list after the server stopped: %v", err)
	}
}
