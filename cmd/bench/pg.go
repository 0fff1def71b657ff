package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"companydocs/internal/bench"
	"companydocs/internal/pgcluster"
)

type pgResult struct {
	Machine     machine       `json:"machine"`
	Command     string        `json:"command"`
	Threshold   float64       `json:"similarity_threshold"`
	Load        bench.PGLoad  `json:"load"`
	Queries     int           `json:"queries"`
	CompanyDocs []levelResult `json:"companydocs"`
	Postgres    []levelResult `json:"postgres"`
}

func runPG(ctx context.Context, args []string) error {
	fs := newFlags("pg")
	bin := fs.String("bin", "bin/companydocs", "companydocs binary")
	dataDir := fs.String("data-dir", "", "data directory with a generation built from the same corpus")
	queriesPath := fs.String("queries", "queries.jsonl", "query set (its name kinds are used)")
	clients := listFlag{1, 4, 16}
	fs.Var(&clients, "clients", "concurrency levels")
	runs := fs.Int("runs", 3, "runs per measurement (medians are reported)")
	requests := fs.Int("requests", 1200, "requests per run")
	duration := fs.Duration("duration", 60*time.Second, "longest run")
	threshold := fs.Float64("threshold", 0.3, "pg_trgm.similarity_threshold")
	jsonOut := fs.String("json", "", "write the result as JSON here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	all, err := readQueries(*queriesPath)
	if err != nil {
		return err
	}
	qs := filterKinds(all, bench.NameKinds...)
	res := pgResult{Machine: describeMachine(), Threshold: *threshold, Queries: len(qs), Command: "bench pg " + strings.Join(args, " ")}
	pg, err := bench.StartPG(ctx)
	if err != nil {
		return err
	}
	defer pg.Close()
	if res.Load, err = loadPG(ctx, pg, fs.Args()); err != nil {
		return err
	}
	pgSearch, closeConns, err := bench.PGSearcher(ctx, pg, slices.Max(clients), *threshold)
	if err != nil {
		return err
	}
	defer closeConns()
	srv, err := bench.StartServer(ctx, *bin, *dataDir)
	if err != nil {
		return err
	}
	defer srv.Stop()
	cdSearch := bench.HTTPSearcher(srv.URL, bench.NewClient(slices.Max(clients)))
	for _, s := range []bench.Searcher{cdSearch, pgSearch} { // warm-up
		bench.Run(ctx, qs, s, bench.LoadOptions{Clients: 4, Requests: len(qs), Duration: 10 * time.Minute})
	}
	settings := loadSettings{*runs, *requests, *duration}
	for _, c := range clients {
		res.CompanyDocs = append(res.CompanyDocs, measureLevel(ctx, qs, cdSearch, c, settings))
		res.Postgres = append(res.Postgres, measureLevel(ctx, qs, pgSearch, c, settings))
	}
	printPG(res)
	return writeJSON(*jsonOut, res)
}

func loadPG(ctx context.Context, pg *pgcluster.Cluster, corpus []string) (bench.PGLoad, error) {
	conn, err := pg.Connect(ctx)
	if err != nil {
		return bench.PGLoad{}, fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	return bench.LoadCorpus(ctx, conn, corpus, runtime.GOMAXPROCS(0))
}

func printPG(res pgResult) {
	printMachine(res.Machine)
	l := res.Load
	fmt.Printf("PostgreSQL: %d rows copied in %s, GIN pg_trgm index built in %s; table %s, index %s; similarity_threshold %.2f\n\n",
		l.Rows, l.Load.Round(time.Second), l.Index.Round(time.Second), bench.MiB(l.TableBytes), bench.MiB(l.IndexBytes), res.Threshold)
	fmt.Printf("Name queries (%d: %s), medians of %d runs:\n\n", res.Queries, strings.Join(bench.NameKinds, ", "), len(res.Postgres[0].Runs))
	fmt.Println("| clients | system | p50 ms | p95 ms | p99 ms | max ms | req/s | errors | top-1 |")
	fmt.Println("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
	for i := range res.Postgres {
		for _, row := range []struct {
			name string
			l    levelResult
		}{{"companydocs", res.CompanyDocs[i]}, {"pg_trgm", res.Postgres[i]}} {
			m := row.l.Median
			fmt.Printf("| %d | %s | %s | %s | %s | %s | %.0f | %d | %.3f |\n", row.l.Clients, row.name, ms(m.P50), ms(m.P95), ms(m.P99), ms(m.Max), m.PerSec, m.Errors, m.Top1Accuracy())
		}
		cd, pgm := res.CompanyDocs[i].Median, res.Postgres[i].Median
		fmt.Printf("| %d | ratio pg/cd | %.1fx | %.1fx | %.1fx | | | | |\n", res.Postgres[i].Clients, ratio(pgm.P50, cd.P50), ratio(pgm.P95, cd.P95), ratio(pgm.P99, cd.P99))
	}
	fmt.Println("\nTop-1 accuracy per kind (all runs, all levels):")
	fmt.Println("\n| kind | companydocs | pg_trgm |\n|---|---:|---:|")
	for _, k := range bench.NameKinds {
		fmt.Printf("| %s | %.3f | %.3f |\n", k, top1(res.CompanyDocs, k), top1(res.Postgres, k))
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func top1(levels []levelResult, kind string) float64 {
	var hit, n int
	for _, l := range levels {
		hit += l.PerKind[kind].Top1
		n += l.PerKind[kind].Labelled
	}
	if n == 0 {
		return 0
	}
	return float64(hit) / float64(n)
}
