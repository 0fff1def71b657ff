package crash

import (
	"context"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/internal/pgcluster"
	"companydocs/ordering"
	"companydocs/postgres"
)

// Bounds of the crash test on PostgreSQL: how many times one of the two
// nodes is killed, and at which kill PostgreSQL itself goes down (for
// crashPGOutage) under load.
const (
	crashPGKills     = 52
	crashPGOutageAt  = crashPGKills / 2
	crashPGOutage    = 300 * time.Millisecond
	crashPGPoolSize  = "4"
	crashPGStatement = "2s"
)

// crashPostgres kills PostgreSQL (immediate shutdown, as after a crash)
// and starts it again after crashPGOutage, while the nodes take load.
func crashPostgres(tb testing.TB, ctx context.Context, cluster *pgcluster.Cluster) {
	time.Sleep(crashPGOutage / 3)
	cluster.Crash()
	time.Sleep(crashPGOutage)
	if err := cluster.Start(ctx); err != nil {
		tb.Errorf("start PostgreSQL again: %v", err)
	}
}

// crashCheckPostgres runs crashCheck's checks on the PostgreSQL store
// while no node runs.
func crashCheckPostgres(tb testing.TB, url, dir string, j *e2e.CrashJournal) map[string]*companydocs.Order {
	tb.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	docs, err := postgres.OpenDocuments(db, dir+"/"+ordering.DocumentsDir)
	if err != nil {
		tb.Fatal(err)
	}
	opts := ordering.Options{SweepInterval: -1, Documents: docs}
	svc, err := ordering.New(db, nil, nil, opts)
	if err != nil {
		tb.Fatal(err)
	}
	accounts := ordering.NewAccounts(db, opts)
	defer accounts.Close()
	return crashCheckStore(tb, accounts, svc.Orders, db.Check, db.Document, j)
}
