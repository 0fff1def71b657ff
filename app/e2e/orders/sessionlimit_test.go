package orders

import (
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"companydocs/internal/e2e"
)

// TestSessionCreationIsRateLimited sends session requests from several
// loopback addresses (127.0.0.x) with --session-burst 3 and a rate that
// refills nothing during the test: past the burst an address, or a key,
// gets 429 rate_limited with Retry-After in the error shape, bad keys
// count against their address, and another address or key is unaffected.
func TestSessionCreationIsRateLimited(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 50, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	s := e2e.StartServer(t, dir, "--session-rate", "0.001", "--session-burst", "3")
	keyA, keyB := mustAPIKey(t, s, "alpha"), mustAPIKey(t, s, "beta")
	create := func(key string) string { return `{"api_key":"` + key + `"}` }
	const path = "/api/v1/auth/sessions/"

	from(t, s, "127.0.0.1", func() {
		for range 3 {
			s.MustJSON(t, http.StatusCreated, nil, "POST", path, create(keyA))
		}
		s.WantError(t, http.StatusTooManyRequests, "rate_limited", "POST", path, create(keyB))
		status, _, h := s.Do(t, "POST", path, create(keyB))
		if n, err := strconv.Atoi(h.Get("Retry-After")); status != http.StatusTooManyRequests || err != nil || n < 1 {
			t.Errorf("status %d, Retry-After %q; want 429 with whole seconds >= 1", status, h.Get("Retry-After"))
		}
	})
	from(t, s, "127.0.0.2", func() {
		// keyA has used its burst from the first address.
		s.WantError(t, http.StatusTooManyRequests, "rate_limited", "POST", path, create(keyA))
		s.MustJSON(t, http.StatusCreated, nil, "POST", path, create(keyB))
	})
	from(t, s, "127.0.0.3", func() {
		for _, guess := range []string{"cdk_guess1", "cdk_guess2"} {
			s.WantError(t, http.StatusUnauthorized, "unauthorized", "POST", path, create(guess))
		}
		s.MustJSON(t, http.StatusCreated, nil, "POST", path, create(keyB))
		s.WantError(t, http.StatusTooManyRequests, "rate_limited", "POST", path, create("cdk_guess3"))
	})
	if n, _ := s.Metric(t, "companydocs_http_errors_total", "code", "rate_limited"); n != 4 {
		t.Errorf("rate_limited answers counted %v, want 4", n)
	}
	seen := s.CheckAgainstOpenAPI(t)
	if seen[http.StatusTooManyRequests] != 4 {
		t.Errorf("statuses seen %v, want four 429", seen)
	}
}

// from sends the requests of fn from the loopback address local.
func from(t *testing.T, s *e2e.TestServer, local string, fn func()) {
	t.Helper()
	saved := s.Client
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 10 * time.Second}
	s.Client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: dialer.DialContext}}
	defer func() { s.Client = saved }()
	fn()
}

func mustAPIKey(t *testing.T, s *e2e.TestServer, account string) string {
	t.Helper()
	key, err := s.Accounts.CreateAccount(account, 0)
	if err != nil {
		t.Fatal(err)
	}
	return key
}
