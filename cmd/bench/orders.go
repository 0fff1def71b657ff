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

	"companydocs/bench"
)

type ordersResult struct {
	Machine machine         `json:"machine"`
	Command string          `json:"command"`
	Clients int             `json:"clients"`
	Runs    []bench.Latency `json:"runs"`
	Median  bench.Latency   `json:"median"`
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
	keys, err := createAccounts(*bin, *dataDir, *clients**runs)
	if err != nil {
		return err
	}
	srv, err := bench.StartServer(ctx, *bin, *dataDir, "--session-rate", "0") // every account logs in from 127.0.0.1
	if err != nil {
		return err
	}
	defer srv.Stop()
	res := ordersResult{Machine: describeMachine(), Clients: *clients, Command: "bench orders " + strings.Join(args, " ")}
	client := bench.NewClient(*clients)
	for r := range *runs {
		tokens, err := login(ctx, client, srv.URL, keys[r**clients:(r+1)**clients])
		if err != nil {
			return err
		}
		samples, wall := createOrders(ctx, client, srv.URL, tokens, profiles, *requests, *duration)
		res.Runs = append(res.Runs, bench.Summarise(samples, wall))
	}
	res.Median = medianLatency(res.Runs)
	printMachine(res.Machine)
	m := res.Median
	fmt.Printf("Order creation, %d clients, medians of %d runs:\n\n", *clients, *runs)
	fmt.Println("| creates | p50 ms | p95 ms | p99 ms | max ms | creates/s | errors |\n|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Printf("| %d | %s | %s | %s | %s | %.0f | %d |\n", m.N, ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), m.PerSec, m.Errors)
	return writeJSON(*jsonOut, res)
}

// createAccounts creates n accounts with the CLI (the server must not
// run) and returns their API keys.
func createAccounts(bin, dataDir string, n int) ([]string, error) {
	keys := make([]string, n)
	stamp := time.Now().UTC().Format("20060102T150405")
	for i := range keys {
		out, err := exec.Command(bin, "accounts", "create", "--data-dir", dataDir, "--name", fmt.Sprintf("bench-%s-%d", stamp, i), "--credits", "1000000", "--json").Output()
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

func login(ctx context.Context, c *http.Client, base string, keys []string) ([]string, error) {
	tokens := make([]string, len(keys))
	for i, k := range keys {
		var s struct {
			Token string `json:"token"`
		}
		status, err := bench.Post(ctx, c, base+"/api/v1/auth/sessions/", "", map[string]string{"api_key": k}, &s)
		if err != nil || status >= 300 || s.Token == "" {
			return nil, fmt.Errorf("log in: status %d: %v", status, err)
		}
		tokens[i] = s.Token
	}
	return tokens, nil
}

// createOrders sends up to total creates; client i uses token i and
// orders AD and CD for its next profile, so no order repeats.
func createOrders(ctx context.Context, c *http.Client, base string, tokens, profiles []string, total int, limit time.Duration) ([]bench.Sample, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var sent atomic.Int64
	per := make([][]bench.Sample, len(tokens))
	var wg sync.WaitGroup
	start := time.Now()
	for i, tok := range tokens {
		wg.Add(1)
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
