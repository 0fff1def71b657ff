package search

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/internal/e2e"
)

// benchResolveRows is how many rows of the embedded sample one run of
// BenchmarkResolveRows resolves.
const benchResolveRows = 2000

// BenchmarkResolveRows measures the rows per second of companydocs
// resolve on the embedded sample: 2,000 rows of its
// real companies as e2e.GermanExcelRows writes them (every third name with a
// typo, the seat, every fourth with its register entry), in process
// (--workers 4) and through the batch endpoint of a server on 127.0.0.1
// (batches of 100, --workers 4, no search budget). Run it with
//
//	go test -run '^$' -bench BenchmarkResolveRows -benchtime 3x -count 5 ./app/e2e/search/
func BenchmarkResolveRows(b *testing.B) {
	sample := e2e.SampleFile(b)
	dir := b.TempDir()
	e2e.MustBuild(b, dir, 0, sample)
	recs := e2e.ReadRecords(b, sample, 1<<20)
	in := filepath.Join(b.TempDir(), "rows.csv")
	e2e.WriteSheet(b, in, ';', true, e2e.GermanExcelRows(recs, benchResolveRows, 17))
	args := func(where ...string) []string {
		return append(append([]string{"resolve", "--query", "Firma", "--city", "Ort", "--register", "Registernummer"}, where...), in)
	}
	b.Run("in-process", func(b *testing.B) {
		benchResolve(b, args("--data-dir", dir))
	})
	b.Run("server", func(b *testing.B) {
		s := e2e.StartServer(b, dir, "--log-level", "warn")
		benchResolve(b, args("--server", s.Base))
	})
}

func benchResolve(b *testing.B, args []string) {
	started := time.Now()
	runs := 0
	for b.Loop() {
		if err := app.RunCommand(context.Background(), args, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
		runs++
	}
	b.ReportMetric(float64(runs*benchResolveRows)/time.Since(started).Seconds(), "rows/s")
}
