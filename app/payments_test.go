package app

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/internal/stripemocktest"
)

// stripePlans is a plans file with one plan paid through Stripe (AD and
// CD, so that one account can hold two open orders of one company) and
// the embedded credit plan.
const stripePlans = `{"plans": [
  {"id": "stripe-single", "name": "Register printout, paid by card", "kind": "one_off", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "4.50", "credit_cost": 0, "payment": "stripe"},
  {"id": "subscription-basic", "name": "Subscription", "kind": "subscription", "document_types": ["AD", "CD"],
   "currency": "EUR", "price": "0.00", "credit_cost": 1, "watch_limit": 25}
]}`

// stripeSecretKey is a fresh test key per run, so that the log check
// cannot pass by a key that happens to be absent anyway.
func stripeSecretKey(t *testing.T) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "sk_test_" + hex.EncodeToString(b)
}

// checkNoStripeSecrets checks that neither secret is in the logs, the
// standard output or /metrics.
func checkNoStripeSecrets(t *testing.T, ts *testServer, key string) {
	t.Helper()
	_, metrics, _ := ts.do(t, "GET", "/metrics", "")
	for where, text := range map[string]string{"logs": ts.logs.String(), "stdout": ts.stdout.String(), "metrics": string(metrics)} {
		for _, s := range []string{key, stripemocktest.Secret} {
			if strings.Contains(text, s) {
				t.Errorf("the %s hold a Stripe secret", where)
			}
		}
	}
}

// TestStripeConfiguration: serve refuses to start with a plan paid
// through Stripe and a missing key, naming the variable; the keys come
// from the environment or from files (both at once is refused); the
// usage never shows them; the embedded plans (--demo) need no Stripe.
func TestStripeConfiguration(t *testing.T) {
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(stripePlans), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustBuild(t, dir, 200, sampleFile(t))
	urls := []string{"--stripe-success-url", "https://docs.example.com/ok", "--stripe-cancel-url", "https://docs.example.com/back"}
	run := func(t *testing.T, args ...string) (*testServer, error) {
		t.Helper()
		s := newTestMain(t, dir, args...)
		err := s.Run(t.Context())
		t.Cleanup(func() { s.shutdown() })
		return s, err
	}
	t.Run("no key", func(t *testing.T) {
		t.Setenv(EnvStripeWebhookSecret, stripemocktest.Secret)
		// On a data directory of its own: a refused start touches nothing
		// there, not even LOCK.
		fresh := t.TempDir()
		s := newTestMain(t, fresh, append(urls, "--plans", plans)...)
		err := s.Run(t.Context())
		t.Cleanup(func() { s.shutdown() })
		if !errors.Is(err, errUsage) || !strings.Contains(fmt.Sprint(err), EnvStripeSecretKey) || !strings.Contains(fmt.Sprint(err), "stripe-single") {
			t.Fatalf("start without %s: %v, want a usage error naming it and the plan", EnvStripeSecretKey, err)
		}
		if entries, _ := os.ReadDir(fresh); len(entries) > 0 {
			t.Errorf("the refused start wrote %s into the data directory", entries[0].Name())
		}
	})
	t.Run("no webhook secret and no URLs", func(t *testing.T) {
		t.Setenv(EnvStripeSecretKey, stripeSecretKey(t))
		_, err := run(t, "--plans", plans)
		for _, want := range []string{EnvStripeWebhookSecret, "COMPANYDOCS_STRIPE_SUCCESS_URL", "COMPANYDOCS_STRIPE_CANCEL_URL"} {
			if !strings.Contains(fmt.Sprint(err), want) {
				t.Errorf("start without it: %v, want it named: %s", err, want)
			}
		}
	})
	t.Run("from files", func(t *testing.T) {
		key := stripeSecretKey(t)
		keyFile, secretFile := filepath.Join(t.TempDir(), "key"), filepath.Join(t.TempDir(), "whsec")
		os.WriteFile(keyFile, []byte(key+"\n"), 0o600)
		os.WriteFile(secretFile, []byte(stripemocktest.Secret), 0o600)
		t.Setenv(EnvStripeSecretKey+"_FILE", keyFile)
		t.Setenv(EnvStripeWebhookSecret+"_FILE", secretFile)
		s, err := run(t, append(urls, "--plans", plans)...)
		if err != nil {
			t.Fatal(err)
		}
		if s.stripeKeys.secretKey != key || s.stripeKeys.webhookSecret != stripemocktest.Secret {
			t.Errorf("the keys read from files differ from the files'")
		}
		if printed := fmt.Sprintf("%v %+v %#v", s.Config, s.Config, s.Config); strings.Contains(printed, key) || strings.Contains(printed, stripemocktest.Secret) {
			t.Errorf("printing the configuration shows a key")
		}
		checkNoStripeSecrets(t, &testServer{Main: s.Main, logs: s.logs, stdout: s.stdout, base: "http://" + s.Addr(), client: http.DefaultClient}, key)
	})
	t.Run("both a variable and its file", func(t *testing.T) {
		t.Setenv(EnvStripeSecretKey, stripeSecretKey(t))
		t.Setenv(EnvStripeSecretKey+"_FILE", filepath.Join(t.TempDir(), "key"))
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags(nil); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), EnvStripeSecretKey+"_FILE") {
			t.Fatalf("both set: %v, want a usage error", err)
		}
	})
	t.Run("usage", func(t *testing.T) {
		key := stripeSecretKey(t)
		t.Setenv(EnvStripeSecretKey, key)
		m := NewMain()
		var out bytes.Buffer
		m.Stdout, m.Stderr = &out, &out
		m.ParseFlags([]string{"--help"})
		if !strings.Contains(out.String(), "stripe-success-url") || strings.Contains(out.String(), key) {
			t.Errorf("serve --help lists the Stripe flags: %v, and shows the key: %v", strings.Contains(out.String(), "stripe-success-url"), strings.Contains(out.String(), key))
		}
	})
	t.Run("session lifetime out of Stripe's bounds", func(t *testing.T) {
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags([]string{"--stripe-session-ttl", "10m"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--stripe-session-ttl") {
			t.Fatalf("--stripe-session-ttl 10m: %v", err)
		}
	})
	t.Run("refund lease under a second", func(t *testing.T) {
		m := NewMain()
		m.Stderr = &bytes.Buffer{}
		if err := m.ParseFlags([]string{"--refund-lease", "500ms"}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--refund-lease") {
			t.Fatalf("--refund-lease 500ms: %v", err)
		}
	})
	t.Run("the embedded plans need no Stripe", func(t *testing.T) {
		s, err := run(t, "--demo")
		if err != nil || s.refunds != nil {
			t.Fatalf("--demo without Stripe's keys: %v (refunder running: %v)", err, s.refunds != nil)
		}
	})
}
