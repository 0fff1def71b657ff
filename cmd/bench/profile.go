package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"companydocs/index"
	"companydocs/internal/bench"
	"companydocs/resolver"
)

// runProfile resolves the query set in process (no HTTP) under the CPU
// profiler, then writes the allocation profile: the search path's hot
// spots without the client and the network in the picture.
func runProfile(ctx context.Context, args []string) error {
	fs := newFlags("profile")
	dataDir := fs.String("data-dir", "", "data directory with a published generation")
	queriesPath := fs.String("queries", "queries.jsonl", "query set")
	cpuOut := fs.String("cpu", "cpu.pprof", "CPU profile output")
	memOut := fs.String("mem", "allocs.pprof", "allocation profile output")
	requests := fs.Int("requests", 4000, "queries to resolve")
	clients := fs.Int("clients", 4, "concurrent resolvers")
	kinds := fs.String("kinds", "", "comma-separated query kinds to resolve (default all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	qs, err := readQueries(*queriesPath)
	if err != nil {
		return err
	}
	if *kinds != "" {
		if qs = filterKinds(qs, strings.Split(*kinds, ",")...); len(qs) == 0 {
			return fmt.Errorf("no query of the kinds %s in %s", *kinds, *queriesPath)
		}
	}
	live, err := openQuiet(*dataDir)
	if err != nil {
		return err
	}
	defer live.Close()
	search := resolveInProcess(live)
	bench.Run(ctx, qs, search, bench.LoadOptions{Clients: *clients, Requests: len(qs), Duration: 10 * time.Minute}) // warm-up
	cpu, err := os.Create(*cpuOut)
	if err != nil {
		return err
	}
	defer cpu.Close()
	runtime.GC()
	if err := pprof.StartCPUProfile(cpu); err != nil {
		return err
	}
	before := takeCost()
	samples, wall := bench.Run(ctx, qs, search, bench.LoadOptions{Clients: *clients, Requests: *requests, Duration: 10 * time.Minute, Seed: 9})
	spent := takeCost().since(before)
	pprof.StopCPUProfile()
	if err := writeAllocs(*memOut); err != nil {
		return err
	}
	l := bench.Summarise(samples, wall)
	fmt.Printf("in process, %d clients: %d queries, p50 %s ms, p99 %s ms, %.0f queries/s, %d errors, top-1 %.3f\n",
		*clients, l.N, ms(l.P50), ms(l.P99), l.PerSec, l.Errors, l.Top1Accuracy())
	n := float64(max(l.N, 1))
	fmt.Printf("per query: %.3f CPU-ms (user+system of the process, %.2f CPU-s in all), %.0f allocations, %.0f KiB allocated\n",
		spent.cpu.Seconds()*1000/n, spent.cpu.Seconds(), float64(spent.mallocs)/n, float64(spent.bytes)/1024/n)
	return nil
}

// resolveInProcess is a bench.Searcher that calls the resolver on the
// live generation directly, as the server's handler does, so that the
// profile holds the search path and nothing of HTTP.
func resolveInProcess(live *index.Live) bench.Searcher {
	return func(ctx context.Context, q bench.Query) ([]string, error) {
		gen, release := live.Acquire()
		defer release()
		res, err := resolver.Resolve(ctx, gen, resolver.Request{Query: q.Query, Mode: q.Mode, Discover: q.Discover})
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(res.Candidates))
		for i, c := range res.Candidates {
			ids[i] = c.ProfileID
		}
		return ids, nil
	}
}

// writeAllocs writes the allocation profile (every allocation since the
// process started, warm-up included) to path.
func writeAllocs(path string) error {
	mem, err := os.Create(path)
	if err != nil {
		return err
	}
	defer mem.Close()
	return pprof.Lookup("allocs").WriteTo(mem, 0)
}

// A cost is the process's CPU time and heap allocations so far.
type cost struct {
	cpu     time.Duration
	mallocs uint64
	bytes   uint64
}

func takeCost() cost {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return cost{
		cpu:     time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		mallocs: ms.Mallocs,
		bytes:   ms.TotalAlloc,
	}
}

func (c cost) since(before cost) cost {
	return cost{cpu: c.cpu - before.cpu, mallocs: c.mallocs - before.mallocs, bytes: c.bytes - before.bytes}
}
