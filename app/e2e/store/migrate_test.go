package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
	"companydocs/storecopy"
)

// TestStoreMigrateRefuses: store migrate refuses an orders.db a server
// holds, a database that holds accounts or orders already (unless
// --allow-existing-data, and then a record that exists there fails the
// whole copy), and bad usage with exit code 2; store backup --store
// points to pg_dump and store check --store checks PostgreSQL.
func TestStoreMigrateRefuses(t *testing.T) {
	_, url := e2e.StartTestCluster(t)
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	e2e.StoreAccounts(t, dir, 3)
	from := filepath.Join(dir, bbolt.DatabaseFile)

	s := e2e.StartServer(t, dir)
	out, err := e2e.RunStoreCommand("migrate", "--from", from, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err == nil || app.ExitCode(err) != 1 || !strings.Contains(err.Error(), "store backup") {
		t.Errorf("migrate of a file a server holds: %v (exit %d) %s; want a refusal pointing to store backup", err, app.ExitCode(err), out)
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"migrate", "--to", url},
		{"migrate", "--from", from},
		{"migrate", "--from", from, "--to", "mysql://x"},
		{"migrate", "--from", from, "--to", url, "extra"},
	} {
		if _, err := e2e.RunStoreCommand(args...); app.ExitCode(err) != 2 {
			t.Errorf("store %q: %v, want exit code 2", args, err)
		}
	}
	if out, err := e2e.RunStoreCommand("migrate", "--from", from, "--to", url); err != nil {
		t.Fatalf("first migrate: %v\n%s", err, out)
	}
	out, err = e2e.RunStoreCommand("migrate", "--from", from, "--to", url)
	if err == nil || app.ExitCode(err) != 1 || !strings.Contains(err.Error(), "--allow-existing-data") {
		t.Errorf("migrate into a database with accounts: %v (exit %d) %s; want a refusal naming --allow-existing-data", err, app.ExitCode(err), out)
	}
	out, err = e2e.RunStoreCommand("migrate", "--from", from, "--to", url, "--allow-existing-data")
	if err == nil || !strings.Contains(err.Error(), "nothing was copied") {
		t.Errorf("migrate of accounts that exist already: %v %s; want nothing copied", err, out)
	}
	mustCensus(t, url, 3)
	if out, err := e2e.RunStoreCommand("check", "--store", url); err != nil || !strings.Contains(out, "3 accounts") {
		t.Errorf("store check --store: %v %s", err, out)
	}
	if _, err := e2e.RunStoreCommand("backup", "--store", url, "--to", filepath.Join(t.TempDir(), "b")); err == nil || !strings.Contains(err.Error(), "pg_dump") {
		t.Errorf("store backup --store: %v; want the pg_dump advice", err)
	}
}

// mustCensus checks that the database holds accounts accounts, each with
// the 1,000 credits e2e.StoreAccounts gave it.
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
