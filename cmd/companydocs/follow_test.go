package main

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/ingest"
)

// followSetup is a publisher's data directory, a metastore and an object
// store (a shared directory, fileblob) for nodes that follow.
type followSetup struct {
	publisherDir, store, source string
}

func newFollowSetup(t *testing.T) followSetup {
	_, url := startTestCluster(t)
	return followSetup{publisherDir: t.TempDir(), store: url, source: "file://" + filepath.ToSlash(t.TempDir())}
}

// publish builds a generation of the first records of the embedded
// sample and publishes it; it returns the generation's name.
func (f followSetup) publish(t *testing.T, records int) string {
	t.Helper()
	meta := mustBuild(t, f.publisherDir, records, sampleFile(t))
	if out, errOut, line, code := runCLI(t, "publish", "--data-dir", f.publisherDir, "--index-source", f.source, "--store", f.store); code != 0 {
		t.Fatalf("publish: exit %d %s\n%s%s", code, line, out, errOut)
	}
	return meta.ID
}

// node starts a server on an empty data directory that follows the
// published generations.
func (f followSetup) node(t *testing.T, name string) *testServer {
	t.Helper()
	return startServer(t, t.TempDir(), "--store", f.store, "--index-source", f.source, "--follow-interval", "100ms", "--node-name", name)
}

// waitServing waits until s serves the generation name.
func waitServing(t *testing.T, s *testServer, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.servingGeneration() != name {
		if time.Now().After(deadline) {
			t.Fatalf("the node still serves %q, not %s, after 30 s\n%s", s.servingGeneration(), name, s.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPublishAndFollow: a generation of real records is published once;
// two nodes started on empty data directories download, verify and serve
// it; an edited dump's generation is published and both swap it in by
// themselves, answering searches for companies only it holds; the
// metastore shows which node serves what, and each node says it is not
// behind.
func TestPublishAndFollow(t *testing.T) {
	f := newFollowSetup(t)
	first := f.publish(t, 1000)
	a, b := f.node(t, "node-a"), f.node(t, "node-b")
	for _, s := range []*testServer{a, b} {
		if got := s.servingGeneration(); got != first {
			t.Fatalf("a node on an empty data directory serves %q, want the published %s", got, first)
		}
		if status, body, _ := s.do(t, "GET", "/readyz", ""); status != http.StatusOK {
			t.Fatalf("readyz %d %s", status, body)
		}
	}
	newer := sampleCompanyBeyond(t, 1000, 3000)
	if len(a.search(t, newer)) > 0 && a.search(t, newer)[0].Name == newer {
		t.Fatalf("%q is already in the first generation", newer)
	}
	second := f.publish(t, 3000)
	for _, s := range []*testServer{a, b} {
		waitServing(t, s, second)
		if c := s.search(t, newer); len(c) == 0 || c[0].Name != newer {
			t.Errorf("after the rollout a search for %q finds %+v", newer, c)
		}
		if n, _ := s.metric(t, "companydocs_index_installs_total"); n != 2 {
			t.Errorf("installs %v, want 2", n)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _, code := runCLI(t, "nodes", "--store", f.store)
		if code == 0 && strings.Count(out, second) == 3 && strings.Contains(out, "node-a") && strings.Contains(out, "node-b") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("companydocs nodes after the rollout:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n, ok := a.metric(t, "companydocs_index_generations_behind"); !ok || n != 0 {
		t.Errorf("generations behind %v, want 0", n)
	}
}

// sampleCompanyBeyond returns the name of a company among the embedded
// sample's records from to to (a name searched alone finds it first).
func sampleCompanyBeyond(t *testing.T, from, to int) string {
	t.Helper()
	for _, line := range sampleLines(t, to)[from:] {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err == nil && !p.Removed && len(strings.Fields(p.Name)) >= 3 {
			return p.Name
		}
	}
	t.Fatal("no company in the sample's range")
	return ""
}
