package e2e

import (
	"os"
	"testing"
)

// FileSize returns the size of the file at path.
func FileSize(tb testing.TB, path string) int64 {
	tb.Helper()
	st, err := os.Stat(path)
	if err != nil {
		tb.Fatal(err)
	}
	return st.Size()
}
