package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/ingest"
	"companydocs/ordering"
)

// ProfileIDOfRecord is the profile id ingest gives a sample record.
func ProfileIDOfRecord(t *testing.T, rec map[string]any) string {
	t.Helper()
	line, _ := json.Marshal(rec)
	p, err := ingest.DecodeOffeneRegisterLine(line)
	if err != nil || p == nil {
		t.Fatalf("decode %v: %v", rec["company_number"], err)
	}
	return p.ID
}

// NodeRegister registers the receiver's path as the account's endpoint.
func NodeRegister(t *testing.T, s *CrashServer, rcv *Receiver, token, path string) {
	t.Helper()
	var ep companydocs.WebhookEndpoint
	body := fmt.Sprintf(`{"url":%q}`, rcv.srv.URL+path)
	if status := s.Post(t, "/api/v1/webhooks/", token, body, "", &ep); status != 201 {
		t.Fatalf("register %s: status %d", path, status)
	}
	rcv.Mu.Lock()
	rcv.Secrets[path], rcv.modes[path] = ep.Secret, "ok"
	rcv.Mu.Unlock()
}

// CrashWatches is how many watches the crash test makes: three pages of
// a comparison, so that a kill lands between two of its transactions.
const CrashWatches = 1200

// MigrateWatches checks the order database a killed node left, backs it
// up, and moves it to a fresh PostgreSQL database with store migrate,
// whose census counts the watches; the database passes store check.
func MigrateWatches(t *testing.T, dir string, watches int) {
	t.Helper()
	if out, err := RunCmd("store", "check", "--data-dir", dir); err != nil {
		t.Fatalf("store check: %v\n%s", err, out)
	}
	backup := filepath.Join(t.TempDir(), "backup.db")
	if out, err := RunCmd("store", "backup", "--data-dir", dir, "--to", backup); err != nil {
		t.Fatalf("store backup: %v\n%s", err, out)
	}
	_, url := StartTestCluster(t)
	out, err := RunStoreCommand("migrate", "--from", backup, "--to", url, "--documents", filepath.Join(dir, ordering.DocumentsDir))
	if err != nil || !strings.Contains(out, fmt.Sprintf("%d watches", watches)) {
		t.Fatalf("store migrate: %v\n%s", err, out)
	}
	if out, err := RunStoreCommand("check", "--store", url); err != nil {
		t.Fatalf("store check --store: %v\n%s", err, out)
	}
}

// Orderable reports whether a record is a registered company with a
// printout to order.
func Orderable(rec map[string]any) bool {
	attrs, _ := rec["all_attributes"].(map[string]any)
	docs, _ := attrs["additional_data"].(map[string]any)
	return rec["current_status"] == "currently registered" && (docs["AD"] == true || docs["CD"] == true)
}

// WatchConcurrently watches every record's profile from four clients.
func WatchConcurrently(t *testing.T, s *CrashServer, token string, recs []map[string]any) {
	t.Helper()
	var wg sync.WaitGroup
	next := make(chan string)
	for range 4 {
		wg.Go(func() {
			for id := range next {
				var w companydocs.Watch
				if status := s.Post(t, "/api/v1/watches/", token, `{"company_profile_id":"`+id+`"}`, "", &w); status != 201 {
					t.Errorf("watch %s: status %d", id, status)
				}
			}
		})
	}
	for _, r := range recs {
		next <- ProfileIDOfRecord(t, r)
	}
	close(next)
	wg.Wait()
}

// WatchesBehind opens the killed node's order database and counts the
// live watches not yet compared with gen.
func WatchesBehind(t *testing.T, dir, gen string) int {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bbolt.DatabaseFile), bbolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.View(context.Background(), func(tx ordering.Tx) error {
		list, err := tx.Watches("", CrashWatches+1)
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
