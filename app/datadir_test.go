package app

import (
	"net/http"
	"testing"
	"time"

	"companydocs/internal/syncbuf"
)

// newTestMain returns the real Main configured like startServer's, without
// running it.
func newTestMain(tb testing.TB, dataDir string, args ...string) *testServer {
	tb.Helper()
	s := &testServer{Main: NewMain(), stdout: &syncbuf.Buffer{}, logs: &syncbuf.Buffer{},
		client: &http.Client{Timeout: 30 * time.Second}}
	s.Stdout, s.Stderr = s.stdout, s.logs
	base := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--poll-interval", "100ms",
		"--search-rate", "0", "--log-format", "json", "--log-level", "debug"}
	if err := s.ParseFlags(append(base, args...)); err != nil {
		tb.Fatal(err)
	}
	return s
}
