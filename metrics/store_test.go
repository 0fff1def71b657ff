package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestOrderStoreUpAsksAtScrape: companydocs_order_store_up asks the store
// at each scrape, 1 while it answers and 0 once it does not; a nil
// registry records nothing.
func TestOrderStoreUpAsksAtScrape(t *testing.T) {
	m := New()
	answers, asked := true, 0
	m.RegisterOrderStore(func() bool { asked++; return answers })
	const help = `# HELP companydocs_order_store_up 1 when the PostgreSQL order store answered a ping at this scrape, 0 when it did not (then /readyz is 503 and requests that need it answer 503).
# TYPE companydocs_order_store_up gauge
`
	for _, tc := range []struct {
		name    string
		answers bool
		want    string
	}{
		{"answers", true, "companydocs_order_store_up 1\n"},
		{"lost", false, "companydocs_order_store_up 0\n"},
		{"back", true, "companydocs_order_store_up 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers = tc.answers
			before := asked
			if err := testutil.GatherAndCompare(m.Prometheus, strings.NewReader(help+tc.want), "companydocs_order_store_up"); err != nil {
				t.Fatal(err)
			}
			if asked != before+1 {
				t.Errorf("the store was asked %d times by one scrape, want 1", asked-before)
			}
		})
	}
	var none *Registry
	none.RegisterOrderStore(func() bool { t.Error("a nil registry asked the store"); return false })
}
