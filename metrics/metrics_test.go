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

// TestGenerationChanges: the change counts of the generation being served
// are exported by field, every field present; a generation without a
// change record shows -1 changed profiles and no field.
func TestGenerationChanges(t *testing.T) {
	m := New()
	m.SetGenerationChanges(true, 5, map[string]int{"name": 2, "status": 2, "officers": 1, "previous_names": 1, "removed": 1})
	if got := testutil.ToFloat64(m.changedProfiles); got != 5 {
		t.Errorf("changed profiles %v, want 5", got)
	}
	for field, want := range map[string]float64{"name": 2, "status": 2, "officers": 1, "removed": 1, "register": 0, "documents": 0} {
		if got := testutil.ToFloat64(m.changedFields.WithLabelValues(field)); got != want {
			t.Errorf("changes of %s: %v, want %v", field, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.changedFields); n != 11 {
		t.Errorf("%d fields exported, want 11", n)
	}
	m.SetGenerationChanges(false, 0, nil)
	if got := testutil.ToFloat64(m.changedProfiles); got != -1 {
		t.Errorf("changed profiles without a record %v, want -1", got)
	}
	if n := testutil.CollectAndCount(m.changedFields); n != 0 {
		t.Errorf("%d fields exported without a record, want 0", n)
	}
	var none *Registry
	none.SetGenerationChanges(true, 1, nil)
}
