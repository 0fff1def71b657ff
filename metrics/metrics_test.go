package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestBuildInfo: the build is exported as companydocs_build_info with
// value 1, and a second call replaces the first.
func TestBuildInfo(t *testing.T) {
	m := New()
	m.SetBuildInfo("v0.9.0", "old", "go1.26.8")
	m.SetBuildInfo("(devel)", "0123abc", "go1.26.8")
	want := `# HELP companydocs_build_info The build being served (value 1): module version, VCS revision and Go release as labels.
# TYPE companydocs_build_info gauge
companydocs_build_info{goversion="go1.26.8",revision="0123abc",version="(devel)"} 1
`
	if err := testutil.GatherAndCompare(m.Prometheus, strings.NewReader(want), "companydocs_build_info"); err != nil {
		t.Fatal(err)
	}
	var none *Registry
	none.SetBuildInfo("v1", "r", "go") // records nothing, does not panic
}
