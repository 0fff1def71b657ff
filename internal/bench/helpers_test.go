package bench

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"companydocs/internal/realdata"
)

var (
	plainOnce sync.Once
	plainPath string
	plainErr  error
	tempDir   string
)

func TestMain(m *testing.M) {
	var err error
	if tempDir, err = os.MkdirTemp("", "bench-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(tempDir)
	os.Exit(code)
}

// smallChunk is the smallest real chunk (5,727 records), decompressed once
// per test run: bzip2 is slow under the race detector.
func smallChunk(tb testing.TB) string {
	tb.Helper()
	src := realdata.Chunk(tb, "ocdata.chunk53.jsonl.bz2", 0)
	plainOnce.Do(func() {
		rc, err := OpenDump(src)
		if err != nil {
			plainErr = err
			return
		}
		defer rc.Close()
		plainPath = filepath.Join(tempDir, "chunk53.jsonl")
		f, err := os.Create(plainPath)
		if err == nil {
			_, err = io.Copy(f, rc)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		plainErr = err
	})
	if plainErr != nil {
		tb.Fatal(plainErr)
	}
	return plainPath
}

var (
	modelOnce sync.Once
	model     *Model
	modelErr  error
)

// mustModel learns the model from the small real chunk once per test run.
func mustModel(tb testing.TB) *Model {
	tb.Helper()
	chunk := smallChunk(tb)
	modelOnce.Do(func() {
		model, modelErr = LearnModel([]string{chunk}, realdata.Path(tb, "names"), 2)
	})
	if modelErr != nil {
		tb.Fatal(modelErr)
	}
	return model
}

var (
	realOnce sync.Once
	realRecs []*Record
	realErr  error
)

// realRecords reads every record of the small real chunk once.
func realRecords(tb testing.TB) []*Record {
	tb.Helper()
	chunk := smallChunk(tb)
	realOnce.Do(func() {
		realErr = ScanRecords([]string{chunk}, 1, func(_ int, r *Record) { realRecs = append(realRecs, r) })
	})
	if realErr != nil {
		tb.Fatal(realErr)
	}
	return realRecs
}
