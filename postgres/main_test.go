package postgres

import (
	"context"
	"testing"

	"companydocs/internal/pgcluster"
)

// cluster is this test binary's PostgreSQL; each test opens a fresh
// database on it (newDatabase).
var cluster *pgcluster.Cluster

func TestMain(m *testing.M) {
	pgcluster.RunTests(m, func(c *pgcluster.Cluster) { cluster = c })
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
