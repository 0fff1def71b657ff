package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"

	"companydocs"
	"companydocs/index"
	"companydocs/internal/bench"
	"companydocs/register"
	"companydocs/resolver"
)

// runCosts is the cost account of one search per query kind: each kind's
// queries resolved one at a time in process (no HTTP, one client), with
// the index searches counted, the process's CPU time and allocations per
// query, and the CPU time split into the stages of a search by a CPU
// profile of the kind (stageOf). The JSON answer is encoded as the
// server would, and counted.
func runCosts(ctx context.Context, args []string) error {
	fs := newFlags("costs")
	dataDir := fs.String("data-dir", "", "data directory with a published generation")
	queriesPath := fs.String("queries", "queries.jsonl", "query set")
	rounds := fs.Int("rounds", 2, "times each kind's queries are resolved (after one round of warm-up)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	qs, err := readQueries(*queriesPath)
	if err != nil {
		return err
	}
	live, err := openQuiet(*dataDir)
	if err != nil {
		return err
	}
	defer live.Close()
	fmt.Println("| kind | queries | index searches | CPU-ms | allocations | KiB allocated | " + strings.Join(stageNames, " | ") + " |")
	fmt.Println("|---|---:|---:|---:|---:|---:|" + strings.Repeat("---:|", len(stageNames)))
	var all kindCost
	for _, kind := range kindsOf(qs) {
		c, err := costOf(ctx, live, filterKinds(qs, kind), *rounds)
		if err != nil {
			return err
		}
		fmt.Println(c.row(kind))
		all.add(c)
	}
	fmt.Println(all.row("**all**"))
	return nil
}

// A kindCost is what the queries of a kind cost.
type kindCost struct {
	queries  int
	searches int64
	spent    cost
	stages   map[string]time.Duration
}

func (c *kindCost) add(o kindCost) {
	c.queries += o.queries
	c.searches += o.searches
	c.spent.cpu += o.spent.cpu
	c.spent.mallocs += o.spent.mallocs
	c.spent.bytes += o.spent.bytes
	if c.stages == nil {
		c.stages = map[string]time.Duration{}
	}
	for k, v := range o.stages {
		c.stages[k] += v
	}
}

// row is the kind's Markdown row: per query, and the stages in per cent
// of the profiled CPU time.
func (c kindCost) row(kind string) string {
	n := float64(max(c.queries, 1))
	var total time.Duration
	for _, d := range c.stages {
		total += d
	}
	cells := []string{kind, fmt.Sprint(c.queries), fmt.Sprintf("%.2f", float64(c.searches)/n),
		fmt.Sprintf("%.3f", c.spent.cpu.Seconds()*1000/n), fmt.Sprintf("%.0f", float64(c.spent.mallocs)/n),
		fmt.Sprintf("%.0f", float64(c.spent.bytes)/1024/n)}
	for _, s := range stageNames {
		cells = append(cells, fmt.Sprintf("%.0f%%", 100*c.stages[s].Seconds()/max(total.Seconds(), 1e-9)))
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

func costOf(ctx context.Context, live *index.Live, qs []bench.Query, rounds int) (kindCost, error) {
	var searches atomic.Int64
	resolve := func() error {
		for _, q := range qs {
			gen, release := live.Acquire()
			res, err := resolver.Resolve(ctx, countingIndex{gen, &searches}, resolver.Request{Query: q.Query, Mode: q.Mode, Discover: q.Discover})
			release()
			if companydocs.ErrorCode(err) == companydocs.EINVALIDQUERY {
				continue // refused, as the server would: its cost counts
			} else if err != nil {
				return err
			}
			if _, err := json.Marshal(res); err != nil {
				return err
			}
		}
		return nil
	}
	if err := resolve(); err != nil { // warm-up
		return kindCost{}, err
	}
	searches.Store(0)
	var prof bytes.Buffer
	runtime.GC()
	if err := pprof.StartCPUProfile(&prof); err != nil {
		return kindCost{}, err
	}
	before := takeCost()
	for range rounds {
		if err := resolve(); err != nil {
			pprof.StopCPUProfile()
			return kindCost{}, err
		}
	}
	spent := takeCost().since(before)
	pprof.StopCPUProfile()
	stages, err := stagesOf(&prof)
	if err != nil {
		return kindCost{}, err
	}
	return kindCost{queries: len(qs) * rounds, searches: searches.Load(), spent: spent, stages: stages}, nil
}

// countingIndex counts the index searches of a resolution.
type countingIndex struct {
	resolver.Index
	n *atomic.Int64
}

func (c countingIndex) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	c.n.Add(1)
	return c.Index.ByNumber(t, number)
}

func (c countingIndex) ByLEI(lei register.LEI) ([]*companydocs.Profile, error) {
	c.n.Add(1)
	return c.Index.ByLEI(lei)
}

func (c countingIndex) SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error) {
	c.n.Add(1)
	return c.Index.SearchText(ctx, q)
}

// The stages of a search, each the functions whose time is its own: a
// sample of the CPU profile belongs to the stage of the innermost of
// these functions on its stack. "other" is the rest of the resolution
// (validation, ranking, candidates) and the collector's background work.
var (
	stageNames = []string{"parse", "fuzzy", "term stats", "postings", "load", "score", "reasons", "json", "gc", "other"}
	stageFuncs = []struct{ stage, fn string }{
		{"parse", "companydocs/resolver.parseQuery"},
		{"parse", "companydocs/resolver.splitBlock"},
		{"fuzzy", "companydocs/index.(*termStats).fuzzyTerms"},
		{"term stats", "companydocs/index.buildQuery"},
		{"postings", "companydocs/index.(*Generation).topHits"},
		{"load", "companydocs/index.profileIn"},
		{"load", "companydocs/index.(*Generation).profilesOf"},
		{"load", "companydocs/index.(*Generation).ByNumber"},
		{"load", "companydocs/index.(*Generation).ByLEI"},
		{"score", "companydocs/resolver.scoreText"},
		{"score", "companydocs/resolver.scoreRegister"},
		{"score", "companydocs/resolver.rank"},
		{"reasons", "companydocs/resolver.candidates"},
		{"reasons", "companydocs/resolver.understand"},
		{"json", "encoding/json.Marshal"},
		{"gc", "runtime.gcBgMarkWorker"},
		{"gc", "runtime.gcAssistAlloc"},
		{"gc", "runtime.bgsweep"},
	}
)

// stagesOf splits the CPU time of a profile by stage.
func stagesOf(r io.Reader) (map[string]time.Duration, error) {
	p, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("parse CPU profile: %w", err)
	}
	cpu := slices.IndexFunc(p.SampleType, func(t *profile.ValueType) bool { return t.Type == "cpu" })
	if cpu < 0 {
		return nil, fmt.Errorf("the profile has no CPU samples")
	}
	out := map[string]time.Duration{}
	for _, s := range p.Sample {
		out[stageOf(s)] += time.Duration(s.Value[cpu])
	}
	return out, nil
}

// stageOf is the stage of the innermost stage function on the sample's
// stack (leaf first).
func stageOf(s *profile.Sample) string {
	for _, loc := range s.Location {
		for _, line := range loc.Line {
			for _, f := range stageFuncs {
				if line.Function != nil && line.Function.Name == f.fn {
					return f.stage
				}
			}
		}
	}
	return "other"
}
