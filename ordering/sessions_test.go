package ordering

import (
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
)

func TestSessions(t *testing.T) {
	c := newClock()
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

func TestSecretsAreStoredOnlyAsHashes(t *testing.T) {
	s := MustOpen(t, nil, nil, Options{})
	key, err := s.CreateAccount("acme", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data := readFile(t, s.Path()) // every commit is on disk already
	for _, secret := range []string{key, sess.Token, key[len(apiKeyPrefix):], sess.Token[len(sessionTokenPrefix):]} {
		if strings.Contains(data, secret) {
			t.Errorf("database file holds the secret %q in clear", secret)
		}
	}
}

func TestExpiredSessionsArePruned(t *testing.T) {
	c := newClock()
	s := MustOpen(t, nil, nil, Options{Now: c.Now, SessionTTL: time.Minute})
	key, _ := s.CreateAccount("acme", 0)
	var old []string
	for range 20 {
		sess, err := s.CreateSession(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, sess.Token)
	}
	c.Advance(time.Hour)
	if _, err := s.CreateSession(ctx, key); err != nil {
		t.Fatal(err)
	}
	var left int
	for _, tok := range old {
		if _, err := s.Authenticate(ctx, tok); strings.Contains(companydocs.ErrorMessage(err), "expired") {
			left++
		}
	}
	// One pass looks at up to pruneBatch sessions, more than there are.
	if left != 0 {
		t.Errorf("%d of %d expired sessions left after a pass", left, len(old))
	}
}

func TestAccounts(t *testing.T) {
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
	list, err := s.Accounts()
	if err != nil || len(list) != 2 || list[0].Name != "acme" || list[0].Credits != 12 || list[1].Name != "beta" {
		t.Errorf("Accounts = %+v, %v", list, err)
	}
}

func TestDemoAccountKeyRotates(t *testing.T) {
	s := MustOpen(t, nil, nil, Options{})
	first, created, err := s.EnsureDemoAccount()
	if err != nil || !created {
		t.Fatalf("first start: created=%v err=%v", created, err)
	}
	sess, err := s.CreateSession(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddCredits(DemoAccount, -1); err != nil {
		t.Fatal(err)
	}
	second, created, err := s.EnsureDemoAccount()
	if err != nil || created || second == first {
		t.Fatalf("second start: created=%v err=%v same key=%v", created, err, second == first)
	}
	if _, err := s.CreateSession(ctx, first); companydocs.ErrorCode(err) != companydocs.EUNAUTHORIZED {
		t.Errorf("old demo key still accepted: %v", err)
	}
	if _, err := s.CreateSession(ctx, second); err != nil {
		t.Errorf("new demo key refused: %v", err)
	}
	if _, err := s.Authenticate(ctx, sess.Token); err != nil {
		t.Errorf("session of the old key ended by rotation: %v", err)
	}
	if a, _ := s.Account(DemoAccount); a.Credits != DemoCredits-1 {
		t.Errorf("demo credits = %d after restart, want %d kept", a.Credits, DemoCredits-1)
	}
}
