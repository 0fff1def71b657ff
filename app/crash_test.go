package app

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/ingest"
	"companydocs/ordering"
)

// Bounds of the crash test: how many times the server is killed, how many
// sample records its generation holds, and the load between two kills.
const (
	crashKills      = 52
	crashRecords    = 500
	crashWorkers    = 3
	crashMaxBurst   = 200 * time.Millisecond
	crashCredits    = 60 // per account: the subscription plan costs 1, so debits run out mid-test
	crashAccounts   = 3
	crashOperator   = "crash-ops"
	crashStartLimit = 60 * time.Second
	// crashDrainLimit only guards against a hang while the last server
	// delivers the remaining events.
	crashDrainLimit = 3 * time.Minute
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

// crashTransition is a transition answered 2xx: it must be in the
// order's history after every later kill.
type crashTransition struct {
	order, status, actor string
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
	// orders are the known orders (owner and last known status), for
	// choosing transitions; refreshed from the database after each kill.
	orders map[string]*crashOrder
	open   []string // ids of orders last seen not terminal
	// transitions were acknowledged; uploads maps an order to the SHA-256
	// of the PDF whose upload was acknowledged.
	transitions []crashTransition
	uploads     map[string]string
	// counts of outcomes, for the report.
	created, duplicates, retried, refused, lost int
	moved, conflicts, movesLost                 int
	failures                                    []string
	// unknown503 makes a 503 an unknown outcome, like a cut-off answer
	// (the database went away mid-request).
	unknown503  bool
	unavailable int // answers 503 among the unknown outcomes
}

// crashOrder is an order as the clients know it.
type crashOrder struct{ account, status string }

func newCrashJournal() *crashJournal {
	return &crashJournal{acked: map[string]crashAttempt{}, keyOrder: map[string]string{},
		orders: map[string]*crashOrder{}, uploads: map[string]string{}}
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
	svc, _ := openOrderService(tb, dir, ordering.Options{})
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
	key, err := svc.CreateAccountWithRole(crashOperator, companydocs.RoleOperator, 0)
	if err != nil {
		tb.Fatal(err)
	}
	keys[crashOperator] = key
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
func startCrashServer(tb testing.TB, dir string, extra ...string) *crashServer {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--search-rate", "0", "--session-rate", "0", "--write-rate", "0",
		"--log-format", "json", "--log-level", "warn", "--poll-interval", "1h",
		"--webhook-allow-http", "--webhook-allow-private", "--webhook-retry-base", "20ms", "--webhook-timeout", "5s")
	cmd.Args = append(cmd.Args, extra...)
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

// crashLoad retries the pending keyed attempts, then sends new attempts
// and transitions, each to a random one of nodes, from crashWorkers
// clients until burst has passed, and SIGKILLs nodes[victim] at that
// moment, with requests in flight (none when victim is -1). outage, if
// set, runs meanwhile.
func crashLoad(tb testing.TB, j *crashJournal, nodes []*crashServer, victim int, tokens map[string]string, profiles []string, seed uint64, burst time.Duration, outage func()) {
	tb.Helper()
	j.mu.Lock()
	pending := j.pending
	j.pending = nil
	j.mu.Unlock()
	for i, a := range pending {
		j.mu.Lock()
		j.retried++
		j.mu.Unlock()
		nodes[i%len(nodes)].attempt(tb, j, tokens, a)
	}
	// Also repeat some keys that already have their order: they must
	// answer duplicate_order with that same order.
	for i, a := range j.someAcked(5) {
		nodes[i%len(nodes)].attempt(tb, j, tokens, a)
	}
	if burst == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), burst)
	defer cancel()
	var wg sync.WaitGroup
	if outage != nil {
		wg.Go(outage)
	}
	for w := range crashWorkers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for i := 0; i < 10_000 && ctx.Err() == nil; i++ {
				s := nodes[0]
				if len(nodes) > 1 {
					s = nodes[rng.IntN(len(nodes))]
				}
				if rng.IntN(5) < 2 || !s.move(tb, j, tokens, rng) {
					s.attempt(tb, j, tokens, newCrashAttempt(rng, profiles, seed, w, i))
				}
			}
		})
	}
	<-ctx.Done()
	if victim >= 0 {
		nodes[victim].cmd.Process.Signal(syscall.SIGKILL) // requests are in flight
	}
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

// login opens a session for every account and returns their tokens.
func (s *crashServer) login(tb testing.TB, keys map[string]string) map[string]string {
	tb.Helper()
	tokens := map[string]string{}
	for name, key := range keys {
		var sess struct{ Token string }
		if status := s.post(tb, "/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`, "", &sess); status != http.StatusCreated {
			tb.Fatalf("session for %s: status %d", name, status)
		}
		tokens[name] = sess.Token
	}
	return tokens
}

func newCrashAttempt(rng *rand.Rand, profiles []string, seed uint64, worker, i int) crashAttempt {
	account := fmt.Sprintf("crash-%d", rng.IntN(crashAccounts))
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
	case status == 0 || (status == http.StatusServiceUnavailable && j.unknown503): // cut off by the kill: the order may or may not exist
		j.lost++
		if status != 0 {
			j.unavailable++
		}
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
		j.known(out.ID, a.account, companydocs.OrderStatusPreviewReady)
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
	return s.send(tb, "POST", path, "application/json", token, body, idemKey, dst)
}

// send is post with a method and a content type.
func (s *crashServer) send(tb testing.TB, method, path, contentType, token, body, idemKey string, dst any) int {
	status, raw, err := s.exchange(method, path, contentType, token, body, idemKey)
	switch {
	case status == -1:
		tb.Error(err)
		return -1
	case err != nil:
		return 0 // killed: no answer, or not all of it
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		tb.Errorf("%s %s: status %d, body not JSON: %q", method, path, status, raw)
	}
	return status
}

// exchange sends a request and returns the status and the raw body. The
// status is -1 when the request could not be made, 0 when no answer came;
// err says why, also when the body was cut off.
func (s *crashServer) exchange(method, path, contentType, token, body, idemKey string) (status int, raw []byte, err error) {
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		return -1, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err = io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, raw, fmt.Errorf("read the body: %w", err)
	}
	return resp.StatusCode, raw, nil
}

// crashCheck opens the order database left by a killed server and checks
// it against itself and against what the clients were told. It returns
// the stored orders and refreshes the journal's view of them.
func crashCheck(tb testing.TB, dir string, j *crashJournal) map[string]*companydocs.Order {
	tb.Helper()
	svc, db := openOrderService(tb, dir, ordering.Options{})
	defer svc.Close()
	return crashCheckStore(tb, svc.Accounts, svc.Orders, db.Check, bbolt.DocumentsIn(filepath.Join(dir, ordering.DocumentsDir)).Open, j)
}

// crashCheckStore is crashCheck on a store opened by the caller, which
// no server changes meanwhile; check is the store's own check.
func crashCheckStore(tb testing.TB, svc *ordering.Accounts, orders *ordering.Orders, check func() error, documents ordering.DocumentReader, j *crashJournal) map[string]*companydocs.Order {
	tb.Helper()
	if err := check(); err != nil {
		tb.Errorf("consistency check after kill: %v", err)
	}
	accounts, err := svc.All()
	if err != nil {
		tb.Fatal(err)
	}
	stored := map[string]*companydocs.Order{}
	byKey := map[string]string{}
	open := map[string]string{}
	for _, acct := range accounts {
		var charged, refunded int64
		var list []*companydocs.Order
		if acct.Role != companydocs.RoleOperator {
			list = allOrders(tb, orders, acct.Name)
		}
		for _, o := range list {
			if _, dup := stored[o.ID]; dup {
				tb.Errorf("order %s is listed twice", o.ID)
			}
			o.Account = acct.Name
			stored[o.ID] = o
			charged += o.CreditsCharged
			refunded += o.CreditsRefunded
			checkHistory(tb, o)
			checkDocument(tb, documents, o)
			if o.IdempotencyKey != "" {
				if prev, ok := byKey[o.IdempotencyKey]; ok {
					tb.Errorf("Idempotency-Key %s made two orders: %s and %s", o.IdempotencyKey, prev, o.ID)
				}
				byKey[o.IdempotencyKey] = o.ID
			}
			if companydocs.TerminalStatus(o.Status) {
				continue
			}
			combo := acct.Name + " " + o.CompanyProfileID + " " + string(o.DocumentType) + " " + o.PlanID
			if prev, ok := open[combo]; ok {
				tb.Errorf("two open orders %s and %s for %s", prev, o.ID, combo)
			}
			open[combo] = o.ID
		}
		if start := startingCredits(acct.Name); acct.Credits != start-charged+refunded || acct.Credits < 0 {
			tb.Errorf("account %s has %d credits; it started with %d, its orders charged %d and refunded %d", acct.Name, acct.Credits, start, charged, refunded)
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	checkAcknowledged(tb, j, stored, byKey)
	j.refresh(stored)
	return stored
}

func startingCredits(account string) int64 {
	if account == crashOperator {
		return 0
	}
	return crashCredits
}

// checkAcknowledged compares the stored orders with the answers the
// clients got: every 201 order, every key's order, every 2xx transition
// and every acknowledged upload.
func checkAcknowledged(tb testing.TB, j *crashJournal, stored map[string]*companydocs.Order, byKey map[string]string) {
	tb.Helper()
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
	for _, tr := range j.transitions {
		o, ok := stored[tr.order]
		if !ok || !slices.ContainsFunc(o.History, func(h companydocs.HistoryEntry) bool { return h.Status == tr.status && h.Actor == tr.actor }) {
			tb.Errorf("the transition of order %s to %s by the %s was acknowledged but is not in its history", tr.order, tr.status, tr.actor)
		}
	}
	for id, sha := range j.uploads {
		if o := stored[id]; o == nil || o.Document == nil || o.Document.SHA256 != sha {
			tb.Errorf("order %s: the upload of %s was acknowledged, the order shows %+v", id, sha, o)
		}
	}
}

// checkHistory: the history is a path through the transition table that
// ends in the order's status, and credits were refunded exactly when the
// order ended cancelled or failed, and then all of them.
func checkHistory(tb testing.TB, o *companydocs.Order) {
	tb.Helper()
	h := o.History
	if len(h) == 0 || h[0].Status != companydocs.OrderStatusPreviewReady || h[len(h)-1].Status != o.Status {
		tb.Errorf("order %s in %s has the history %+v", o.ID, o.Status, h)
		return
	}
	for i := 1; i < len(h); i++ {
		if !companydocs.CanTransition(h[i-1].Status, h[i].Status, h[i].Actor) {
			tb.Errorf("order %s: %s -> %s by the %s is not a transition", o.ID, h[i-1].Status, h[i].Status, h[i].Actor)
		}
	}
	want := int64(0)
	if o.Status == companydocs.OrderStatusCancelled || o.Status == companydocs.OrderStatusFailed {
		want = o.CreditsCharged
	}
	if o.CreditsRefunded != want {
		tb.Errorf("order %s in %s charged %d credits and refunded %d, want %d", o.ID, o.Status, o.CreditsCharged, o.CreditsRefunded, want)
	}
}

// checkDocument: a DELIVERED order's document is stored under its
// hash, with that hash and size; no other order has a document.
func checkDocument(tb testing.TB, documents ordering.DocumentReader, o *companydocs.Order) {
	tb.Helper()
	if o.Status != companydocs.OrderStatusDelivered {
		if o.Document != nil {
			tb.Errorf("order %s in %s has a document", o.ID, o.Status)
		}
		return
	}
	if o.Document == nil || len(o.Document.SHA256) != 64 {
		tb.Errorf("order %s is DELIVERED without a document: %+v", o.ID, o.Document)
		return
	}
	sha := o.Document.SHA256
	r, err := documents(context.Background(), sha)
	if err != nil {
		tb.Errorf("order %s points at a missing document: %v", o.ID, err)
		return
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		tb.Errorf("order %s: reading its document: %v", o.ID, err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != sha || int64(len(b)) != o.Document.Size {
		tb.Errorf("order %s: the document file of %s has %d bytes and the SHA-256 %x, the order says %d bytes", o.ID, sha, len(b), sum, o.Document.Size)
	}
}

// allOrders pages through an account's orders.
func allOrders(tb testing.TB, svc *ordering.Orders, account string) []*companydocs.Order {
	tb.Helper()
	var all []*companydocs.Order
	cursor := ""
	for {
		page, next, err := svc.List(context.Background(), account, "", cursor, companydocs.MaxOrdersPage)
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
