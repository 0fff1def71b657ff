package e2e

import (
	"testing"
)

// PublishDump builds a generation of the dump at path and publishes it.
func (f FollowSetup) PublishDump(t *testing.T, path string) string {
	t.Helper()
	meta := MustBuild(t, f.PublisherDir, 0, path)
	out, errOut, line, code := RunCLI(t, "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store)
	if code != 0 {
		t.Fatalf("publish: exit %d %s\n%s%s", code, line, out, errOut)
	}
	return meta.ID
}

// PreviewAnswer is what an order preview said.
type PreviewAnswer struct {
	OrderingEligible bool `json:"ordering_eligible"`
	Blockers         []struct {
		Code string `json:"code"`
	} `json:"blockers"`
}
