package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"companydocs/internal/bench"
)

// loadSettings bounds the runs of one measurement.
type loadSettings struct {
	runs     int
	requests int
	duration time.Duration
}

// levelResult is the result of one concurrency level: each run, the
// field-wise median of the runs, and per-kind figures over all runs.
type levelResult struct {
	Clients int                      `json:"clients"`
	Runs    []bench.Latency          `json:"runs"`
	Median  bench.Latency            `json:"median"`
	PerKind map[string]bench.Latency `json:"per_kind"`
}

type searchResult struct {
	Machine    machine       `json:"machine"`
	Command    string        `json:"command"`
	Queries    int           `json:"queries"`
	Mixed      []levelResult `json:"mixed"`
	Alone      []levelResult `json:"alone"` // one kind at a time
	RSSWarm    int64         `json:"rss_after_warmup_bytes"`
	RSSEnd     int64         `json:"rss_end_bytes"`
	PeakServer int64         `json:"peak_rss_bytes"`
}

// medianLatency takes the median of each field over the runs.
func medianLatency(runs []bench.Latency) bench.Latency {
	d := func(f func(bench.Latency) time.Duration) time.Duration {
		return time.Duration(bench.MedianOf(runs, func(l bench.Latency) float64 { return float64(f(l)) }))
	}
	m := bench.Latency{
		P50: d(func(l bench.Latency) time.Duration { return l.P50 }), P95: d(func(l bench.Latency) time.Duration { return l.P95 }),
		P99: d(func(l bench.Latency) time.Duration { return l.P99 }), Max: d(func(l bench.Latency) time.Duration { return l.Max }),
		PerSec: bench.MedianOf(runs, func(l bench.Latency) float64 { return l.PerSec }),
	}
	for _, r := range runs {
		m.N += r.N
		m.Errors += r.Errors
		m.Labelled += r.Labelled
		m.Top1 += r.Top1
	}
	return m
}

// measureLevel runs the queries s.runs times at one concurrency.
func measureLevel(ctx context.Context, qs []bench.Query, search bench.Searcher, clients int, s loadSettings) levelResult {
	res := levelResult{Clients: clients, PerKind: map[string]bench.Latency{}}
	var all []bench.Sample
	for r := range s.runs {
		samples, wall := bench.Run(ctx, qs, search, bench.LoadOptions{Clients: clients, Requests: s.requests, Duration: s.duration, Seed: uint64(r + 1)})
		res.Runs = append(res.Runs, bench.Summarise(samples, wall))
		all = append(all, samples...)
	}
	res.Median = medianLatency(res.Runs)
	for kind, ks := range bench.ByKind(all) {
		res.PerKind[kind] = bench.Summarise(ks, 0)
	}
	return res
}

func runSearch(ctx context.Context, args []string) error {
	fs := newFlags("search")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory with a published generation")
	queriesPath := fs.String("queries", "queries.jsonl", "query set")
	clients := listFlag{1, 4, 16}
	fs.Var(&clients, "clients", "concurrency levels of the mixed workload")
	kindClients := fs.Int("kind-clients", 4, "concurrency of the per-kind runs")
	runs := fs.Int("runs", 3, "runs per measurement (medians are reported)")
	requests := fs.Int("requests", 3000, "requests per mixed run")
	kindRequests := fs.Int("kind-requests", 600, "requests per per-kind run")
	duration := fs.Duration("duration", 60*time.Second, "longest run")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	all, err := readQueries(*queriesPath)
	if err != nil {
		return err
	}
	qs := withoutKinds(all, bench.ClueKinds...)
	srv, err := bench.StartServer(ctx, *bin, *dataDir)
	if err != nil {
		return err
	}
	defer srv.Stop()
	res := searchResult{Machine: describeMachine(), Queries: len(qs), Command: "bench search " + strings.Join(args, " ")}
	search := bench.HTTPSearcher(srv.URL, bench.NewClient(max(16, slices.Max(clients))))
	bench.Run(ctx, qs, search, bench.LoadOptions{Clients: 4, Requests: len(qs), Duration: 10 * time.Minute}) // warm-up
	if m, err := srv.Memory(); err == nil {
		res.RSSWarm = m.RSS
	}
	mixed := loadSettings{*runs, *requests, *duration}
	for _, c := range clients {
		res.Mixed = append(res.Mixed, measureLevel(ctx, qs, search, c, mixed))
	}
	alone := loadSettings{*runs, *kindRequests, *duration}
	for _, k := range kindsOf(all) {
		lr := measureLevel(ctx, filterKinds(all, k), search, *kindClients, alone)
		res.Alone = append(res.Alone, lr)
	}
	if m, err := srv.Memory(); err == nil {
		res.RSSEnd, res.PeakServer = m.RSS, m.Peak
	}
	printSearch(res, kindsOf(all))
	return writeJSON(*jsonOut, res)
}

func printSearch(res searchResult, kinds []string) {
	printMachine(res.Machine)
	fmt.Printf("Mixed workload (%d queries; the clue kinds %s only alone), medians of %d runs:\n\n",
		res.Queries, strings.Join(bench.ClueKinds, ", "), len(res.Mixed[0].Runs))
	fmt.Println("| clients | requests | p50 ms | p95 ms | p99 ms | max ms | req/s | errors | top-1 |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, l := range res.Mixed {
		m := l.Median
		fmt.Printf("| %d | %d | %s | %s | %s | %s | %.0f | %d | %.3f |\n", l.Clients, m.N, ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), m.PerSec, m.Errors, m.Top1Accuracy())
	}
	fmt.Printf("\nEach kind alone, %d clients:\n\n", res.Alone[0].Clients)
	fmt.Println("| kind | requests | p50 ms | p95 ms | p99 ms | max ms | req/s | errors | top-1 |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for i, l := range res.Alone {
		m := l.Median
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %.0f | %d | %.3f |\n", kinds[i], m.N, ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), m.PerSec, m.Errors, m.Top1Accuracy())
	}
	fmt.Printf("\nServer RSS after warm-up %s, at the end %s, peak %s\n", bench.MiB(res.RSSWarm), bench.MiB(res.RSSEnd), bench.MiB(res.PeakServer))
}
