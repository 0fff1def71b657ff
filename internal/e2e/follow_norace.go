//go:build !race

package e2e

import (
	"testing"
)

// FinishPublish publishes the publisher's current generation to the end.
func (f FollowSetup) FinishPublish(t *testing.T) {
	t.Helper()
	if out, errOut, line, code := RunCLI(t, "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store); code != 0 {
		t.Fatalf("publish after the kills: exit %d %s\n%s%s", code, line, out, errOut)
	}
}
