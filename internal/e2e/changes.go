package e2e

import (
	"testing"
	"time"
)

// WaitForLong is WaitFor with a finer poll over a longer time: the change
// record appears after the ingest has read every record.
func WaitForLong(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	tb.Fatalf("timed out waiting for %s", what)
}
