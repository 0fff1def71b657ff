package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"companydocs"
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

// TestCrashSafetyPostgres is TestCrashSafety with two nodes on one
// PostgreSQL database: two real "serve --store" processes, each with its
// own data directory, take creates with and without Idempotency-Keys and
// transitions (every request goes to a random node), deliver webhooks to
// the receiver, and one of the two, at random, is killed with SIGKILL at a
// random moment and started again, crashPGKills times; once, mid-load,
// PostgreSQL itself is killed and started again (answers meanwhile are
// 503, outcome unknown, and keyed creates are retried). Afterwards every
// acknowledged order and transition is stored exactly once, balances add
// up, the store passes its check, and a last node delivers every
// committed event. Deliveries with a PDF are left out: each node keeps
// PDFs in its own data directory, so a node would refuse to start on
// another node's documents.
func TestCrashSafetyPostgres(t *testing.T) {
	ctx := context.Background()
	cluster, url := startTestCluster(t)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	mustBuild(t, dirs[0], crashRecords, sampleFile(t))
	if out, err := exec.Command("cp", "-a", dirs[0]+"/.", dirs[1]).CombinedOutput(); err != nil {
		t.Fatalf("copy the data directory: %v %s", err, out)
	}
	profiles := crashProfiles(t, crashRecords)
	keys := crashCreateAccountsIn(t, url)
	rcv := newCrashReceiver(t)
	j := newCrashJournal()
	j.unknown503 = true
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	start := func(i int) *crashServer {
		return startCrashServer(t, dirs[i], "--store", url, "--store-pool-size", crashPGPoolSize, "--store-statement-timeout", crashPGStatement)
	}

	nodes := [2]*crashServer{start(0), start(1)}
	nodes[0].registerWebhooks(t, rcv, keys)
	tokens := nodes[0].login(t, keys) // sessions are shared: one token serves on both nodes
	began := time.Now()
	for kill := 1; kill <= crashPGKills; kill++ {
		victim := rng.IntN(2)
		burst := time.Duration(rng.Int64N(int64(crashMaxBurst)))
		if kill%6 == 0 {
			burst = time.Duration(rng.Int64N(int64(5 * time.Millisecond)))
		}
		var outage func()
		if kill == crashPGOutageAt {
			burst = crashMaxBurst + crashPGOutage
			outage = func() { crashPostgres(t, ctx, cluster) }
		}
		crashLoad(t, j, nodes[:], victim, tokens, profiles, rng.Uint64(), burst, outage)
		nodes[victim].kill(t)
		if len(j.failures) > 0 {
			t.Fatalf("after kill %d: %s", kill, strings.Join(j.failures, "\n"))
		}
		nodes[victim] = start(victim)
	}
	// Retry what is pending on a quiet system, then stop both nodes and
	// check; a last node delivers every event that is left.
	crashLoad(t, j, nodes[:], -1, tokens, profiles, rng.Uint64(), 0, nil)
	nodes[0].kill(t)
	nodes[1].kill(t)
	loaded := time.Since(began)
	orders := crashCheckPostgres(t, url, dirs[0], j)
	last := start(1)
	drain := time.Now()
	rcv.waitForAll(t, orders)
	drained := time.Since(drain)
	last.kill(t)
	stored := len(crashCheckPostgres(t, url, dirs[0], j))
	if len(j.failures) > 0 {
		t.Fatalf("client-side failures:\n%s", strings.Join(j.failures, "\n"))
	}
	if j.unavailable == 0 {
		t.Errorf("no request was answered 503 while PostgreSQL was down: the outage did not meet the load")
	}
	if j.created < crashPGKills || j.moved < crashPGKills {
		t.Errorf("only %d orders were created and %d transitions made over %d kills: the load did not reach the store", j.created, j.moved, crashPGKills)
	}
	r := rcv.report()
	t.Logf("crash safety on PostgreSQL, two nodes: %d kills and 1 PostgreSQL crash survived in %v, %d orders stored and checked, %d acknowledged with 201, "+
		"%d duplicate answers, %d key retries, %d refusals, %d creates cut off by a kill or the outage; %d transitions acknowledged, %d refused as already moved, %d cut off; %d answers 503 during the outage; "+
		"%d events delivered to 2 endpoints (%d distinct, %d duplicates, %d answered 500 and retried); the last node delivered the rest in %v",
		crashPGKills, loaded.Round(time.Second), stored, j.created, j.duplicates, j.retried, j.refused, j.lost,
		j.moved, j.conflicts, j.movesLost, j.unavailable, r.delivered, r.distinct, r.duplicates, r.refused, drained.Round(time.Millisecond))
}

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

// crashCreateAccountsIn creates the crash test's accounts in the
// PostgreSQL database and returns their API keys.
func crashCreateAccountsIn(tb testing.TB, url string) map[string]string {
	tb.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	svc := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	defer svc.Close()
	keys := map[string]string{}
	for i := range crashAccounts {
		name := fmt.Sprintf("crash-%d", i)
		if keys[name], err = svc.CreateAccount(name, crashCredits); err != nil {
			tb.Fatal(err)
		}
	}
	if keys[crashOperator], err = svc.CreateAccountWithRole(crashOperator, companydocs.RoleOperator, 0); err != nil {
		tb.Fatal(err)
	}
	return keys
}

// crashCheckPostgres runs crashCheck's checks on the PostgreSQL store
// while no node runs.
func crashCheckPostgres(tb testing.TB, url, dir string, j *crashJournal) map[string]*companydocs.Order {
	tb.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	opts := ordering.Options{SweepInterval: -1, DocumentsDir: dir + "/" + ordering.DocumentsDir}
	orders, err := ordering.NewOrders(db, nil, nil, opts)
	if err != nil {
		tb.Fatal(err)
	}
	accounts := ordering.NewAccounts(db, opts)
	defer accounts.Close()
	return crashCheckStore(tb, accounts, orders, db.Check, ordering.Documents(db, ""), j)
}
