package main

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/ingest"
	"companydocs/ordering"
)

// Bounds of the crash test: how many times the server is killed, how many
// sample records its generation holds, and the load between two kills.
const (
	crashKills      = 24
	crashRecords    = 500
	crashWorkers    = 6
	crashMaxBurst   = 400 * time.Millisecond
	crashCredits    = 60 // per account: the subscription plan costs 1, so debits run out mid-test
	crashAccounts   = 3
	crashStartLimit = 60 * time.Second
)

// crashPlans are the (document type, plan) pairs of the embedded plans.
var crashPlans = []struct{ doc, plan string }{
	{"AD", "ad-single"}, {"CD", "cd-single"}, {"AD", "subscription-basic"}, {"CD", "subscription-basic"},
}

// crashAttempt is one order request as the client knows it.
type crashAttempt struct {
	account string
	body    string
	idemKey string // empty: sent without Idempotency-Key
}

// crashJournal is what the clients learnt across all kills.
type crashJournal struct {
	mu sync.Mutex
	// acked maps an order id to the attempt that got 201 for it.
	acked map[string]crashAttempt
	// keyOrder maps an Idempotency-Key to the order id a 201 or a 409
	// reported for it; pending holds keyed attempts whose outcome is
	// unknown (the server died) and must be retried.
	keyOrder map[string]string
	pending  []crashAttempt
	// counts of outcomes, for the report.
	created, duplicates, retried, refused, lost int
	failures                                    []string
}

// TestCrashSafety kills the real binary with SIGKILL at random moments
// while clients create orders, restarts it, and checks after every kill
// that the order database is consistent: every acknowledged order exists
// exactly once, an Idempotency-Key never made two orders, no two open
// orders repeat, and every balance equals its start minus what its
// stored orders charged.
func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	mustBuild(t, dir, crashRecords, sampleFile(t))
	profiles := crashProfiles(t, crashRecords)
	keys := crashCreateAccounts(t, dir)
	j := &crashJournal{acked: map[string]crashAttempt{}, keyOrder: map[string]string{}}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))

	for kill := 1; kill <= crashKills; kill++ {
		srv := startCrashServer(t, dir)
		burst := time.Duration(rng.Int64N(int64(crashMaxBurst)))
		if kill%6 == 0 {
			burst = time.Duration(rng.Int64N(int64(5 * time.Millisecond))) // right after start
		}
		srv.load(t, j, keys, profiles, rng.Uint64(), burst)
		srv.kill(t)
		crashCheck(t, dir, j)
		if t.Failed() {
			t.Fatalf("after kill %d: %s", kill, strings.Join(j.failures, "\n"))
		}
	}
	// A last start retries whatever is still pending, then shuts down.
	srv := startCrashServer(t, dir)
	srv.load(t, j, keys, profiles, rng.Uint64(), 0)
	srv.kill(t)
	orders := crashCheck(t, dir, j)
	if len(j.failures) > 0 {
		t.Fatalf("client-side failures:\n%s", strings.Join(j.failures, "\n"))
	}
	if j.created < crashKills {
		t.Errorf("only %d orders were created over %d kills: the load did not reach the store", j.created, crashKills)
	}
	t.Logf("crash safety: %d kills survived, %d orders stored and checked, %d acknowledged with 201, %d duplicate answers, %d key retries, %d refusals, %d requests cut off by a kill",
		crashKills, orders, j.created, j.duplicates, j.retried, j.refused, j.lost)
}

// crashProfiles returns the ids of live registry profiles among the first
// n sample records, decoded the way the ingest decodes them.
func crashProfiles(tb testing.TB, n int) []string {
	tb.Helper()
	var ids []string
	for _, line := range sampleLines(tb, n) {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err != nil || p.Removed || !p.Verified || !p.HasDocument(companydocs.DocumentAD) || !p.HasDocument(companydocs.DocumentCD) {
			continue
		}
		ids = append(ids, p.ID)
	}
	if len(ids) < 50 {
		tb.Fatalf("only %d orderable profiles among %d sample records", len(ids), n)
	}
	return ids
}

// sampleLines returns the first n lines of the embedded sample.
func sampleLines(tb testing.TB, n int) [][]byte {
	tb.Helper()
	f, err := os.Open(sampleFile(tb))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(bzip2.NewReader(f))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out [][]byte
	for len(out) < n && sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// crashCreateAccounts creates the accounts and returns their API keys.
func crashCreateAccounts(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	svc, err := ordering.Open(filepath.Join(dir, ordering.DatabaseFile), nil, nil, ordering.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer svc.Close()
	keys := map[string]string{}
	for i := range crashAccounts {
		name := fmt.Sprintf("crash-%d", i)
		key, err := svc.CreateAccount(name, crashCredits)
		if err != nil {
			tb.Fatal(err)
		}
		keys[name] = key
	}
	return keys
}

// crashServer is the companydocs binary (this test binary re-executed)
// serving on a loopback port.
type crashServer struct {
	cmd    *exec.Cmd
	base   string
	stderr *syncBuffer
	client *http.Client
}

var servingLine = regexp.MustCompile(`serving \d+ company profiles on (http://[0-9.:]+)/`)

// startCrashServer starts "companydocs serve" on dir and waits until it
// listens.
func startCrashServer(tb testing.TB, dir string) *crashServer {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--search-rate", "0", "--session-rate", "0",
		"--log-format", "json", "--log-level", "warn", "--poll-interval", "1h")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	s := &crashServer{cmd: cmd, stderr: &syncBuffer{},
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: crashWorkers}}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok {
			s.kill(tb)
			tb.Fatalf("the server exited before serving:\n%s", s.stderr.String())
		}
		s.base = base
	case <-time.After(crashStartLimit):
		s.kill(tb)
		tb.Fatalf("the server did not start within %v:\n%s", crashStartLimit, s.stderr.String())
	}
	return s
}

// kill sends SIGKILL and reaps the process.
func (s *crashServer) kill(tb testing.TB) {
	tb.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("kill: %v", err)
	}
	_ = s.cmd.Wait() // "signal: killed" is the expected outcome
	s.client.CloseIdleConnections()
	if strings.Contains(s.stderr.String(), "DATA RACE") || strings.Contains(s.stderr.String(), "panic:") {
		tb.Errorf("the server reported a race or a panic:\n%s", s.stderr.String())
	}
}

// load logs every account in, retries the pending keyed attempts, then
// sends new attempts from crashWorkers clients until burst has passed, and
// SIGKILLs the server at that moment, with requests in flight.
func (s *crashServer) load(tb testing.TB, j *crashJournal, keys map[string]string, profiles []string, seed uint64, burst time.Duration) {
	tb.Helper()
	tokens := map[string]string{}
	for name, key := range keys {
		var sess struct{ Token string }
		if status := s.post(tb, "/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`, "", &sess); status != http.StatusCreated {
			tb.Fatalf("session for %s: status %d", name, status)
		}
		tokens[name] = sess.Token
	}
	j.mu.Lock()
	pending := j.pending
	j.pending = nil
	j.mu.Unlock()
	for _, a := range pending {
		j.mu.Lock()
		j.retried++
		j.mu.Unlock()
		s.attempt(tb, j, tokens, a)
	}
	// Also repeat some keys that already have their order: they must
	// answer duplicate_order with that same order.
	for _, a := range j.someAcked(5) {
		s.attempt(tb, j, tokens, a)
	}
	if burst == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), burst)
	defer cancel()
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < 10_000 && ctx.Err() == nil; i++ {
				s.attempt(tb, j, tokens, newCrashAttempt(rng, keys, profiles, seed, w, i))
			}
		}()
	}
	<-ctx.Done()
	s.cmd.Process.Signal(syscall.SIGKILL) // requests are in flight
	wg.Wait()
}

// someAcked returns up to n keyed attempts that got their order.
func (j *crashJournal) someAcked(n int) []crashAttempt {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []crashAttempt
	for _, a := range j.acked {
		if a.idemKey != "" && len(out) < n {
			out = append(out, a)
		}
	}
	return out
}

func newCrashAttempt(rng *rand.Rand, keys map[string]string, profiles []string, seed uint64, worker, i int) crashAttempt {
	account := fmt.Sprintf("crash-%d", rng.IntN(len(keys)))
	p := crashPlans[rng.IntN(len(crashPlans))]
	a := crashAttempt{account: account, body: orderJSON(profiles[rng.IntN(len(profiles))], p.doc, p.plan)}
	if rng.IntN(2) == 0 {
		a.idemKey = fmt.Sprintf("k-%x-%d-%d", seed, worker, i)
	}
	return a
}

// attempt sends one order request and records what the answer proves.
func (s *crashServer) attempt(tb testing.TB, j *crashJournal, tokens map[string]string, a crashAttempt) {
	var out struct {
		ID    string `json:"id"`
		Error struct{ Code string }
		Order *struct{ ID string }
	}
	status := s.post(tb, "/api/v1/documents/orders/", tokens[a.account], a.body, a.idemKey, &out)
	j.mu.Lock()
	defer j.mu.Unlock()
	known := j.keyOrder[a.idemKey]
	switch {
	case status == 0: // cut off by the kill: the order may or may not exist
		j.lost++
		if a.idemKey != "" && known == "" {
			j.pending = append(j.pending, a)
		}
	case status == http.StatusCreated:
		j.created++
		if _, dup := j.acked[out.ID]; dup || out.ID == "" {
			j.failures = append(j.failures, fmt.Sprintf("201 with id %q seen before", out.ID))
		}
		if known != "" {
			j.failures = append(j.failures, fmt.Sprintf("key %s: a second order %s after %s", a.idemKey, out.ID, known))
		}
		j.acked[out.ID] = a
		if a.idemKey != "" {
			j.keyOrder[a.idemKey] = out.ID
		}
	case status == http.StatusConflict && out.Error.Code == companydocs.EDUPLICATEORDER && out.Order != nil:
		j.duplicates++
		if a.idemKey != "" && known != "" && out.Order.ID != known {
			j.failures = append(j.failures, fmt.Sprintf("key %s: duplicate_order names %s, the key's order is %s", a.idemKey, out.Order.ID, known))
		}
		if a.idemKey != "" && known == "" {
			// The first try was committed before the kill cut it off,
			// or the same combination is open under another key.
			j.keyOrder[a.idemKey] = out.Order.ID
		}
	case status == http.StatusPaymentRequired || status == http.StatusUnprocessableEntity:
		j.refused++
	default:
		j.failures = append(j.failures, fmt.Sprintf("unexpected answer %d %+v to %s", status, out.Error, a.body))
	}
}

// post sends a JSON POST and decodes the answer; status 0 means the
// connection failed (the server was killed).
func (s *crashServer) post(tb testing.TB, path, token, body, idemKey string, dst any) int {
	req, err := http.NewRequest("POST", s.base+path, strings.NewReader(body))
	if err != nil {
		tb.Error(err)
		return -1
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		tb.Errorf("POST %s: status %d, body not JSON: %q", path, resp.StatusCode, raw)
	}
	return resp.StatusCode
}

// crashCheck opens the order database left by a killed server and checks
// it against itself and against what the clients were told. It returns
// the number of stored orders.
func crashCheck(tb testing.TB, dir string, j *crashJournal) int {
	tb.Helper()
	svc, err := ordering.Open(filepath.Join(dir, ordering.DatabaseFile), nil, nil, ordering.Options{})
	if err != nil {
		tb.Fatalf("reopen after kill: %v", err)
	}
	defer svc.Close()
	if err := svc.Check(); err != nil {
		tb.Errorf("bbolt consistency check after kill: %v", err)
	}
	accounts, err := svc.Accounts()
	if err != nil {
		tb.Fatal(err)
	}
	stored := map[string]*companydocs.Order{}
	byKey := map[string]string{}
	open := map[string]string{}
	for _, acct := range accounts {
		var charged int64
		for _, o := range allOrders(tb, svc, acct.Name) {
			if _, dup := stored[o.ID]; dup {
				tb.Errorf("order %s is listed twice", o.ID)
			}
			stored[o.ID] = o
			charged += o.CreditsCharged
			if o.IdempotencyKey != "" {
				if prev, ok := byKey[o.IdempotencyKey]; ok {
					tb.Errorf("Idempotency-Key %s made two orders: %s and %s", o.IdempotencyKey, prev, o.ID)
				}
				byKey[o.IdempotencyKey] = o.ID
			}
			combo := acct.Name + " " + o.CompanyProfileID + " " + string(o.DocumentType) + " " + o.PlanID
			if prev, ok := open[combo]; ok {
				tb.Errorf("two open orders %s and %s for %s", prev, o.ID, combo)
			}
			open[combo] = o.ID
		}
		if acct.Credits != crashCredits-charged || acct.Credits < 0 {
			tb.Errorf("account %s has %d credits; it started with %d and its orders charged %d", acct.Name, acct.Credits, crashCredits, charged)
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for id, a := range j.acked {
		o, ok := stored[id]
		if !ok {
			tb.Errorf("order %s was acknowledged with 201 but is not stored", id)
			continue
		}
		if o.Account != a.account || o.IdempotencyKey != a.idemKey {
			tb.Errorf("order %s: stored for %s key %q, acknowledged for %s key %q", id, o.Account, o.IdempotencyKey, a.account, a.idemKey)
		}
	}
	for k, id := range j.keyOrder {
		if got, ok := byKey[k]; ok && got != id {
			tb.Errorf("Idempotency-Key %s: stored order %s, the server answered %s", k, got, id)
		}
	}
	return len(stored)
}

// allOrders pages through an account's orders.
func allOrders(tb testing.TB, svc *ordering.Service, account string) []*companydocs.Order {
	tb.Helper()
	var all []*companydocs.Order
	cursor := ""
	for {
		page, next, err := svc.Orders(context.Background(), account, "", cursor, companydocs.MaxOrdersPage)
		if err != nil {
			tb.Fatalf("list orders of %s: %v", account, err)
		}
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}
