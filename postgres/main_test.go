package postgres

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"companydocs/internal/pgcluster"
)

// cluster is this test binary's PostgreSQL; each test opens a fresh
// database on it (newDatabase).
var cluster *pgcluster.Cluster

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := pgcluster.Start(ctx, pgcluster.TestSettings...)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL for the tests:", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// newDatabase creates an empty database and returns its URL.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	url, err := cluster.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return url
}

// mustOpen opens a fresh database, closed when the test ends.
func mustOpen(tb testing.TB, opts Options) *DB {
	tb.Helper()
	db, err := Open(context.Background(), newDatabase(tb), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
