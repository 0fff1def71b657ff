package ordering_test

import (
	"context"
	"sync"
	"testing"

	"companydocs/internal/pgcluster"
	"companydocs/ordering"
	"companydocs/postgres"
)

// The PostgreSQL store runs every ordering test too (stores_test.go
// registers openPostgres), on one throw-away cluster for this test binary
// (TestMain): a fresh database for each store directory a test opens, the
// same database when it opens the directory again. Without PostgreSQL the
// tests fail, saying how to install it.
var pg struct {
	cluster *pgcluster.Cluster
	mu      sync.Mutex
	urls    map[string]string // store directory -> database URL
}

func openPostgres(dir string) (ordering.Store, error) {
	url, err := databaseFor(dir)
	if err != nil {
		return nil, err
	}
	db, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 8})
	if err != nil {
		return nil, err // not a nil *postgres.DB in a non-nil Store
	}
	return db, nil
}

func databaseFor(dir string) (string, error) {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if url, ok := pg.urls[dir]; ok {
		return url, nil
	}
	url, err := pg.cluster.CreateDatabase(context.Background())
	if err != nil {
		return "", err
	}
	pg.urls[dir] = url
	return url, nil
}

func TestMain(m *testing.M) {
	pgcluster.RunTests(m, func(c *pgcluster.Cluster) { pg.cluster, pg.urls = c, map[string]string{} })
}
