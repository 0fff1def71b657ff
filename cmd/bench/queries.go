package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"

	"companydocs/internal/bench"
)

func runQueries(_ context.Context, args []string) error {
	fs := newFlags("queries")
	var gleif stringsFlag
	out := fs.String("o", "queries.jsonl", "query set output (JSONL)")
	profiles := fs.String("profiles", "", "write ids of orderable profiles here, one a line")
	perKind := fs.Int("per-kind", 300, "queries per kind")
	orderable := fs.Int("orderable", 2000, "orderable profile ids to collect")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.Var(&gleif, "gleif", "GLEIF file the index was built with (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	set, err := bench.BuildQuerySet(fs.Args(), bench.QueryOptions{Seed: *seed, PerKind: *perKind, Workers: runtime.GOMAXPROCS(0), GLEIF: gleif, Orderable: *orderable})
	if err != nil {
		return err
	}
	if err := writeLines(*out, set.Queries); err != nil {
		return err
	}
	if *profiles != "" {
		if err := os.WriteFile(*profiles, []byte(strings.Join(set.Orderable, "\n")+"\n"), 0o644); err != nil {
			return fmt.Errorf("write profiles: %w", err)
		}
	}
	counts := map[string]int{}
	for _, q := range set.Queries {
		counts[q.Kind]++
	}
	fmt.Printf("%d records read; %d queries %v; %d orderable profiles\n", set.Records, len(set.Queries), counts, len(set.Orderable))
	return nil
}

func writeLines(path string, qs []bench.Query) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create query set: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, q := range qs {
		if err := enc.Encode(q); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
