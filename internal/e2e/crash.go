package e2e

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/ingest"
	"companydocs/internal/syncbuf"
	"companydocs/ordering"
)

// Bounds of the crash test: how many times the server is killed, how many
// sample records its generation holds, and the load between two kills.
const (
	CrashKills      = 52
	CrashRecords    = 500
	CrashWorkers    = 3
	CrashMaxBurst   = 200 * time.Millisecond
	CrashCredits    = 60 // per account: the subscription plan costs 1, so debits run out mid-test
	CrashAccounts   = 3
	CrashOperator   = "crash-ops"
	crashStartLimit = 60 * time.Second
	// crashDrainLimit only guards against a hang while the last server
	// delivers the remaining events.
	crashDrainLimit = 3 * time.Minute
)

// CrashPlans are the (document type, plan) pairs of the embedded plans.
var CrashPlans = []struct{ Doc, Plan string }{
	{"AD", "ad-single"}, {"CD", "cd-single"}, {"AD", "subscription-basic"}, {"CD", "subscription-basic"},
}

// CrashAttempt is one order request as the client knows it.
type CrashAttempt struct {
	Account string
	Body    string
	IdemKey string // empty: sent without Idempotency-Key
}

// crashTransition is a transition answered 2xx: it must be in the
// order's history after every later kill.
type crashTransition struct {
	Order, Status, Actor string
}

// CrashJournal is what the clients learnt across all kills.
type CrashJournal struct {
	Mu sync.Mutex
	// acked maps an order id to the attempt that got 201 for it.
	Acked map[string]CrashAttempt
	// keyOrder maps an Idempotency-Key to the order id a 201 or a 409
	// reported for it; pending holds keyed attempts whose outcome is
	// unknown (the server died) and must be retried.
	KeyOrder map[string]string
	Pending  []CrashAttempt
	// orders are the known orders (owner and last known status), for
	// choosing transitions; refreshed from the database after each kill.
	Orders map[string]*CrashOrder
	open   []string // ids of orders last seen not terminal
	// transitions were acknowledged; uploads maps an order to the SHA-256
	// of the PDF whose upload was acknowledged.
	Transitions []crashTransition
	Uploads     map[string]string
	// counts of outcomes, for the report.
	Created, Duplicates, Retried, Refused, Lost int
	Moved, Conflicts, MovesLost                 int
	Failures                                    []string
	// unknown503 makes a 503 an unknown outcome, like a cut-off answer
	// (the database went away mid-request).
	Unknown503  bool
	Unavailable int // answers 503 among the unknown outcomes
}

// CrashOrder is an order as the clients know it.
type CrashOrder struct{ account, status string }

// CrashProfiles returns the ids of live registry profiles among the first
// n sample records, decoded the way the ingest decodes them.
func CrashProfiles(tb testing.TB, n int) []string {
	tb.Helper()
	var ids []string
	for _, line := range SampleLines(tb, n) {
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

// SampleLines returns the first n lines of the embedded sample.
func SampleLines(tb testing.TB, n int) [][]byte {
	tb.Helper()
	f, err := os.Open(SampleFile(tb))
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

// CrashCreateAccounts creates the accounts and returns their API keys.
func CrashCreateAccounts(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	svc, _ := OpenOrderService(tb, dir, ordering.Options{})
	defer svc.Close()
	keys := map[string]string{}
	for i := range CrashAccounts {
		name := fmt.Sprintf("crash-%d", i)
		key, err := svc.CreateAccount(name, CrashCredits)
		if err != nil {
			tb.Fatal(err)
		}
		keys[name] = key
	}
	key, err := svc.CreateAccountWithRole(CrashOperator, companydocs.RoleOperator, 0)
	if err != nil {
		tb.Fatal(err)
	}
	keys[CrashOperator] = key
	return keys
}

// CrashServer is the companydocs binary (this test binary re-executed)
// serving on a loopback port.
type CrashServer struct {
	Cmd    *exec.Cmd
	Base   string
	Stderr *syncbuf.Buffer
	client *http.Client
}

// ServingLine is the log line of a server that serves; its group is the
// server's base URL.
var ServingLine = regexp.MustCompile(`serving \d+ company profiles on (http://[0-9.:]+)/`)

// StartCrashServer starts "companydocs serve" on dir and waits until it
// listens.
func StartCrashServer(tb testing.TB, dir string, extra ...string) *CrashServer {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "serve", "--data-dir", dir, "--addr", "127.0.0.1:0", "--search-rate", "0", "--session-rate", "0", "--write-rate", "0",
		"--log-format", "json", "--log-level", "warn", "--poll-interval", "1h",
		"--webhook-allow-http", "--webhook-allow-private", "--webhook-retry-base", "20ms", "--webhook-timeout", "5s")
	cmd.Args = append(cmd.Args, extra...)
	cmd.Env = append(os.Environ(), RunMainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	s := &CrashServer{Cmd: cmd, Stderr: &syncbuf.Buffer{},
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: CrashWorkers}}}
	cmd.Stderr = s.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := ServingLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case base, ok := <-found:
		if !ok {
			s.Kill(tb)
			tb.Fatalf("the server exited before serving:\n%s", s.Stderr.String())
		}
		s.Base = base
	case <-time.After(crashStartLimit):
		s.Kill(tb)
		tb.Fatalf("the server did not start within %v:\n%s", crashStartLimit, s.Stderr.String())
	}
	return s
}

// Kill sends SIGKILL and reaps the process.
func (s *CrashServer) Kill(tb testing.TB) {
	tb.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		tb.Fatalf("kill: %v", err)
	}
	_ = s.Cmd.Wait() // "signal: killed" is the expected outcome
	s.client.CloseIdleConnections()
	if strings.Contains(s.Stderr.String(), "DATA RACE") || strings.Contains(s.Stderr.String(), "panic:") {
		tb.Errorf("the server reported a race or a panic:\n%s", s.Stderr.String())
	}
}

// SomeAcked returns up to n keyed attempts that got their order.
func (j *CrashJournal) SomeAcked(n int) []CrashAttempt {
	j.Mu.Lock()
	defer j.Mu.Unlock()
	var out []CrashAttempt
	for _, a := range j.Acked {
		if a.IdemKey != "" && len(out) < n {
			out = append(out, a)
		}
	}
	return out
}

// Login opens a session for every account and returns their tokens.
func (s *CrashServer) Login(tb testing.TB, keys map[string]string) map[string]string {
	tb.Helper()
	tokens := map[string]string{}
	for name, key := range keys {
		var sess struct{ Token string }
		if status := s.Post(tb, "/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`, "", &sess); status != http.StatusCreated {
			tb.Fatalf("session for %s: status %d", name, status)
		}
		tokens[name] = sess.Token
	}
	return tokens
}

// Attempt sends one order request and records what the answer proves.
func (s *CrashServer) Attempt(tb testing.TB, j *CrashJournal, tokens map[string]string, a CrashAttempt) {
	var out struct {
		ID    string `json:"id"`
		Error struct{ Code string }
		Order *struct{ ID string }
	}
	status := s.Post(tb, "/api/v1/documents/orders/", tokens[a.Account], a.Body, a.IdemKey, &out)
	j.Mu.Lock()
	defer j.Mu.Unlock()
	known := j.KeyOrder[a.IdemKey]
	switch {
	case status == 0 || (status == http.StatusServiceUnavailable && j.Unknown503): // cut off by the kill: the order may or may not exist
		j.Lost++
		if status != 0 {
			j.Unavailable++
		}
		if a.IdemKey != "" && known == "" {
			j.Pending = append(j.Pending, a)
		}
	case status == http.StatusCreated:
		j.Created++
		if _, dup := j.Acked[out.ID]; dup || out.ID == "" {
			j.Failures = append(j.Failures, fmt.Sprintf("201 with id %q seen before", out.ID))
		}
		if known != "" {
			j.Failures = append(j.Failures, fmt.Sprintf("key %s: a second order %s after %s", a.IdemKey, out.ID, known))
		}
		j.Acked[out.ID] = a
		j.known(out.ID, a.Account, companydocs.OrderStatusPreviewReady)
		if a.IdemKey != "" {
			j.KeyOrder[a.IdemKey] = out.ID
		}
	case status == http.StatusConflict && out.Error.Code == companydocs.EDUPLICATEORDER && out.Order != nil:
		j.Duplicates++
		if a.IdemKey != "" && known != "" && out.Order.ID != known {
			j.Failures = append(j.Failures, fmt.Sprintf("key %s: duplicate_order names %s, the key's order is %s", a.IdemKey, out.Order.ID, known))
		}
		if a.IdemKey != "" && known == "" {
			// The first try was committed before the kill cut it off,
			// or the same combination is open under another key.
			j.KeyOrder[a.IdemKey] = out.Order.ID
		}
	case status == http.StatusPaymentRequired || status == http.StatusUnprocessableEntity:
		j.Refused++
	default:
		j.Failures = append(j.Failures, fmt.Sprintf("unexpected answer %d %+v to %s", status, out.Error, a.Body))
	}
}

// Post sends a JSON POST and decodes the answer; status 0 means the
// connection failed (the server was killed).
func (s *CrashServer) Post(tb testing.TB, path, token, body, idemKey string, dst any) int {
	return s.Send(tb, "POST", path, "application/json", token, body, idemKey, dst)
}

// Send is post with a method and a content type.
func (s *CrashServer) Send(tb testing.TB, method, path, contentType, token, body, idemKey string, dst any) int {
	status, raw, err := s.Exchange(method, path, contentType, token, body, idemKey)
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

// Exchange sends a request and returns the status and the raw body. The
// status is -1 when the request could not be made, 0 when no answer came;
// err says why, also when the body was cut off.
func (s *CrashServer) Exchange(method, path, contentType, token, body, idemKey string) (status int, raw []byte, err error) {
	req, err := http.NewRequest(method, s.Base+path, strings.NewReader(body))
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
