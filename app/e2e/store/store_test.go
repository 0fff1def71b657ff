package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/internal/boltfile"
	"companydocs/internal/e2e"
	"companydocs/internal/syncbuf"
	"companydocs/ordering"
)

// post sends a JSON POST with a bearer token and returns the status.
func post(client *http.Client, url, token, body string) (int, []byte, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// orderLoad creates orders from one client per account until stopped.
type orderLoad struct {
	mu      sync.Mutex
	acked   []ackedOrder
	errs    []string
	stop    chan struct{}
	stopped sync.WaitGroup
}

type ackedOrder struct{ account, id string }

func startOrderLoad(s *e2e.TestServer, tokens map[string]string, profiles []string) *orderLoad {
	l := &orderLoad{stop: make(chan struct{})}
	for account, token := range tokens {
		l.stopped.Add(1)
		go func() {
			defer l.stopped.Done()
			l.run(s, account, token, profiles)
		}()
	}
	return l
}

func (l *orderLoad) run(s *e2e.TestServer, account, token string, profiles []string) {
	client := &http.Client{Timeout: 30 * time.Second}
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		if i >= 2*len(profiles) {
			return // every profile ordered with both plans
		}
		doc, plan := "AD", "ad-single"
		if i%2 == 1 {
			doc, plan = "CD", "cd-single"
		}
		status, body, err := post(client, s.Base+"/api/v1/documents/orders/", token, e2e.OrderJSON(profiles[i/2], doc, plan))
		var o struct{ ID string }
		if err == nil && status == http.StatusCreated {
			err = json.Unmarshal(body, &o)
		}
		l.mu.Lock()
		if err != nil || status != http.StatusCreated {
			l.errs = append(l.errs, fmt.Sprintf("order: %d %s %v", status, body, err))
		} else {
			l.acked = append(l.acked, ackedOrder{account, o.ID})
		}
		l.mu.Unlock()
	}
}

func (l *orderLoad) snapshot() []ackedOrder {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ackedOrder(nil), l.acked...)
}

// TestStoreBackupOnline backs up orders.db while the real server runs and
// clients create orders: the backup is taken through the server's socket
// (bbolt's lock keeps every other process out of the file), passes the
// check, and holds every order acknowledged before the backup started.
// store check works the same way meanwhile.
func TestStoreBackupOnline(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 500, e2e.SampleFile(t))
	profiles := e2e.CrashProfiles(t, 500)
	keys := e2e.StoreAccounts(t, dir, 3)
	s := e2e.StartServer(t, dir)
	tokens := map[string]string{}
	for name, key := range keys {
		tokens[name] = e2e.AccessLogin(t, s, key)
	}
	load := startOrderLoad(s, tokens, profiles)
	defer func() { close(load.stop); load.stopped.Wait() }()
	for deadline := time.Now().Add(time.Minute); len(load.snapshot()) < 30; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the load made %d orders in a minute: %v", len(load.snapshot()), load.errs)
		}
	}

	before := load.snapshot()
	backup := filepath.Join(t.TempDir(), "orders-backup.db")
	out, err := e2e.RunCmd("store", "backup", "--data-dir", dir, "--to", backup)
	if err != nil || !strings.Contains(out, "from the running server") {
		t.Fatalf("store backup: %v\n%s", err, out)
	}
	during := len(load.snapshot()) - len(before)
	if out, err := e2e.RunCmd("store", "check", "--data-dir", dir); err != nil || !strings.Contains(out, "copy taken from the running server") {
		t.Errorf("store check while serving: %v\n%s", err, out)
	}
	if out, err := e2e.RunCmd("store", "backup", "--data-dir", dir, "--to", backup); err == nil || !strings.Contains(out+err.Error(), "exists") {
		t.Errorf("a second backup to the same file: %v\n%s", err, out)
	}

	db, err := bbolt.Open(backup, bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("the backup does not open: %v", err)
	}
	defer db.Close()
	for _, o := range before {
		var rec *ordering.OrderRecord
		err := db.View(context.Background(), func(tx ordering.Tx) (err error) {
			rec, err = tx.Order(o.id)
			return err
		})
		if err != nil || rec == nil || rec.Account != o.account {
			t.Errorf("order %s of %s, acknowledged before the backup, is not in it: %+v, %v", o.id, o.account, rec, err)
		}
	}
	if len(load.errs) > 0 {
		t.Errorf("the load met errors: %v", load.errs[:min(3, len(load.errs))])
	}
	t.Logf("backup holds all %d orders acknowledged before it began; %d more were acknowledged while store backup ran", len(before), during)
}

// TestStoreCommandsOffline checks store check and backup with no server:
// exit status and message on a good file, on a damaged one (and that it
// is left untouched), and the accounts command on a damaged file.
func TestStoreCommandsOffline(t *testing.T) {
	dir := t.TempDir()
	e2e.StoreAccounts(t, dir, 4)
	path := filepath.Join(dir, bbolt.DatabaseFile)
	out, err := e2e.RunCmd("store", "check", "--data-dir", dir)
	if err != nil || !strings.Contains(out, "is consistent (no server running)") || !strings.Contains(out, "4 accounts") {
		t.Fatalf("store check on a good file: %v\n%s", err, out)
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if out, err := e2e.RunCmd("store", "backup", "--data-dir", dir, "--to", backup); err != nil || !strings.Contains(out, "4 accounts") {
		t.Fatalf("store backup: %v\n%s", err, out)
	}
	if out, err := e2e.RunCmd("store", "backup", "--data-dir", dir, "--to", backup, "--force"); err != nil {
		t.Fatalf("store backup --force: %v\n%s", err, out)
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		file []byte
	}{{"zero-length", nil}, {"truncated to half", good[:len(good)/2]}} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.file, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"store", "check"}, {"store", "backup", "--to", filepath.Join(t.TempDir(), "x.db")}, {"accounts", "list"}} {
				out, err := e2e.RunCmd(append(args, "--data-dir", dir)...)
				if err == nil || app.ExitCode(err) != 1 || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "store backup") {
					t.Errorf("%v: %v (exit %d)\n%s", args, err, app.ExitCode(err), out)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, c.file) {
				t.Errorf("the damaged file was changed")
			}
		})
	}
	// The backup restores: put it in place and check it.
	restored, err := os.ReadFile(backup)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, restored, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := e2e.RunCmd("store", "check", "--data-dir", dir); err != nil || !strings.Contains(out, "4 accounts") {
		t.Errorf("store check of the restored backup: %v\n%s", err, out)
	}
}

// TestServeRefusesDamagedStore starts the real Main on a data directory
// whose orders.db (filled through the API: accounts, 300 sessions,
// orders) is damaged one way at a time: the start is refused with a
// message naming the file and what to do, and the file is left as it
// was; or the server starts on a database that passes the check and
// answers every session creation. Before the fix a zero-length file
// started empty, a half file panicked, and a damaged sessions page
// started and answered some session creations 500.
func TestServeRefusesDamagedStore(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 500, e2e.SampleFile(t))
	keys := storeFilled(t, dir)
	path := filepath.Join(dir, bbolt.DatabaseFile)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	refused, started := 0, 0
	for _, c := range serveDamageCases(t, path, good) {
		t.Run(c.name, func(t *testing.T) {
			damaged := c.damage(bytes.Clone(good))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			m := app.NewMain()
			m.Stdout, m.Stderr = &syncbuf.Buffer{}, &syncbuf.Buffer{}
			if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--data-dir", dir, "--poll-interval", "1h", "--log-format", "json", "--session-rate", "0"}); err != nil {
				t.Fatal(err)
			}
			err := m.Run(context.Background())
			if err != nil {
				refused++
				m.Close()
				if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "store backup") || !strings.Contains(err.Error(), "move") {
					t.Errorf("refusal does not name the file and what to do: %v", err)
				}
				if strings.Contains(err.Error(), "panic") {
					t.Errorf("refusal passes on a panic of bbolt instead of saying what is damaged: %v", err)
				}
				if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
					t.Errorf("the refused file was changed")
				}
				return
			}
			started++
			defer m.Close()
			checkSessionsServed(t, "http://"+m.Addr(), keys)
		})
	}
	t.Logf("%d damaged files refused at start, %d started and served every session", refused, started)
}

// storeFilled fills orders.db through the running server: 5 accounts, 60
// sessions each, some orders.
func storeFilled(t *testing.T, dir string) map[string]string {
	t.Helper()
	keys := e2e.StoreAccounts(t, dir, 5)
	s := e2e.StartServer(t, dir)
	profiles := e2e.CrashProfiles(t, 500)
	checkSessionsServed(t, s.Base, keys)
	for name, key := range keys {
		token := e2e.AccessLogin(t, s, key)
		for i := range 8 {
			s.MustJSON(t, http.StatusCreated, nil, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(profiles[i], "AD", "ad-single"), "Authorization", "Bearer "+token)
		}
		_ = name
	}
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// checkSessionsServed creates 60 sessions per account (300 in all) and
// wants every one answered 201.
func checkSessionsServed(t *testing.T, base string, keys map[string]string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	failed := 0
	for _, key := range keys {
		for range 60 {
			status, body, err := post(client, base+"/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`)
			if err != nil || status != http.StatusCreated {
				if failed++; failed <= 3 {
					t.Errorf("session creation: %d %s %v", status, body, err)
				}
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d session creations failed", failed, 60*len(keys))
	}
}

type serveDamage struct {
	name   string
	damage func([]byte) []byte
}

// serveDamageCases are the cases of the ordering matrix that the issue
// saw at start, and the sessions bucket's pages.
func serveDamageCases(t *testing.T, path string, good []byte) []serveDamage {
	t.Helper()
	bf, err := boltfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	ps := int(bf.Meta.PageSize)
	cut := func(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }
	flip := func(off int) func([]byte) []byte {
		return func(b []byte) []byte { b[off] ^= 0xff; b[off+1] ^= 0x5a; return b }
	}
	cases := []serveDamage{
		{"zero-length", cut(0)}, {"truncated to half", cut(len(good) / 2)}, {"truncated one page short", cut(len(good) - ps)},
		{"truncated inside the meta pages", cut(ps + 200)}, {"meta page 0 flipped", flip(16 + 40)},
		{"meta page 0 header id flipped", flip(0)}, {"meta page 0 checksum and header flags flipped", func(b []byte) []byte { return flip(8)(flip(16 + 56)(b)) }},
	}
	var pages []boltfile.Page
	if err := bf.Walk(time.Time{}, func(p boltfile.Page) { pages = append(pages, p) }); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pages {
		if k := p.Bucket + p.Type; (p.Bucket == "sessions" || p.Type == "freelist" || p.Bucket == "orders") && !seen[k] {
			seen[k] = true
			base := int(p.ID) * ps
			count := int(binary.LittleEndian.Uint16(good[base+10:]))
			name := fmt.Sprintf("%s %s page %d", p.Bucket, p.Type, p.ID)
			cases = append(cases, serveDamage{name + " type", flip(base + 8)}, serveDamage{name + " elements", flip(base + 16 + 16 + 4)},
				serveDamage{name + " data", flip(base + 16 + 16*count + 40)})
		}
	}
	if !seen["sessionsbranch"] || !seen["sessionsleaf"] || !seen["freelist"] {
		t.Fatalf("the database lacks a sessions branch or leaf page or a freelist: %v", pages)
	}
	return cases
}
