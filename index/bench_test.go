package index

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs"
	"companydocs/textfold"
)

// benchRecords is the number of real records the search benchmark indexes
// (COMPANYDOCS_BENCH_RECORDS overrides it).
func benchRecords() int {
	if n, err := strconv.Atoi(os.Getenv("COMPANYDOCS_BENCH_RECORDS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// BenchmarkBuild measures building a generation from 20,000 real records
// (COMPANYDOCS_BENCH_BUILD_RECORDS overrides it).
func BenchmarkBuild(b *testing.B) {
	n := 20_000
	if v, err := strconv.Atoi(os.Getenv("COMPANYDOCS_BENCH_BUILD_RECORDS")); err == nil && v > 0 {
		n = v
	}
	ps := readChunk(b, "ocdata.chunk13.jsonl.bz2", n)
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		dataDir := b.TempDir()
		builder, err := NewBuilder(dataDir, BuilderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, p := range ps {
			if err := builder.Put(p); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := builder.Commit(Meta{}); err != nil {
			b.Fatal(err)
		}
	}
	docs := float64(len(ps) * b.N)
	b.ReportMetric(docs/b.Elapsed().Seconds(), "docs/s")
	// CPU time of the whole process (every goroutine, the garbage collector
	// included) is the figure to compare on a shared machine.
	b.ReportMetric(docs/(cpuTime()-cpu).Seconds(), "docs/cpu-s")
}

// cpuTime returns the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	benchOnce sync.Once
	benchGen  *Generation
	benchPs   []*companydocs.Profile
)

// benchGeneration builds one generation of benchRecords() real records per
// process.
func benchGeneration(b *testing.B) (*Generation, []*companydocs.Profile) {
	benchOnce.Do(func() {
		benchPs = readChunk(b, "ocdata.chunk13.jsonl.bz2", benchRecords())
		// COMPANYDOCS_BENCH_DIR keeps the generation between runs.
		dir := os.Getenv("COMPANYDOCS_BENCH_DIR")
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "index-bench-"); err != nil {
				b.Fatal(err)
			}
			benchDir = dir
		}
		name, err := readCurrent(dir)
		if m, merr := ReadMeta(filepath.Join(indexDir(dir), name)); err != nil || merr != nil || m.Profiles != len(benchPs) || m.Version != IndexVersion {
			mustBuild(b, dir, benchPs)
			name, _ = readCurrent(dir)
		}
		if benchGen, err = Open(filepath.Join(indexDir(dir), name)); err != nil {
			b.Fatal(err)
		}
	})
	if benchGen == nil {
		b.Fatal("benchmark generation not built")
	}
	return benchGen, benchPs
}

var benchDir string

// BenchmarkSearchText runs name queries of real companies against a
// generation of benchRecords() real records, in standard and deep mode.
func BenchmarkSearchText(b *testing.B) {
	g, ps := benchGeneration(b)
	var queries []companydocs.TextQuery
	for i := 0; i < len(ps); i += len(ps) / 200 {
		base, form := nameParts(ps[i].Name)
		queries = append(queries, companydocs.TextQuery{NameTerms: base, LegalFormTerms: form.Words, SeatWords: strings.Fields(textfold.Fold(ps[i].Seat)), Fuzzy: true})
	}
	for _, mode := range []struct {
		name string
		deep bool
	}{{"standard", false}, {"deep", true}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				q := queries[i%len(queries)]
				q.Deep = mode.deep
				if _, err := g.SearchText(b.Context(), q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeProfile compares the value encodings considered for the
// profile store, decoding one profile per value: MessagePack with structs as
// arrays (used), JSON (IndexVersion 4) and gob. It reports the mean value
// size too.
func BenchmarkDecodeProfile(b *testing.B) {
	ps := readChunk(b, "ocdata.chunk13.jsonl.bz2", 1000)
	run := func(name string, encode func(*companydocs.Profile) ([]byte, error), decode func([]byte) error) {
		b.Run(name, func(b *testing.B) {
			var vals [][]byte
			size := 0
			for _, p := range ps {
				v, err := encode(p)
				if err != nil {
					b.Fatal(err)
				}
				vals = append(vals, v)
				size += len(v)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := decode(vals[i%len(vals)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)/float64(len(vals)), "bytes/value")
		})
	}
	// decodeStored reads both formats (MessagePack and the JSON of version 4).
	decodeStored := func(v []byte) error {
		_, err := decodeProfile("dp_bench", v)
		return err
	}
	run("msgpack", encodeProfile, decodeStored)
	run("json", func(p *companydocs.Profile) ([]byte, error) { return json.Marshal(p) }, decodeStored)
	run("gob", func(p *companydocs.Profile) ([]byte, error) {
		var buf bytes.Buffer
		err := gob.NewEncoder(&buf).Encode(p)
		return buf.Bytes(), err
	}, func(v []byte) error {
		var p companydocs.Profile
		return gob.NewDecoder(bytes.NewReader(v)).Decode(&p)
	})
}

// BenchmarkDictFuzzy compares the typo terms of a dictionary walk with
// editAutomaton (dictFuzzy, used) and with scorch's Levenshtein DFA, for
// mistyped real name words at the distances and prefixes searches use.
func BenchmarkDictFuzzy(b *testing.B) {
	g, _ := benchGeneration(b)
	snap := snapshotOf(b, g)
	var typos []string
	for i, term := range spread(dictionaryOf(b, snap, fieldName), 200) {
		typos = append(typos, typosOf(term, i)[1:]...)
	}
	lookup := func(b *testing.B, find func(typo string, distance int, prefix string) int) {
		terms := 0
		for i := 0; i < b.N; i++ {
			typo := typos[i%len(typos)]
			distance, prefix := fuzzyDistance(typo)
			if distance == 0 {
				continue
			}
			terms += find(typo, distance, prefixOf(typo, prefix))
		}
		b.ReportMetric(float64(terms)/float64(b.N), "terms/op")
	}
	b.Run("walk", func(b *testing.B) {
		lookup(b, func(typo string, distance int, prefix string) int {
			found, err := dictFuzzy(snap, fieldName, typo, distance, prefix)
			if err != nil {
				b.Fatal(err)
			}
			return len(found)
		})
	})
	b.Run("scorch", func(b *testing.B) {
		lookup(b, func(typo string, distance int, prefix string) int {
			dict, err := snap.FieldDictFuzzy(fieldName, typo, distance, prefix)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for e, err := dict.Next(); e != nil && err == nil; e, err = dict.Next() {
				n++
			}
			dict.Close()
			return n
		})
	})
}
