package index

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
)

// BenchmarkSearchGenerations compares the search of the generations that
// CURRENT names in the data directories COMPANYDOCS_BENCH_DATA_DIRS lists
// (comma-separated): an incremental build's two segments against a full
// build's one (scripts/bench.sh incremental). The queries are the names,
// seats and officers of every 2,000th profile of the first, with a typo
// in every other, in standard and deep mode, the same on each.
func BenchmarkSearchGenerations(b *testing.B) {
	dirs := strings.Split(os.Getenv("COMPANYDOCS_BENCH_DATA_DIRS"), ",")
	if len(dirs) < 2 {
		b.Skip("COMPANYDOCS_BENCH_DATA_DIRS names no data directories")
	}
	gens := make([]*Generation, len(dirs))
	for i, dir := range dirs {
		name, err := readCurrent(dir)
		if err != nil {
			b.Fatal(err)
		}
		if gens[i], err = Open(filepath.Join(indexDir(dir), name)); err != nil {
			b.Fatal(err)
		}
		defer gens[i].Close()
		if err := gens[i].readIDRanks(); err != nil {
			b.Fatal(err)
		}
	}
	queries := benchQueries(b, gens[0], 2000)
	for i, g := range gens {
		b.Run(filepath.Base(dirs[i]), func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				q := queries[n%len(queries)]
				if _, err := g.SearchText(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchQueries returns the queries about every step-th profile of g.
func benchQueries(b *testing.B, g *Generation, step int) []companydocs.TextQuery {
	var out []companydocs.TextQuery
	err := g.store.view(func(t storeTx) error {
		c := t.cursor()
		i := 0
		for k, v := c.first(); k != nil; k, v = c.next() {
			if i++; i%step != 0 {
				continue
			}
			p, err := decodeProfile(string(k), v)
			if err != nil {
				return err
			}
			for j, q := range profileQueries(p) {
				q.Deep, q.Limit = j%2 == 1, 30
				out = append(out, q)
			}
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		b.Fatalf("%d queries: %v", len(out), err)
	}
	return out
}
