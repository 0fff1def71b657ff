package store

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/internal/e2e"
)

// TestServeOnPostgres: serve --store postgres://... keeps accounts and
// sessions in PostgreSQL, where the accounts command changes them while
// the server runs, reports the database in /readyz, its pool and
// whether it answers (companydocs_order_store_up) in /metrics, answers
// 503 service_unavailable while the database is down, and serves again
// once it is back, without a restart.
func TestServeOnPostgres(t *testing.T) {
	ctx := context.Background()
	cluster, url := e2e.StartTestCluster(t)
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	s := e2e.StartServer(t, dir, "--store", url, "--store-pool-size", "3")
	if s.Database == nil || s.OrderStore != nil {
		t.Fatal("--store did not select PostgreSQL")
	}
	s.MustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")
	if n, ok := s.Metric(t, "companydocs_db_pool_connections", "state", "max"); !ok || n != 3 {
		t.Errorf("pool size in /metrics: %v (found %v), want 3", n, ok)
	}
	wantStoreUp := func(want float64) {
		t.Helper()
		if n, ok := s.Metric(t, "companydocs_order_store_up"); !ok || n != want {
			t.Errorf("companydocs_order_store_up %v (found %v), want %v", n, ok, want)
		}
	}
	wantStoreUp(1)
	// the accounts command works on the store while the server runs on it
	var out strings.Builder
	if err := app.RunCommand(context.Background(), []string{"accounts", "create", "--store", url, "--name", "acme", "--credits", "5", "--json"}, &out, &out); err != nil {
		t.Fatalf("accounts create on the running server's store: %v", err)
	}
	var created struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal([]byte(out.String()), &created); err != nil || created.APIKey == "" {
		t.Fatalf("accounts create printed %q", out.String())
	}
	if err := app.RunCommand(context.Background(), []string{"accounts", "credit", "--store", url, "--name", "acme", "--add", "2"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Accounts.Account("acme"); err != nil || a.Credits != 7 {
		t.Fatalf("the server sees account %+v (%v), want 7 credits", a, err)
	}
	body := `{"api_key":"` + created.APIKey + `"}`
	s.MustJSON(t, http.StatusCreated, nil, "POST", "/api/v1/auth/sessions", body)

	cluster.Crash()
	s.WantError(t, http.StatusServiceUnavailable, "service_unavailable", "POST", "/api/v1/auth/sessions", body)
	var ready struct{ Missing []string }
	s.MustJSON(t, http.StatusServiceUnavailable, &ready, "GET", "/readyz", "")
	if len(ready.Missing) != 1 || !strings.Contains(ready.Missing[0], "database") {
		t.Errorf("readyz while the database is down: %+v", ready)
	}
	wantStoreUp(0)
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // a hang guard: the pool drops dead connections at their next use
	for {
		status, _, _ := s.Do(t, "POST", "/api/v1/auth/sessions", body)
		if status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session after the database came back: %d", status)
		}
	}
	s.MustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")
	wantStoreUp(1)
}

// TestStoreURLStaysSecret: a malformed --store is refused without
// repeating it (it may carry a password), and DATABASE_URL is read when
// neither --store nor COMPANYDOCS_STORE is set.
func TestStoreURLStaysSecret(t *testing.T) {
	m := app.NewMain()
	m.Stderr = &strings.Builder{}
	err := m.ParseFlags([]string{"--store", "mysql://root:hunter2@db/x"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "--store") {
		t.Fatalf("a mysql URL: %v; want a refusal naming --store and not the password", err)
	}
	t.Setenv("DATABASE_URL", "postgres://u:p@db/orders")
	m = app.NewMain()
	if err := m.ParseFlags(nil); err != nil || m.Config.Store != "postgres://u:p@db/orders" {
		t.Fatalf("DATABASE_URL: store %q, %v", m.Config.Store, err)
	}
	t.Setenv("COMPANYDOCS_STORE", "postgres://u:p@db/other")
	m = app.NewMain()
	if err := m.ParseFlags(nil); err != nil || m.Config.Store != "postgres://u:p@db/other" {
		t.Fatalf("COMPANYDOCS_STORE over DATABASE_URL: store %q, %v", m.Config.Store, err)
	}
}
