package e2e

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/internal/pgcluster"
	"companydocs/ordering"
)

// StartTestCluster starts a throw-away PostgreSQL cluster for the test and
// returns a fresh database in it.
func StartTestCluster(tb testing.TB) (*pgcluster.Cluster, string) {
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

// RunStoreCommand runs "companydocs store ..." and returns its output.
func RunStoreCommand(args ...string) (string, error) {
	var out bytes.Buffer
	err := app.RunCommand(context.Background(), append([]string{"store"}, args...), &out, &out)
	return out.String(), err
}

// MigrateCrashDatabase runs from, an orders.db a crash test left, through
// "store migrate" into a fresh PostgreSQL database, then checks that a
// server on the migrated database (with the documents of dir) answers
// what a server on dir's orders.db answered: the order lists of every
// account, page by page, and GET of a sample of orders, logged in with
// the migrated API keys.
func MigrateCrashDatabase(t *testing.T, dir, from string, keys map[string]string) {
	t.Helper()
	_, url := StartTestCluster(t)
	before := StartServer(t, dir)
	_, pages := crashServedOrders(t, before, keys, nil)
	if err := before.Shutdown(); err != nil {
		t.Fatal(err)
	}
	out, err := RunStoreCommand("migrate", "--from", from, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err != nil {
		t.Fatalf("store migrate of the crash test's orders.db: %v\n%s", err, out)
	}
	t.Logf("store migrate: %s", out)
	if !strings.Contains(out, "Verified:") || !strings.Contains(out, "are in the database") {
		t.Errorf("store migrate printed no verification or no note about the PDFs:\n%s", out)
	}
	if out, err := RunStoreCommand("check", "--store", url); err != nil {
		t.Fatalf("store check --store on the migrated database: %v\n%s", err, out)
	}
	after := StartServer(t, dir, "--store", url)
	defer after.Shutdown()
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
func crashServedOrders(t *testing.T, s *TestServer, keys, tokens map[string]string) (map[string]string, map[string][]byte) {
	t.Helper()
	if tokens == nil {
		tokens = map[string]string{}
		for name, key := range keys {
			var sess struct{ Token string }
			s.Call(t, "POST", "/api/v1/auth/sessions", "", map[string]string{"api_key": key}, &sess)
			tokens[name] = sess.Token
		}
	}
	pages := map[string][]byte{}
	for name, token := range tokens {
		if name == CrashOperator {
			continue
		}
		n, cursor := 0, ""
		for {
			path := "/api/v1/documents/orders/?limit=100&cursor=" + cursor
			var page struct {
				Orders     []struct{ ID string }
				NextCursor *string `json:"next_cursor"`
			}
			status, raw := s.Call(t, "GET", path, token, nil, &page)
			if status != http.StatusOK {
				t.Fatalf("GET %s as %s: %d %s", path, name, status, raw)
			}
			pages[name+" "+path] = raw
			for _, o := range page.Orders {
				if n++; n%5 == 0 {
					get := "/api/v1/documents/orders/" + o.ID
					status, raw := s.Call(t, "GET", get, token, nil, nil)
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

// CopyOrdersDB copies dir's orders.db, which no server holds, to a new
// file and returns its path.
func CopyOrdersDB(tb testing.TB, dir string) string {
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
