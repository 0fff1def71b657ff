package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"companydocs/internal/bench"
)

// lifecycleRun is one run of the complete order lifecycle.
type lifecycleRun struct {
	Lifecycles    int           `json:"lifecycles"`
	Errors        int           `json:"errors"`
	Wall          time.Duration `json:"wall"`
	PerSec        float64       `json:"lifecycles_per_sec"`
	Step          bench.Latency `json:"step_latency"` // one HTTP call of a lifecycle
	Deliveries    int           `json:"webhook_deliveries"`
	Drain         time.Duration `json:"drain"` // from the last lifecycle to the last delivery
	DeliveriesSec float64       `json:"webhook_deliveries_per_sec"`
	LagP50        time.Duration `json:"outbox_lag_p50"`
	LagP99        time.Duration `json:"outbox_lag_p99"`
	LagMax        time.Duration `json:"outbox_lag_max"`
}

type lifecycleResult struct {
	Machine  machine        `json:"machine"`
	Command  string         `json:"command"`
	Clients  int            `json:"clients"`
	PDFSize  int            `json:"pdf_size"`
	Store    string         `json:"store"`
	Runs     []lifecycleRun `json:"runs"`
	Median   lifecycleRun   `json:"median"`
	Postgres pgInsight      `json:"postgres"`
}

// runLifecycle measures complete lifecycles: each client creates a
// one-off order, the operator confirms the payment, marks it requested
// and uploads a PDF; every account has a webhook endpoint on a receiver
// in this process, which notes when each event arrives.
func runLifecycle(ctx context.Context, args []string) error {
	fs := newFlags("lifecycle")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory with a published generation (accounts and orders are added)")
	profilesPath := fs.String("profiles", "profiles.txt", "orderable profile ids, one a line")
	clients := fs.Int("clients", 32, "concurrent clients, each with its own account and webhook endpoint")
	runs := fs.Int("runs", 3, "runs (medians are reported)")
	total := fs.Int("lifecycles", 3000, "lifecycles per run")
	pdfSize := fs.Int("pdf-size", 200<<10, "bytes of each uploaded PDF")
	duration := fs.Duration("duration", 60*time.Second, "longest run")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	sf := addStoreFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	profiles, err := orderableProfiles(*profilesPath)
	if err != nil {
		return err
	}
	nodes, err := newOrderNodes(ctx, *bin, *dataDir, sf)
	if err != nil {
		return err
	}
	defer nodes.close()
	opKey, keys, err := createLifecycleAccounts(*bin, nodes.storeArgs(), *clients**runs)
	if err != nil {
		return err
	}
	rcv, err := startLagReceiver()
	if err != nil {
		return err
	}
	defer rcv.srv.Close()
	if err := nodes.start(ctx, "--session-rate", "0", "--webhook-allow-http", "--webhook-allow-private"); err != nil {
		return err
	}
	res := lifecycleResult{Machine: describeMachine(), Store: nodes.describe(), Clients: *clients, PDFSize: *pdfSize, Command: "bench lifecycle " + strings.Join(args, " ")}
	client := bench.NewClient(*clients + 4)
	pdf := makePDF(*pdfSize)
	fmt.Fprintf(os.Stderr, "servers: pid %s\n", nodes.pids())
	insight, err := nodes.observe(ctx)
	if err != nil {
		return err
	}
	for r := range *runs {
		tokens, err := loginRun(ctx, client, nodes, opKey, keys[r**clients:(r+1)**clients], fmt.Sprintf("%s/r%d", rcv.url, r))
		if err != nil {
			return err
		}
		rcv.reset()
		run := lifecycles(ctx, client, nodes, tokens[0], tokens[1:], profiles, pdf, *total, *duration)
		rcv.wait(ctx, 4*run.Lifecycles, 2*time.Minute)
		rcv.summarise(&run)
		res.Runs = append(res.Runs, run)
	}
	res.Postgres = insight()
	res.Median = lifecycleMedian(res.Runs)
	printLifecycle(res)
	return writeJSON(*jsonOut, res)
}

// orderableProfiles reads the profiles the clients order from; an empty
// list is an error, as a run could order nothing.
func orderableProfiles(path string) ([]string, error) {
	profiles, err := readProfiles(path)
	if err == nil && len(profiles) == 0 {
		err = fmt.Errorf("no profiles in %s", path)
	}
	return profiles, err
}

// createLifecycleAccounts creates the operator, who confirms payments and
// delivers, and n client accounts, with the CLI before the servers start
// (on orders.db they must not run).
func createLifecycleAccounts(bin string, store []string, n int) (operator string, clients []string, err error) {
	clients, err = createAccounts(bin, store, n)
	if err != nil {
		return "", nil, err
	}
	operator, err = createOperator(bin, store)
	return operator, clients, err
}

// loginRun opens the sessions of one run: the operator's first, then one
// per client key, and gives client i the webhook endpoint receiver/ci on
// the receiver, so that each delivery is told apart by run and client.
// The operator's session is shared by the clients on every node.
func loginRun(ctx context.Context, c *http.Client, nodes *orderNodes, opKey string, keys []string, receiver string) ([]string, error) {
	tokens, err := login(ctx, c, nodes, append([]string{opKey}, keys...))
	if err != nil {
		return nil, err
	}
	for i, tok := range tokens[1:] {
		if err := registerEndpoint(ctx, c, nodes.url(i), tok, fmt.Sprintf("%s/c%d", receiver, i)); err != nil {
			return nil, err
		}
	}
	return tokens, nil
}

// lifecycleMedian is the run of the median throughput, its delivery rate
// and p99 lag replaced by their own medians over the runs (the run of
// the median throughput need not have the median of those).
func lifecycleMedian(runs []lifecycleRun) lifecycleRun {
	m := bench.Median(runs, func(r lifecycleRun) float64 { return r.PerSec })
	m.DeliveriesSec = bench.MedianOf(runs, func(r lifecycleRun) float64 { return r.DeliveriesSec })
	m.LagP99 = time.Duration(bench.MedianOf(runs, func(r lifecycleRun) float64 { return float64(r.LagP99) }))
	return m
}

// printLifecycle prints the machine, the median run as a Markdown table
// and what PostgreSQL saw.
func printLifecycle(res lifecycleResult) {
	printMachine(res.Machine)
	m := res.Median
	fmt.Printf("Complete lifecycles (%s; create, pay, request, deliver a %d KB PDF), %d clients, one webhook endpoint each, medians of %d runs:\n\n", res.Store, res.PDFSize>>10, res.Clients, len(res.Runs))
	fmt.Println("| lifecycles | lifecycles/s | step p50 ms | step p99 ms | errors | webhook deliveries | deliveries/s | drain s | outbox lag p50 ms | p99 ms | max ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %.0f | %s | %s | %d | %d | %.0f | %.1f | %s | %s | %s |\n", m.Lifecycles, m.PerSec, ms(m.Step.P50), ms(m.Step.P99), m.Errors,
		m.Deliveries, m.DeliveriesSec, m.Drain.Seconds(), ms(m.LagP50), ms(m.LagP99), ms(m.LagMax))
	printInsight(res.Postgres)
}

func createOperator(bin string, store []string) (string, error) {
	name := "bench-ops-" + time.Now().UTC().Format("20060102T150405")
	out, err := exec.Command(bin, append([]string{"accounts", "create", "--name", name, "--operator", "--json"}, store...)...).Output()
	if err != nil {
		return "", fmt.Errorf("create operator: %w", err)
	}
	var acc struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &acc); err != nil || acc.APIKey == "" {
		return "", fmt.Errorf("create operator: unexpected output %q", out)
	}
	return acc.APIKey, nil
}

func registerEndpoint(ctx context.Context, c *http.Client, base, token, url string) error {
	status, err := bench.Post(ctx, c, base+"/api/v1/webhooks/", token, map[string]string{"url": url}, nil)
	if err != nil || status != http.StatusCreated {
		return fmt.Errorf("register webhook %s: status %d: %v", url, status, err)
	}
	return nil
}

// makePDF returns size bytes starting "%PDF-"; the rest is random, so
// that no two runs' documents share a file.
func makePDF(size int) []byte {
	b := make([]byte, max(size, 16))
	_, _ = rand.Read(b)
	copy(b, "%PDF-1.7\n")
	return b
}

// lifecycles runs up to total lifecycles from the clients; each client
// walks its own profiles, so no order is open twice; client i and the
// operator calls of its orders go to node i modulo the nodes.
func lifecycles(ctx context.Context, c *http.Client, nodes *orderNodes, op string, tokens, profiles []string, pdf []byte, total int, limit time.Duration) lifecycleRun {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var started atomic.Int64
	var mu sync.Mutex
	var steps []bench.Sample
	run := lifecycleRun{}
	start := time.Now()
	var wg sync.WaitGroup
	for i, tok := range tokens {
		wg.Add(1)
		base := nodes.url(i)
		go func() {
			defer wg.Done()
			var mine []bench.Sample
			done, failed := 0, 0
			for j := 0; ctx.Err() == nil && started.Add(1) <= int64(total); j++ {
				body := map[string]string{"company_profile_id": profiles[(i+j*len(tokens))%len(profiles)], "document_type": "AD", "plan_id": "ad-single"}
				if lifecycle(ctx, c, base, op, tok, body, pdf, &mine) {
					done++
				} else {
					failed++
				}
			}
			mu.Lock()
			steps = append(steps, mine...)
			run.Lifecycles += done
			run.Errors += failed
			mu.Unlock()
		}()
	}
	wg.Wait()
	run.Wall = time.Since(start)
	run.PerSec = float64(run.Lifecycles) / run.Wall.Seconds()
	run.Step = bench.Summarise(steps, run.Wall)
	return run
}

// lifecycle makes one order and takes it to DELIVERED.
func lifecycle(ctx context.Context, c *http.Client, base, op, tok string, body map[string]string, pdf []byte, samples *[]bench.Sample) bool {
	step := func(method, path, token, ctype string, payload []byte, dst any) bool {
		t0 := time.Now()
		status, err := call(ctx, c, method, base+path, token, ctype, payload, dst)
		ok := err == nil && status < 300
		*samples = append(*samples, bench.Sample{Kind: path, Latency: time.Since(t0), Err: !ok})
		return ok
	}
	b, _ := json.Marshal(body)
	var o struct{ ID string }
	if !step("POST", "/api/v1/documents/orders/", tok, "application/json", b, &o) || o.ID == "" {
		return false
	}
	ops := "/api/v1/operator/orders/" + o.ID
	return step("POST", ops+"/pay", op, "application/json", nil, nil) &&
		step("POST", ops+"/request", op, "application/json", nil, nil) &&
		step("PUT", ops+"/document", op, "application/pdf", pdf, nil)
}

func call(ctx context.Context, c *http.Client, method, url, token, ctype string, body []byte, dst any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && dst != nil && resp.StatusCode < 300 {
		err = json.Unmarshal(data, dst)
	}
	return resp.StatusCode, err
}

// lagReceiver answers every webhook 204 and notes, per webhook-id, how
// long after the event's timestamp (its commit) it arrived.
type lagReceiver struct {
	srv *http.Server
	url string

	mu    sync.Mutex
	lags  map[string]time.Duration
	first time.Time
	last  time.Time
}

func startLagReceiver() (*lagReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &lagReceiver{url: "http://" + ln.Addr().String(), lags: map[string]time.Duration{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *lagReceiver) serve(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	var msg struct {
		Timestamp time.Time `json:"timestamp"`
	}
	err := json.NewDecoder(req.Body).Decode(&msg)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if _, dup := r.lags[req.Header.Get("webhook-id")+req.URL.Path]; !dup {
		r.lags[req.Header.Get("webhook-id")+req.URL.Path] = now.Sub(msg.Timestamp)
	}
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *lagReceiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lags, r.first, r.last = map[string]time.Duration{}, time.Time{}, time.Time{}
}

// wait returns once n deliveries arrived, or after limit.
func (r *lagReceiver) wait(ctx context.Context, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		r.mu.Lock()
		got := len(r.lags)
		r.mu.Unlock()
		if got >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// summarise adds the receiver's figures to run: deliveries per second
// from the first to the last receipt, and the lag percentiles.
func (r *lagReceiver) summarise(run *lifecycleRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	lags := make([]time.Duration, 0, len(r.lags))
	for _, l := range r.lags {
		lags = append(lags, l)
	}
	slices.Sort(lags)
	run.Deliveries = len(lags)
	if len(lags) == 0 {
		return
	}
	if span := r.last.Sub(r.first); span > 0 {
		run.DeliveriesSec = float64(len(lags)) / span.Seconds()
	}
	run.Drain = max(0, r.last.Sub(r.first)-run.Wall)
	at := func(q float64) time.Duration { return lags[min(len(lags)-1, int(q*float64(len(lags))))] }
	run.LagP50, run.LagP99, run.LagMax = at(0.50), at(0.99), lags[len(lags)-1]
}
