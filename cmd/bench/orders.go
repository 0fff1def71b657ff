package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"companydocs/internal/bench"
)

type ordersResult struct {
	Machine  machine         `json:"machine"`
	Command  string          `json:"command"`
	Store    string          `json:"store"`
	Clients  int             `json:"clients"`
	Runs     []bench.Latency `json:"runs"`
	Median   bench.Latency   `json:"median"`
	Postgres pgInsight       `json:"postgres"`
}

func runOrders(ctx context.Context, args []string) error {
	fs := newFlags("orders")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory with a published generation (accounts and orders are added)")
	profilesPath := fs.String("profiles", "profiles.txt", "orderable profile ids, one a line")
	clients := fs.Int("clients", 32, "concurrent clients, each with its own account")
	runs := fs.Int("runs", 3, "runs (medians are reported)")
	requests := fs.Int("requests", 6000, "order creates per run")
	duration := fs.Duration("duration", 60*time.Second, "longest run")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	sf := addStoreFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	profiles, err := readProfiles(*profilesPath)
	if err != nil {
		return err
	}
	if 2*len(profiles)**clients < *requests {
		return fmt.Errorf("%d profiles allow at most %d distinct orders per run with %d clients", len(profiles), 2*len(profiles)**clients, *clients)
	}
	nodes, err := newOrderNodes(ctx, *bin, *dataDir, sf)
	if err != nil {
		return err
	}
	defer nodes.close()
	keys, err := createAccounts(*bin, nodes.storeArgs(), *clients**runs)
	if err != nil {
		return err
	}
	if err := nodes.start(ctx, "--session-rate", "0"); err != nil { // every account logs in from 127.0.0.1
		return err
	}
	res := ordersResult{Machine: describeMachine(), Store: nodes.describe(), Clients: *clients, Command: "bench orders " + strings.Join(args, " ")}
	client := bench.NewClient(*clients)
	fmt.Fprintf(os.Stderr, "servers: pid %s\n", nodes.pids())
	insight, err := nodes.observe(ctx)
	if err != nil {
		return err
	}
	for r := range *runs {
		tokens, err := login(ctx, client, nodes, keys[r**clients:(r+1)**clients])
		if err != nil {
			return err
		}
		samples, wall := createOrders(ctx, client, nodes, tokens, profiles, *requests, *duration)
		res.Runs = append(res.Runs, bench.Summarise(samples, wall))
	}
	res.Postgres = insight()
	res.Median = medianLatency(res.Runs)
	printMachine(res.Machine)
	m := res.Median
	fmt.Printf("Order creation (%s), %d clients, medians of %d runs:\n\n", res.Store, *clients, *runs)
	fmt.Println("| creates | p50 ms | p95 ms | p99 ms | max ms | creates/s | errors |\n|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %s | %s | %s | %s | %.0f | %d |\n", m.N, ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), m.PerSec, m.Errors)
	printInsight(res.Postgres)
	return writeJSON(*jsonOut, res)
}

// createAccounts creates n accounts with the CLI (on orders.db the
// server must not run) and returns their API keys; store are the flags
// naming the store.
func createAccounts(bin string, store []string, n int) ([]string, error) {
	keys := make([]string, n)
	stamp := time.Now().UTC().Format("20060102T150405")
	for i := range keys {
		out, err := exec.Command(bin, append([]string{"accounts", "create", "--name", fmt.Sprintf("bench-%s-%d", stamp, i), "--credits", "1000000", "--json"}, store...)...).Output()
		if err != nil {
			return nil, fmt.Errorf("create account: %w", err)
		}
		var acc struct {
			APIKey string `json:"api_key"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(out), &acc); err != nil || acc.APIKey == "" {
			return nil, fmt.Errorf("create account: unexpected output %q", out)
		}
		keys[i] = acc.APIKey
	}
	return keys, nil
}

// login opens a session for each key, key i on the node client i uses.
func login(ctx context.Context, c *http.Client, nodes *orderNodes, keys []string) ([]string, error) {
	tokens := make([]string, len(keys))
	for i, k := range keys {
		var s struct {
			Token string `json:"token"`
		}
		status, err := bench.Post(ctx, c, nodes.url(i)+"/api/v1/auth/sessions/", "", map[string]string{"api_key": k}, &s)
		if err != nil || status >= 300 || s.Token == "" {
			return nil, fmt.Errorf("log in: status %d: %v", status, err)
		}
		tokens[i] = s.Token
	}
	return tokens, nil
}

// createOrders sends up to total creates; client i uses token i and
// orders AD and CD for its next profile, so no order repeats; clients are
// spread over the nodes.
func createOrders(ctx context.Context, c *http.Client, nodes *orderNodes, tokens, profiles []string, total int, limit time.Duration) ([]bench.Sample, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var sent atomic.Int64
	per := make([][]bench.Sample, len(tokens))
	var wg sync.WaitGroup
	start := time.Now()
	for i, tok := range tokens {
		wg.Add(1)
		base := nodes.url(i)
		go func() {
			defer wg.Done()
			for j := 0; ctx.Err() == nil && sent.Add(1) <= int64(total); j++ {
				doc, plan := "AD", "ad-single"
				if j%2 == 1 {
					doc, plan = "CD", "cd-single"
				}
				body := map[string]string{"company_profile_id": profiles[(j/2)%len(profiles)], "document_type": doc, "plan_id": plan}
				t0 := time.Now()
				status, err := bench.Post(ctx, c, base+"/api/v1/documents/orders/", tok, body, nil)
				per[i] = append(per[i], bench.Sample{Kind: "order", Latency: time.Since(t0), Err: err != nil || status >= 300})
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	var all []bench.Sample
	for _, s := range per {
		all = append(all, s...)
	}
	return all, wall
}

// readProfiles reads the orderable profile ids, one a line, that
// "bench queries" wrote.
func readProfiles(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read profiles: %w", err)
	}
	return strings.Fields(string(raw)), nil
}
