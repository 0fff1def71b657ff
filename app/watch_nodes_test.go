package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/ingest"
	"companydocs/ordering"
	"companydocs/postgres"
)

// profileIDOfRecord is the profile id ingest gives a sample record.
func profileIDOfRecord(t *testing.T, rec map[string]any) string {
	t.Helper()
	line, _ := json.Marshal(rec)
	p, err := ingest.DecodeOffeneRegisterLine(line)
	if err != nil || p == nil {
		t.Fatalf("decode %v: %v", rec["company_number"], err)
	}
	return p.ID
}

// nodeWatch watches a profile through a node's API and returns the watch.
func nodeWatch(t *testing.T, s *crashServer, token, profileID string) companydocs.Watch {
	t.Helper()
	var w companydocs.Watch
	if status := s.post(t, "/api/v1/watches/", token, `{"company_profile_id":"`+profileID+`"}`, "", &w); status != 201 {
		t.Fatalf("watch %s on %s: status %d", profileID, s.base, status)
	}
	return w
}

// nodeRegister registers the receiver's path as the account's endpoint.
func nodeRegister(t *testing.T, s *crashServer, rcv *receiver, token, path string) {
	t.Helper()
	var ep companydocs.WebhookEndpoint
	body := fmt.Sprintf(`{"url":%q}`, rcv.srv.URL+path)
	if status := s.post(t, "/api/v1/webhooks/", token, body, "", &ep); status != 201 {
		t.Fatalf("register %s: status %d", path, status)
	}
	rcv.mu.Lock()
	rcv.secrets[path], rcv.modes[path] = ep.Secret, "ok"
	rcv.mu.Unlock()
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
	_, url := startTestCluster(t)
	recs := watchSample(t)
	cases := pickWatchCases(t, recs)
	build := t.TempDir()
	genA := writeGeneration(t, build, recs, cases, nil)
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
	a := startCrashServer(t, dirA, "--store", url, "--poll-interval", "50ms")
	defer a.kill(t)
	b := startCrashServer(t, dirB, "--store", url, "--poll-interval", "50ms")
	defer b.kill(t)

	rcv := newReceiver(t)
	paths := []string{"/node-a", "/node-b"}
	watches := map[string]watchCase{}
	for i, node := range []*crashServer{a, b} {
		token := twoNodeAccount(t, accounts, node, fmt.Sprintf("watcher-%d", i), companydocs.RoleClient, 0)
		nodeRegister(t, node, rcv, token, paths[i])
		for _, c := range cases {
			watches[nodeWatch(t, node, token, profileIDOfRecord(t, c.record)).ID] = c
		}
	}
	genB := writeGeneration(t, build, recs, cases, editsOf(cases))
	publishTo(t, build, genB, dirA, dirB)
	checkWatchDeliveries(t, rcv, paths, cases, watches, genA, genB)
}

// crashWatches is how many watches the crash test makes: three pages of
// a comparison, so that a kill lands between two of its transactions.
const crashWatches = 1200

// migrateWatches checks the order database a killed node left, backs it
// up, and moves it to a fresh PostgreSQL database with store migrate,
// whose census counts the watches; the database passes store check.
func migrateWatches(t *testing.T, dir string, watches int) {
	t.Helper()
	if out, err := runCmd("store", "check", "--data-dir", dir); err != nil {
		t.Fatalf("store check: %v\n%s", err, out)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if out, err := runCmd("store", "backup", "--data-dir", dir, "--to", backup); err != nil {
		t.Fatalf("store backup: %v\n%s", err, out)
	}
	_, url := startTestCluster(t)
	out, err := runStoreCommand("migrate", "--from", backup, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err != nil || !strings.Contains(out, fmt.Sprintf("%d watches", watches)) {
		t.Fatalf("store migrate: %v\n%s", err, out)
	}
	if out, err := runStoreCommand("check", "--store", url); err != nil {
		t.Fatalf("store check --store: %v\n%s", err, out)
	}
}

// orderable reports whether a record is a registered company with a
// printout to order.
func orderable(rec map[string]any) bool {
	attrs, _ := rec["all_attributes"].(map[string]any)
	docs, _ := attrs["additional_data"].(map[string]any)
	return rec["current_status"] == "currently registered" && (docs["AD"] == true || docs["CD"] == true)
}

// watchConcurrently watches every record's profile from four clients.
func watchConcurrently(t *testing.T, s *crashServer, token string, recs []map[string]any) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan string)
	for range 4 {
		wg.Go(func() {
			for id := range next {
				var w companydocs.Watch
				if status := s.post(t, "/api/v1/watches/", token, `{"company_profile_id":"`+id+`"}`, "", &w); status != 201 {
					t.Errorf("watch %s: status %d", id, status)
				}
			}
		})
	}
	for _, r := range recs {
		next <- profileIDOfRecord(t, r)
	}
	close(next)
	wg.Wait()
}

// watchesBehind opens the killed node's order database and counts the
// live watches not yet compared with gen.
func watchesBehind(t *testing.T, dir, gen string) int {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bbolt.DatabaseFile), bbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.View(context.Background(), func(tx ordering.Tx) error {
		list, err := tx.Watches("", crashWatches+1)
		for _, w := range list {
			if !w.Ended && w.Generation < gen {
				n++
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
