package storecopy_test

import (
	"context"
	"path/filepath"
	"testing"

	"companydocs/bbolt"
	"companydocs/internal/pgcluster"
	"companydocs/ordering"
	"companydocs/postgres"
)

// cluster is the throw-away PostgreSQL cluster of this test binary
// (TestMain): a fresh database for each store a test opens. Without
// PostgreSQL the tests fail, saying how to install it.
var cluster *pgcluster.Cluster

func TestMain(m *testing.M) {
	pgcluster.RunTests(m, func(c *pgcluster.Cluster) { cluster = c })
}

// storeKind opens a fresh, empty store of one kind and the documents
// beside it, as serve wires them.
type storeKind struct {
	open      func(tb testing.TB) ordering.Store
	documents func(store ordering.Store, dir string) (ordering.Documents, error)
}

// kinds are the stores a copy is tested into, by name.
var kinds = map[string]storeKind{
	"bbolt": {
		open: openBolt,
		documents: func(store ordering.Store, dir string) (ordering.Documents, error) {
			return bbolt.OpenDocuments(store, dir)
		},
	},
	"postgres": {
		open: openPostgres,
		documents: func(store ordering.Store, dir string) (ordering.Documents, error) {
			return postgres.OpenDocuments(store.(*postgres.DB), dir)
		},
	},
}

func openBolt(tb testing.TB) ordering.Store {
	tb.Helper()
	db, err := bbolt.Open(filepath.Join(tb.TempDir(), bbolt.DatabaseFile), bbolt.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func openPostgres(tb testing.TB) ordering.Store {
	tb.Helper()
	url, err := cluster.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	db, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 8})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}
