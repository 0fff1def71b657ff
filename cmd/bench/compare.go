package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"companydocs/internal/bench"
)

// compareSide is one of the two servers compared: its samples per kind,
// kept per round so that the rounds can be resampled.
type compareSide struct {
	srv    *bench.Server
	search bench.Searcher
	rounds map[string][][]bench.Sample
}

// kindComparison is the comparison of one query kind's rounds.
type kindComparison struct {
	Kind string `json:"kind"`
	bench.Comparison
}

type compareResult struct {
	Machine machine          `json:"machine"`
	Command string           `json:"command"`
	Kinds   []kindComparison `json:"kinds"`
}

// runCompare measures two builds side by side: both servers run at once,
// and every round runs each kind's load on both, the one first in odd
// rounds the other first in even ones, so that whatever else the machine
// does in a round falls on both. Percentiles are taken over all rounds'
// samples of a side; a round is the unit resampled for the ratio's
// interval, since requests of one round share its conditions.
func runCompare(ctx context.Context, args []string) error {
	fs := newFlags("compare")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary measured (after)")
	dataDir := fs.String("data-dir", "", "its data directory")
	baseBin := fs.String("base-bin", "", "companydocs binary compared against (before)")
	baseDataDir := fs.String("base-data-dir", "", "its data directory")
	queriesPath := fs.String("queries", "queries.jsonl", "query set")
	kinds := fs.String("kinds", "", "comma-separated kinds (default: every kind of the set, and the mixed load)")
	clients := fs.Int("clients", 4, "concurrent clients of each run")
	requests := fs.Int("requests", 1000, "requests per run")
	rounds := fs.Int("rounds", 8, "rounds")
	duration := fs.Duration("duration", 60*time.Second, "longest run")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" || *baseBin == "" || *baseDataDir == "" {
		return fmt.Errorf("compare needs -data-dir, -base-bin and -base-data-dir")
	}
	all, err := readQueries(*queriesPath)
	if err != nil {
		return err
	}
	sets, err := compareSets(all, *kinds)
	if err != nil {
		return err
	}
	base, err := startSide(ctx, "before", *baseBin, *baseDataDir, *clients)
	if err != nil {
		return err
	}
	defer base.srv.Stop()
	after, err := startSide(ctx, "after", *bin, *dataDir, *clients)
	if err != nil {
		return err
	}
	defer after.srv.Stop()
	if err := measureRounds(ctx, all, sets, base, after, *rounds, bench.LoadOptions{Clients: *clients, Requests: *requests, Duration: *duration}); err != nil {
		return err
	}
	res := compareResult{Machine: describeMachine(), Command: "bench compare " + strings.Join(args, " ")}
	for _, set := range sets {
		res.Kinds = append(res.Kinds, kindComparison{set.kind, bench.CompareRounds(base.rounds[set.kind], after.rounds[set.kind])})
	}
	printCompare(res, *clients, *requests, *rounds)
	return writeJSON(*jsonOut, res)
}

// measureRounds warms both servers up with every query (all), then runs each
// set's load on both in every round, base first in even rounds.
func measureRounds(ctx context.Context, all []bench.Query, sets []querySet, base, after *compareSide, rounds int, load bench.LoadOptions) error {
	for _, s := range []*compareSide{base, after} {
		bench.Run(ctx, all, s.search, bench.LoadOptions{Clients: load.Clients, Requests: len(all), Duration: 10 * time.Minute})
	}
	for r := range rounds {
		sides := []*compareSide{base, after}
		if r%2 == 1 {
			sides[0], sides[1] = after, base
		}
		load.Seed = uint64(r + 1)
		for _, set := range sets {
			for _, s := range sides {
				samples, _ := bench.Run(ctx, set.queries, s.search, load)
				s.rounds[set.kind] = append(s.rounds[set.kind], samples)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

type querySet struct {
	kind    string
	queries []bench.Query
}

// compareSets are the loads compared: the mixed load (every kind but the
// clue kinds, as bench search's) and each kind alone, or the kinds named
// (comma-separated, "mixed" among them).
func compareSets(all []bench.Query, kinds string) ([]querySet, error) {
	names := append([]string{"mixed"}, kindsOf(all)...)
	if kinds != "" {
		names = strings.Split(kinds, ",")
	}
	var sets []querySet
	for _, k := range names {
		qs := filterKinds(all, k)
		if k == "mixed" {
			qs = withoutKinds(all, bench.ClueKinds...)
		}
		if len(qs) == 0 {
			return nil, fmt.Errorf("the query set has no query of kind %q", k)
		}
		sets = append(sets, querySet{k, qs})
	}
	return sets, nil
}

func startSide(ctx context.Context, name, bin, dataDir string, clients int) (*compareSide, error) {
	srv, err := bench.StartServer(ctx, bin, dataDir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &compareSide{srv: srv, search: bench.HTTPSearcher(srv.URL, bench.NewClient(clients)), rounds: map[string][][]bench.Sample{}}, nil
}

func printCompare(res compareResult, clients, requests, rounds int) {
	printMachine(res.Machine)
	fmt.Printf("Both servers at once, %d rounds of %d requests a kind and side from %d clients, the sides' order alternating; percentiles over every round's samples, the p99 ratio's 95%% interval from resampling the rounds:\n\n", rounds, requests, clients)
	fmt.Println("| kind | p50 ms before / after | p99 ms before / after | p99 ratio | 95% interval | rounds lower after | top-1 before / after |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, k := range res.Kinds {
		b, a := k.Before, k.After
		fmt.Printf("| %s | %s / %s | %s / %s | %.2f | %.2f to %.2f | %d of %d | %.3f / %.3f |\n", k.Kind, ms(b.P50), ms(a.P50), ms(b.P99), ms(a.P99),
			k.Ratio, k.Low, k.High, k.RoundsLower, k.Rounds, b.Top1Accuracy(), a.Top1Accuracy())
	}
}
