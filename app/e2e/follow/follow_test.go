package follow

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs/ingest"
	"companydocs/internal/e2e"
	"companydocs/objectstore"
)

// TestPublishAndFollow, on a shared directory and on S3: a generation of
// real records is published once; two nodes started on empty data
// directories download, verify and serve it; an edited dump's generation
// is published and both swap it in by themselves, answering searches for
// companies only it holds; a third node added on an empty data directory
// serves it; the metastore shows which node serves what, and each node
// says it is not behind. Two more publications later the first is
// deleted from the object store, the second kept.
func TestPublishAndFollow(t *testing.T) {
	e2e.ForEachObjectStore(t, testPublishAndFollow)
}

func testPublishAndFollow(t *testing.T, f e2e.FollowSetup) {
	first := f.Publish(t, 1000)
	a, b := f.Node(t, "node-a"), f.Node(t, "node-b")
	for _, s := range []*e2e.TestServer{a, b} {
		if got := s.ServingGeneration(); got != first {
			t.Fatalf("a node on an empty data directory serves %q, want the published %s", got, first)
		}
		if status, body, _ := s.Do(t, "GET", "/readyz", ""); status != http.StatusOK {
			t.Fatalf("readyz %d %s", status, body)
		}
	}
	newer := sampleCompanyBeyond(t, 1000, 3000)
	if len(a.Search(t, newer)) > 0 && a.Search(t, newer)[0].Name == newer {
		t.Fatalf("%q is already in the first generation", newer)
	}
	second := f.Publish(t, 3000)
	for _, s := range []*e2e.TestServer{a, b} {
		e2e.WaitServing(t, s, second)
		if c := s.Search(t, newer); len(c) == 0 || c[0].Name != newer {
			t.Errorf("after the rollout a search for %q finds %+v", newer, c)
		}
		if n, _ := s.Metric(t, "companydocs_index_installs_total"); n != 2 {
			t.Errorf("installs %v, want 2", n)
		}
	}
	// a third node, added on an empty data directory, serves the newest
	if c := f.Node(t, "node-c"); c.ServingGeneration() != second {
		t.Errorf("a node added after the rollout serves %q, want %s", c.ServingGeneration(), second)
	}
	f.WaitReported(t, second, "node-a", "node-b", "node-c")
	if n, ok := a.Metric(t, "companydocs_index_generations_behind"); !ok || n != 0 {
		t.Errorf("generations behind %v, want 0", n)
	}

	// Retention: a generation goes from the object store once every node
	// serves one two newer.
	third, out := f.PublishSaying(t, 3500)
	if strings.Contains(out, "deleted") {
		t.Errorf("the third publication deleted a generation while the nodes served the second:\n%s", out)
	}
	e2e.WaitServing(t, a, third)
	e2e.WaitServing(t, b, third)
	f.WaitReported(t, third, "node-a", "node-b", "node-c")
	_, out = f.PublishSaying(t, 4000)
	if !strings.Contains(out, "deleted "+first) || strings.Contains(out, "deleted "+second) {
		t.Errorf("the fourth publication, every node on the third: %q; want %s deleted and %s kept", out, first, second)
	}
	objects, err := objectstore.Open(context.Background(), f.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer objects.Close()
	if names, err := objects.Names(context.Background()); err != nil || slices.Contains(names, first) || !slices.Contains(names, second) {
		t.Errorf("after the fourth publication the object store holds %v (%v); want %s gone and %s kept", names, err, first, second)
	}
}

// sampleCompanyBeyond returns the name of a company among the embedded
// sample's records from to to (a name searched alone finds it first).
func sampleCompanyBeyond(t *testing.T, from, to int) string {
	t.Helper()
	for _, line := range e2e.SampleLines(t, to)[from:] {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err == nil && !p.Removed && len(strings.Fields(p.Name)) >= 3 {
			return p.Name
		}
	}
	t.Fatal("no company in the sample's range")
	return ""
}

// TestOrdersDuringARollout: while a node downloads a newly published
// generation at a slow --download-rate, an order for a company only that
// generation holds, whose id a client found on a node that has swapped
// already, is never refused as an unknown company: the slow node checks
// the gate against the new generation's profile store, which it fetches
// first (or asks the client to retry, 503, in the first moments).
func TestOrdersDuringARollout(t *testing.T) {
	f := e2e.NewFollowSetup(t)
	f.Publish(t, 1000)
	fast := f.Node(t, "fast")
	slow := e2e.StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms", "--node-name", "slow", "--download-rate", "400000")
	token := fast.Session(t, "acme", 100)
	second := f.Publish(t, 3000)
	e2e.WaitServing(t, fast, second)
	newer := sampleCompanyBeyond(t, 1000, 3000)
	c := fast.Search(t, newer)
	if len(c) == 0 || c[0].Name != newer {
		t.Fatalf("the new generation does not find %q: %+v", newer, c)
	}
	statuses := map[int]int{}
	orderedBeforeSwap := false
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		before := slow.ServingGeneration()
		status, raw := slow.Call(t, "POST", "/api/v1/documents/orders/", token, e2e.OrderBody(c[0].ProfileID, "AD", "ad-single"), nil)
		statuses[status]++
		if status == http.StatusUnprocessableEntity {
			t.Fatalf("the slow node refused an order for a company of the newest generation: %s", raw)
		}
		if status == http.StatusCreated {
			orderedBeforeSwap = before != second
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no order after 60 s: %v, last %s", statuses, raw)
		}
	}
	t.Logf("answers of the slow node during the rollout: %v; ordered before it swapped: %v", statuses, orderedBeforeSwap)
	if !orderedBeforeSwap {
		t.Errorf("the order went through only once the slow node served the new generation: the rollout gate was not tried")
	}
	e2e.WaitServing(t, slow, second)
}
