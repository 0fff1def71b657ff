package companydocs

import (
	"os"
	"path/filepath"
	"testing"
)

// sharedData returns the path of a file under the shared real-data
// directory, walking up from the package directory; it skips the test when
// the data is not there.
func sharedData(tb testing.TB, rel string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		for _, cand := range []string{filepath.Join(dir, "shared", "data"), filepath.Join(dir, "..", "shared", "data")} {
			p := filepath.Join(cand, rel)
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("real data %s not found: expected a shared/data directory next to or above the repository", rel)
		}
		dir = parent
	}
}
