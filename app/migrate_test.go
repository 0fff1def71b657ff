package app

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/bbolt"
	"companydocs/internal/pgcluster"
	"companydocs/ordering"
	"companydocs/postgres"
	"companydocs/storecopy"
)

// startTestCluster starts a throw-away PostgreSQL cluster for the test and
// returns a fresh database in it.
func startTestCluster(tb testing.TB) (*pgcluster.Cluster, string) {
	tb.Helper()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.TestSettings...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cluster.Close() })
	url, err := cluster.CreateDatabase(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	return cluster, url
}

// runStoreCommand runs "companydocs store ..." and returns its output.
func runStoreCommand(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"store"}, args...), &out, &out)
	return out.String(), err
}

// migrateCrashDatabase runs from, an orders.db a crash test left, through
// "store migrate" into a fresh PostgreSQL database, then checks that a
// server on the migrated database (with the documents of dir) answers
// what a server on dir's orders.db answered: the order lists of every
// account, page by page, and GET of a sample of orders, logged in with
// the migrated API keys.
func migrateCrashDatabase(t *testing.T, dir, from string, keys map[string]string) {
	t.Helper()
	_, url := startTestCluster(t)
	before := startServer(t, dir)
	_, pages := crashServedOrders(t, before, keys, nil)
	if err := before.shutdown(); err != nil {
		t.Fatal(err)
	}
	out, err := runStoreCommand("migrate", "--from", from, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err != nil {
		t.Fatalf("store migrate of the crash test's orders.db: %v\n%s", err, out)
	}
	t.Logf("store migrate: %s", out)
	if !strings.Contains(out, "Verified:") || !strings.Contains(out, "are in the database") {
		t.Errorf("store migrate printed no verification or no note about the PDFs:\n%s", out)
	}
	if out, err := runStoreCommand("check", "--store", url); err != nil {
		t.Fatalf("store check --store on the migrated database: %v\n%s", err, out)
	}
	after := startServer(t, dir, "--store", url)
	defer after.shutdown()
	_, again := crashServedOrders(t, after, keys, nil) // the API keys were migrated

	if len(again) != len(pages) {
		t.Errorf("the migrated server answered %d order requests, orders.db %d", len(again), len(pages))
	}
	for path, body := range pages {
		if !bytes.Equal(again[path], body) {
			t.Errorf("GET %s after the migration:\n%s\nbefore:\n%s", path, again[path], body)
		}
	}
	t.Logf("the migrated server answered %d order lists and GETs as orders.db did", len(pages))
}

// crashServedOrders fetches every client account's order list, page by
// page, and every fifth order by id; it logs in with the API keys unless
// tokens are given. It returns the tokens and the answers by path.
func crashServedOrders(t *testing.T, s *testServer, keys, tokens map[string]string) (map[string]string, map[string][]byte) {
	t.Helper()
	if tokens == nil {
		tokens = map[string]string{}
		for name, key := range keys {
			var sess struct{ Token string }
			s.call(t, "POST", "/api/v1/auth/sessions", "", map[string]string{"api_key": key}, &sess)
			tokens[name] = sess.Token
		}
	}
	pages := map[string][]byte{}
	for name, token := range tokens {
		if name == crashOperator {
			continue
		}
		n, cursor := 0, ""
		for {
			path := "/api/v1/documents/orders/?limit=100&cursor=" + cursor
			var page struct {
				Orders     []struct{ ID string }
				NextCursor *string `json:"next_cursor"`
			}
			status, raw := s.call(t, "GET", path, token, nil, &page)
			if status != http.StatusOK {
				t.Fatalf("GET %s as %s: %d %s", path, name, status, raw)
			}
			pages[name+" "+path] = raw
			for _, o := range page.Orders {
				if n++; n%5 == 0 {
					get := "/api/v1/documents/orders/" + o.ID
					status, raw := s.call(t, "GET", get, token, nil, nil)
					if status != http.StatusOK {
						t.Fatalf("GET %s as %s: %d %s", get, name, status, raw)
					}
					pages[name+" "+get] = raw
				}
			}
			if page.NextCursor == nil {
				break
			}
			cursor = *page.NextCursor
		}
	}
	return tokens, pages
}

// TestStoreMigrateRefuses: store migrate refuses an orders.db a server
// holds, a database that holds accounts or orders already (unless
// --allow-existing-data, and then a record that exists there fails the
// whole copy), and bad usage with exit code 2; store backup --store
// points to pg_dump and store check --store checks PostgreSQL.
func TestStoreMigrateRefuses(t *testing.T) {
	_, url := startTestCluster(t)
	dir := t.TempDir()
	mustBuild(t, dir, 200, offeneRegister(t, "fixtures_665.jsonl"))
	storeAccounts(t, dir, 3)
	from := filepath.Join(dir, bbolt.DatabaseFile)

	s := startServer(t, dir)
	out, err := runStoreCommand("migrate", "--from", from, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "store backup") {
		t.Errorf("migrate of a file a server holds: %v (exit %d) %s; want a refusal pointing to store backup", err, exitCode(err), out)
	}
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"migrate", "--to", url},
		{"migrate", "--from", from},
		{"migrate", "--from", from, "--to", "mysql://x"},
		{"migrate", "--from", from, "--to", url, "extra"},
	} {
		if _, err := runStoreCommand(args...); exitCode(err) != 2 {
			t.Errorf("store %q: %v, want exit code 2", args, err)
		}
	}
	if out, err := runStoreCommand("migrate", "--from", from, "--to", url); err != nil {
		t.Fatalf("first migrate: %v\n%s", err, out)
	}
	out, err = runStoreCommand("migrate", "--from", from, "--to", url)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "--allow-existing-data") {
		t.Errorf("migrate into a database with accounts: %v (exit %d) %s; want a refusal naming --allow-existing-data", err, exitCode(err), out)
	}
	out, err = runStoreCommand("migrate", "--from", from, "--to", url, "--allow-existing-data")
	if err == nil || !strings.Contains(err.Error(), "nothing was copied") {
		t.Errorf("migrate of accounts that exist already: %v %s; want nothing copied", err, out)
	}
	mustCensus(t, url, 3)
	if out, err := runStoreCommand("check", "--store", url); err != nil || !strings.Contains(out, "3 accounts") {
		t.Errorf("store check --store: %v %s", err, out)
	}
	if _, err := runStoreCommand("backup", "--store", url, "--to", filepath.Join(t.TempDir(), "b")); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("store backup --store: %v; want the pg_dump advice", err)
	}
}

// mustCensus checks that the database holds accounts accounts, each with
// the 1,000 credits storeAccounts gave it.
func mustCensus(t *testing.T, url string, accounts int) {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := storecopy.TakeCensus(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if c.Accounts != accounts || c.Credits != int64(accounts)*1000 {
		t.Errorf("the database holds %s; want %d accounts with 1000 credits each", c, accounts)
	}
}

// copyOrdersDB copies dir's orders.db, which no server holds, to a new
// file and returns its path.
func copyOrdersDB(tb testing.TB, dir string) string {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, bbolt.DatabaseFile))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), bbolt.DatabaseFile)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}
