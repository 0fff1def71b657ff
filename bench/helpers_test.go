package bench

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// sharedData finds shared/data by walking up from the package directory.
func sharedData(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		tb.Fatal(err)
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "data"), filepath.Join(dir, "..", "shared", "data")} {
			if st, err := os.Stat(filepath.Join(cand, "offeneregister")); err == nil && st.IsDir() {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("shared/data not found above the package: the real data is needed for this test")
		}
		dir = parent
	}
}

// smallChunk is the smallest real chunk (5,727 records).
func smallChunk(tb testing.TB) string {
	return filepath.Join(sharedData(tb), "offeneregister", "ocdata.chunk53.jsonl.bz2")
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
		model, modelErr = LearnModel([]string{chunk}, filepath.Join(sharedData(tb), "names"), 2)
	})
	if modelErr != nil {
		tb.Fatal(modelErr)
	}
	return model
}

// realRecords reads every record of the small real chunk.
func realRecords(tb testing.TB) []*Record {
	tb.Helper()
	var out []*Record
	var mu sync.Mutex
	err := ScanRecords([]string{smallChunk(tb)}, 1, func(_ int, r *Record) {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
