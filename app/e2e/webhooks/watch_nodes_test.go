package webhooks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
)

// nodeWatch watches a profile through a node's API and returns the watch.
func nodeWatch(t *testing.T, s *e2e.CrashServer, token, profileID string) companydocs.Watch {
	t.Helper()
	var w companydocs.Watch
	if status := s.Post(t, "/api/v1/watches/", token, `{"company_profile_id":"`+profileID+`"}`, "", &w); status != 201 {
		t.Fatalf("watch %s on %s: status %d", profileID, s.Base, status)
	}
	return w
}

// publishTo copies the generation built in from into each data
// directory and points its CURRENT at it (atomically: a temporary file
// renamed), as a deployment that builds once and ships the generation
// to every node does.
func publishTo(t *testing.T, from, gen string, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		if err := os.CopyFS(filepath.Join(dir, "index", gen), os.DirFS(filepath.Join(from, "index", gen))); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range dirs {
		tmp := filepath.Join(dir, "index", ".CURRENT-test")
		if err := os.WriteFile(tmp, []byte(gen+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "index", "CURRENT")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWatchesTwoNodes: two nodes on one PostgreSQL database swap the same
// generation at the same moment; each account's endpoint still gets one
// company.changed event per changed company.
func TestWatchesTwoNodes(t *testing.T) {
	ctx := context.Background()
	_, url := e2e.StartTestCluster(t)
	recs := e2e.WatchSample(t)
	cases := e2e.PickWatchCases(t, recs)
	build := t.TempDir()
	genA := e2e.WriteGeneration(t, build, recs, cases, nil)
	dirA, dirB := t.TempDir(), t.TempDir()
	for _, dir := range []string{dirA, dirB} {
		if err := os.CopyFS(dir, os.DirFS(build)); err != nil {
			t.Fatal(err)
		}
	}
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	accounts := ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
	defer accounts.Close()
	a := e2e.StartCrashServer(t, dirA, "--store", url, "--poll-interval", "50ms")
	defer a.Kill(t)
	b := e2e.StartCrashServer(t, dirB, "--store", url, "--poll-interval", "50ms")
	defer b.Kill(t)

	rcv := e2e.NewReceiver(t)
	paths := []string{"/node-a", "/node-b"}
	watches := map[string]e2e.WatchCase{}
	for i, node := range []*e2e.CrashServer{a, b} {
		token := e2e.TwoNodeAccount(t, accounts, node, fmt.Sprintf("watcher-%d", i), companydocs.RoleClient, 0)
		e2e.NodeRegister(t, node, rcv, token, paths[i])
		for _, c := range cases {
			watches[nodeWatch(t, node, token, e2e.ProfileIDOfRecord(t, c.Record)).ID] = c
		}
	}
	genB := e2e.WriteGeneration(t, build, recs, cases, e2e.EditsOf(cases))
	publishTo(t, build, genB, dirA, dirB)
	checkWatchDeliveries(t, rcv, paths, cases, watches, genA, genB)
}
