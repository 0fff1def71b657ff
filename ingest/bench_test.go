package ingest

import (
	"bufio"
	"compress/bzip2"
	"context"
	"os"
	"testing"

	"companydocs"
	"companydocs/register"

	"companydocs/internal/realdata"
)

// benchmarkPrefix is how many lines of a real chunk the benchmarks decode.
const benchmarkPrefix = 20000

// readChunkPrefix returns the first n decompressed lines of a real chunk.
func readChunkPrefix(b *testing.B, n int) [][]byte {
	b.Helper()
	f, err := os.Open(realdata.Chunk(b, "ocdata.chunk1.jsonl.bz2", n))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(bzip2.NewReader(f))
	sc.Buffer(make([]byte, 1<<20), DefaultMaxLineBytes)
	var lines [][]byte
	for len(lines) < n && sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// BenchmarkReadOffeneRegister measures decode + convert of real dump lines
// (no decompression, no sink); it reports records/s.
func BenchmarkReadOffeneRegister(b *testing.B) {
	lines := readChunkPrefix(b, benchmarkPrefix)
	var bytes int64
	for _, l := range lines {
		bytes += int64(len(l)) + 1
	}
	b.SetBytes(bytes / int64(len(lines)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeOffeneRegisterLine(lines[i%len(lines)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// nullSink accepts everything and stores nothing.
type nullSink struct{}

func (nullSink) Get(string) (*companydocs.Profile, error) { return nil, nil }
func (nullSink) Put(*companydocs.Profile) error           { return nil }
func (nullSink) ByNumber(register.Type, string) ([]*companydocs.Profile, error) {
	return nil, nil
}

// BenchmarkRunChunk measures the whole pipeline over a real bz2 chunk
// (decompression included) into a sink that stores nothing.
func BenchmarkRunChunk(b *testing.B) {
	path := realdata.Chunk(b, "ocdata.chunk53.jsonl.bz2", 0)
	for i := 0; i < b.N; i++ {
		sum, err := Run(context.Background(), []Input{{Path: path}}, nullSink{}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(sum.Registry.Read)/sum.Elapsed.Seconds(), "records/s")
	}
}
