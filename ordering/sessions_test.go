package ordering

import (
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
)

func TestSessions(t *testing.T) { forEachStore(t, testSessions) }

func testSessions(t *testing.T) {
	c := testclock.New()
	s := MustOpen(t, nil, nil, Options{Now: c.Now, SessionTTL: time.Hour})
	key, err := s.CreateAccount("acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.Token, sessionTokenPrefix) || !sess.ExpiresAt.Equal(c.Now().Add(time.Hour)) {
		t.Errorf("session = %+v", sess)
	}
	if acct, err := s.Authenticate(ctx, sess.Token); err != nil || acct != "acme" {
		t.Fatalf("Authenticate = %q, %v", acct, err)
	}

	t.Run("expired", func(t *testing.T) {
		c.Advance(time.Hour - time.Second)
		if _, err := s.Authenticate(ctx, sess.Token); err != nil {
			t.Errorf("a second before expiry: %v", err)
		}
		c.Advance(time.Second)
		e := wantCode(t, func() error { _, err := s.Authenticate(ctx, sess.Token); return err }(), companydocs.EUNAUTHORIZED)
		if !strings.Contains(e.Message, "expired") {
			t.Errorf("message %q does not say expired", e.Message)
		}
	})
	t.Run("revoked", func(t *testing.T) {
		live, err := s.CreateSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Authenticate(ctx, live.Token); err != nil {
			t.Fatal(err) // the session is now answered from memory
		}
		if err := s.RevokeSession(ctx, live.Token); err != nil {
			t.Fatal(err)
		}
		_, err = s.Authenticate(ctx, live.Token)
		if e := wantCode(t, err, companydocs.EUNAUTHORIZED); !strings.Contains(e.Message, "ended") {
			t.Errorf("message %q does not say ended", e.Message)
		}
	})
	t.Run("unknown token", func(t *testing.T) {
		for _, tok := range []string{"", "cds_nope", sess.Token + "x", key} {
			_, err := s.Authenticate(ctx, tok)
			wantCode(t, err, companydocs.EUNAUTHORIZED)
		}
		wantCode(t, s.RevokeSession(ctx, "cds_nope"), companydocs.EUNAUTHORIZED)
	})
	t.Run("wrong API key", func(t *testing.T) {
		for _, k := range []string{"cdk_nope", key[:len(key)-1], sess.Token} {
			_, err := s.CreateSession(ctx, k)
			wantCode(t, err, companydocs.EUNAUTHORIZED)
		}
		_, err := s.CreateSession(ctx, "")
		wantCode(t, err, companydocs.EVALIDATION)
	})
}

// TestRevocationWinsOverConcurrentChecks revokes sessions while other
// goroutines check them: once RevokeSession returns, no check may pass,
// however the checks interleaved with the revocation.
func TestRevocationWinsOverConcurrentChecks(t *testing.T) {
	forEachStore(t, testRevocationWinsOverConcurrentChecks)
}

func testRevocationWinsOverConcurrentChecks(t *testing.T) {
	s := MustOpen(t, nil, nil, Options{})
	key, err := s.CreateAccount("acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		sess, err := s.CreateSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
						s.Authenticate(ctx, sess.Token)
					}
				}
			}()
		}
		if err := s.RevokeSession(ctx, sess.Token); err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if _, err := s.Authenticate(ctx, sess.Token); companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED {
				t.Fatalf("check after revocation: %v, want unauthorized", err)
			}
		}
		close(stop)
		wg.Wait()
	}
}

// TestSessionsPerAccountAreCapped creates 250 sessions for one account:
// it keeps the newest maxSessionsPerAccount, the older tokens stop working
// (also one that was answered from memory before), and another account's
// session is untouched.
func TestSessionsPerAccountAreCapped(t *testing.T) { forEachStore(t, testSessionsPerAccountAreCapped) }

func testSessionsPerAccountAreCapped(t *testing.T) {
	c := testclock.New()
	s := MustOpen(t, nil, nil, Options{Now: c.Now, SweepInterval: -1})
	key, _ := s.CreateAccount("acme", 0)
	other, _ := s.CreateAccount("beta", 0)
	otherSess, err := s.CreateSession(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	const n = 250
	tokens := make([]string, n)
	for i := range tokens {
		c.Advance(time.Millisecond)
		sess, err := s.CreateSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		tokens[i] = sess.Token
		if i == 0 {
			if _, err := s.Authenticate(ctx, sess.Token); err != nil {
				t.Fatal(err) // now answered from memory
			}
		}
	}
	if got := countSessions(t, s, "acme"); got != maxSessionsPerAccount {
		t.Errorf("acme keeps %d sessions, want %d", got, maxSessionsPerAccount)
	}
	for i, tok := range tokens {
		_, err := s.Authenticate(ctx, tok)
		if live := i >= n-maxSessionsPerAccount; live != (err == nil) {
			t.Errorf("session %d of %d: live=%v, Authenticate error %v", i+1, n, live, err)
		}
	}
	if acct, err := s.Authenticate(ctx, otherSess.Token); err != nil || acct != "beta" {
		t.Errorf("beta's session after acme's cap: %q, %v", acct, err)
	}
}

// TestBackgroundSweep lets the sweeper of the service delete expired
// sessions on its own; a live session stays. Close stops the sweeper (the
// test would hang otherwise). The file is checked after Close: bbolt's
// check reads the freelist unlocked and races with a concurrent commit.
func TestBackgroundSweep(t *testing.T) { forEachStore(t, testBackgroundSweep) }

func testBackgroundSweep(t *testing.T) {
	c := testclock.New()
	dir := t.TempDir()
	s, err := OpenAt(t, dir, nil, nil, Options{Now: c.Now, SessionTTL: time.Minute, SweepInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
		MustReopenAndCheck(t, dir)
	}()
	key, _ := s.CreateAccount("acme", 0)
	var expired []string
	for range 10 {
		sess, err := s.CreateSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		expired = append(expired, sess.Token)
	}
	c.Advance(30 * time.Second)
	live, err := s.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(31 * time.Second)
	deadline := time.Now().Add(30 * time.Second) // a hang guard, not a timing check
	for countSessions(t, s, "acme") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions left after 30 s of sweeping, want 1", countSessions(t, s, "acme"))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := s.Authenticate(ctx, live.Token); err != nil {
		t.Errorf("live session after the sweep: %v", err)
	}
	for _, tok := range expired {
		_, err := s.Authenticate(ctx, tok)
		wantCode(t, err, companydocs.EUNAUTHORIZED)
	}
}

// MustReopenAndCheck opens a closed store without a sweeper and checks it.
func MustReopenAndCheck(t *testing.T, dir string) {
	t.Helper()
	s, err := OpenAt(t, dir, nil, nil, Options{SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mustCheck(t, s)
}

func countSessions(t *testing.T, s *service, account string) int {
	t.Helper()
	var n int
	err := s.store.View(ctx, func(tx Tx) (err error) {
		n, err = tx.CountSessions(account)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAccounts(t *testing.T) { forEachStore(t, testAccounts) }

func testAccounts(t *testing.T) {
	s := MustOpen(t, nil, nil, Options{})
	key, err := s.CreateAccount("acme", 5)
	if err != nil || !strings.HasPrefix(key, apiKeyPrefix) || len(key) != len(apiKeyPrefix)+43 {
		t.Fatalf("CreateAccount = %q, %v", key, err)
	}
	_, err = s.CreateAccount("acme", 1)
	wantCode(t, err, companydocs.EVALIDATION)
	for _, bad := range []string{"", "has space", "a\x00b", strings.Repeat("a", 65), "-lead"} {
		_, err := s.CreateAccount(bad, 1)
		wantCode(t, err, companydocs.EVALIDATION)
	}
	_, err = s.CreateAccount("neg", -1)
	wantCode(t, err, companydocs.EVALIDATION)
	MustAccount(t, s, "beta", 0)

	if err := s.AddCredits("acme", 7); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.AddCredits("acme", -13), companydocs.EINSUFFICIENTFUNDS)
	wantCode(t, s.AddCredits("nobody", 1), companydocs.ENOTFOUND)
	list, err := s.All()
	if err != nil || len(list) != 2 || list[0].Name != "acme" || list[0].Credits != 12 || list[1].Name != "beta" {
		t.Errorf("Accounts = %+v, %v", list, err)
	}
}

// TestDemoAccountKeyRotates: every serve --demo start replaces the demo
// key; the old key and every session made with it stop working.
func TestDemoAccountKeyRotates(t *testing.T) { forEachStore(t, testDemoAccountKeyRotates) }

func testDemoAccountKeyRotates(t *testing.T) {
	s := MustOpen(t, nil, nil, Options{})
	first, created, err := s.EnsureDemoAccount(DemoCredits)
	if err != nil || !created {
		t.Fatalf("first start: created=%v err=%v", created, err)
	}
	sess, err := s.CreateSession(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, sess.Token); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCredits(DemoAccount, -1); err != nil {
		t.Fatal(err)
	}
	second, created, err := s.EnsureDemoAccount(DemoCredits)
	if err != nil || created || second == first {
		t.Fatalf("second start: created=%v err=%v same key=%v", created, err, second == first)
	}
	if _, err := s.CreateSession(ctx, first); companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED {
		t.Errorf("old demo key still accepted: %v", err)
	}
	if _, err := s.CreateSession(ctx, second); err != nil {
		t.Errorf("new demo key refused: %v", err)
	}
	// Rotating a key ends its sessions, also one the cache holds.
	_, err = s.Authenticate(ctx, sess.Token)
	if companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED || !strings.Contains(err.Error(), "key of its account was replaced") {
		t.Errorf("session made with the rotated key: %v, want unauthorized saying the key was replaced", err)
	}
	if a, _ := s.Account(DemoAccount); a.Credits != DemoCredits-1 {
		t.Errorf("demo credits = %d after restart, want %d kept", a.Credits, DemoCredits-1)
	}
}
