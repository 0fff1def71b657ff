package follow

import (
	"companydocs/ingest"
	"companydocs/internal/e2e"
	"companydocs/internal/objectstoretest"
	"companydocs/objectstore"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// followSetup is a publisher's data directory, a metastore and an object
// store for nodes that follow, which down and up take away and bring back.
type followSetup struct {
	publisherDir, store, source string
	down, up                    func()
}

// newFollowSetup follows from a shared directory (fileblob).
func newFollowSetup(t *testing.T) followSetup {
	_, url := e2e.StartTestCluster(t)
	dir := t.TempDir()
	move := func(from, to string) {
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	return followSetup{publisherDir: t.TempDir(), store: url, source: "file://" + filepath.ToSlash(dir),
		down: func() { move(dir, dir+".away") }, up: func() { move(dir+".away", dir) }}
}

// newS3FollowSetup follows from an S3-compatible store (SeaweedFS on
// 127.0.0.1; its credentials in the environment, as a node reads them).
func newS3FollowSetup(t *testing.T) followSetup {
	_, url := e2e.StartTestCluster(t)
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	return followSetup{publisherDir: t.TempDir(), store: url, source: srv.URL(), down: srv.Stop, up: func() {
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}}
}

// forEachObjectStore runs fn on a shared directory and on S3.
func forEachObjectStore(t *testing.T, fn func(t *testing.T, f followSetup)) {
	t.Run("shared directory", func(t *testing.T) { fn(t, newFollowSetup(t)) })
	t.Run("S3", func(t *testing.T) { fn(t, newS3FollowSetup(t)) })
}

// publish builds a generation of the first records of the embedded
// sample and publishes it; it returns the generation's name.
func (f followSetup) publish(t *testing.T, records int) string {
	t.Helper()
	name, _ := f.publishSaying(t, records)
	return name
}

// publishSaying is publish, also returning what the command printed.
func (f followSetup) publishSaying(t *testing.T, records int) (string, string) {
	t.Helper()
	meta := e2e.MustBuild(t, f.publisherDir, records, e2e.SampleFile(t))
	out, errOut, line, code := e2e.RunCLI(t, "publish", "--data-dir", f.publisherDir, "--index-source", f.source, "--store", f.store)
	if code != 0 {
		t.Fatalf("publish: exit %d %s\n%s%s", code, line, out, errOut)
	}
	return meta.ID, out
}

// waitReported waits until companydocs nodes shows every node of names
// serving gen.
func (f followSetup) waitReported(t *testing.T, gen string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _, code := e2e.RunCLI(t, "nodes", "--store", f.store)
		served := 0
		for _, line := range strings.Split(out, "\n") {
			for _, n := range names {
				if fields := strings.Fields(line); len(fields) > 1 && fields[0] == n && fields[1] == gen {
					served++
				}
			}
		}
		if code == 0 && served == len(names) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("companydocs nodes does not show %v serving %s:\n%s", names, gen, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// node starts a server on an empty data directory that follows the
// published generations.
func (f followSetup) node(t *testing.T, name string) *e2e.TestServer {
	t.Helper()
	return e2e.StartServer(t, t.TempDir(), "--store", f.store, "--index-source", f.source, "--follow-interval", "100ms", "--node-name", name)
}

// waitServing waits until s serves the generation name.
func waitServing(t *testing.T, s *e2e.TestServer, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.ServingGeneration() != name {
		if time.Now().After(deadline) {
			t.Fatalf("the node still serves %q, not %s, after 30 s\n%s", s.ServingGeneration(), name, s.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPublishAndFollow, on a shared directory and on S3: a generation of
// real records is published once; two nodes started on empty data
// directories download, verify and serve it; an edited dump's generation
// is published and both swap it in by themselves, answering searches for
// companies only it holds; a third node added on an empty data directory
// serves it; the metastore shows which node serves what, and each node
// says it is not behind. Two more publications later the first is
// deleted from the object store, the second kept.
func TestPublishAndFollow(t *testing.T) {
	forEachObjectStore(t, testPublishAndFollow)
}

func testPublishAndFollow(t *testing.T, f followSetup) {
	first := f.publish(t, 1000)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
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
	second := f.publish(t, 3000)
	for _, s := range []*e2e.TestServer{a, b} {
		waitServing(t, s, second)
		if c := s.Search(t, newer); len(c) == 0 || c[0].Name != newer {
			t.Errorf("after the rollout a search for %q finds %+v", newer, c)
		}
		if n, _ := s.Metric(t, "companydocs_index_installs_total"); n != 2 {
			t.Errorf("installs %v, want 2", n)
		}
	}
	// a third node, added on an empty data directory, serves the newest
	if c := f.node(t, "node-c"); c.ServingGeneration() != second {
		t.Errorf("a node added after the rollout serves %q, want %s", c.ServingGeneration(), second)
	}
	f.waitReported(t, second, "node-a", "node-b", "node-c")
	if n, ok := a.Metric(t, "companydocs_index_generations_behind"); !ok || n != 0 {
		t.Errorf("generations behind %v, want 0", n)
	}

	// Retention: a generation goes from the object store once every node
	// serves one two newer.
	third, out := f.publishSaying(t, 3500)
	if strings.Contains(out, "deleted") {
		t.Errorf("the third publication deleted a generation while the nodes served the second:\n%s", out)
	}
	waitServing(t, a, third)
	waitServing(t, b, third)
	f.waitReported(t, third, "node-a", "node-b", "node-c")
	_, out = f.publishSaying(t, 4000)
	if !strings.Contains(out, "deleted "+first) || strings.Contains(out, "deleted "+second) {
		t.Errorf("the fourth publication, every node on the third: %q; want %s deleted and %s kept", out, first, second)
	}
	objects, err := objectstore.Open(context.Background(), f.source)
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
	f := newFollowSetup(t)
	f.publish(t, 1000)
	fast := f.node(t, "fast")
	slow := e2e.StartServer(t, t.TempDir(), "--store", f.store, "--index-source", f.source, "--follow-interval", "100ms", "--node-name", "slow", "--download-rate", "400000")
	token := fast.Session(t, "acme", 100)
	second := f.publish(t, 3000)
	waitServing(t, fast, second)
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
	waitServing(t, slow, second)
}
