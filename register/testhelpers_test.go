package register

import (
	"companydocs/internal/realdata"

	"testing"
)

// realFile returns the path of a file of the repository's real data
// (testdata/realdata), named as in shared/data.
func realFile(tb testing.TB, rel string) string {
	tb.Helper()
	return realdata.Path(tb, rel)
}
