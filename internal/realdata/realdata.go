// Package realdata finds the real register, LEI and court data the tests
// run on: the shared/data directory next to or above the repository. It is
// test support only.
package realdata

import (
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Dir returns the shared/data directory, walking up from the current
// directory. Without it the test is skipped, or fails under CI=true, where
// skipping every real-data test would pass a run that checked nothing.
func Dir(tb testing.TB) string {
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
			break
		}
		dir = parent
	}
	const msg = "shared/data (the real register records) not found next to or above the repository"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

// Path returns a file under shared/data, e.g. Path(tb, "offeneregister",
// "fixtures_665.jsonl").
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{Dir(tb)}, elem...)...)
}

// Open opens a plain or bzip2-compressed (by its .bz2 suffix) data file
// for reading; the file is closed when the test ends.
func Open(tb testing.TB, path string) io.Reader {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	if strings.HasSuffix(path, ".bz2") {
		return bzip2.NewReader(f)
	}
	return f
}
