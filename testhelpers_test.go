package companydocs

import (
	"companydocs/internal/realdata"

	"testing"
)

// sharedData returns the path of a file under the shared real-data
// directory, walking up from the package directory; it skips the test when
// the data is not there.
func sharedData(tb testing.TB, rel string) string {
	tb.Helper()
	return realdata.Path(tb, rel)
}
