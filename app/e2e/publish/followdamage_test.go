package publish

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/e2e"
	"companydocs/internal/objectstoretest"
	"companydocs/metrics"
	"companydocs/objectstore"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"
)

// profileOnlyIn returns the id of a company the generation in dir holds
// among the embedded sample's records from to to.
func profileOnlyIn(t *testing.T, dir string, from, to int) string {
	t.Helper()
	g, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, line := range e2e.SampleLines(t, to)[from:] {
		rec, err := ingest.DecodeOffeneRegisterLine(line)
		if err != nil || !rec.OrderingEligible() {
			continue
		}
		ps, err := g.ByNumber(rec.Ref.Type, rec.Ref.Number)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.Name == rec.Name && p.OrderingEligible() {
				return p.ID
			}
		}
	}
	t.Fatal("no orderable company in the sample's range")
	return ""
}

// TestDamagedGenerationIsBackedOff, on a shared directory and on S3: a
// published generation whose largest object differs from its manifest is
// fetched once, recorded (a metric, companydocs nodes) and not fetched
// again for the 5 s watched at a follow interval of 100 ms (50 intervals);
// the node keeps serving the generation before, leaves no download folder
// of it, and answers an order for a company only the damaged generation
// holds as an unknown company, never accepting it and never with a 503
// that lasts; a node added on an empty data directory starts on the
// generation before.
func TestDamagedGenerationIsBackedOff(t *testing.T) {
	e2e.ForEachObjectStore(t, testDamagedGenerationIsBackedOff)
}

func testDamagedGenerationIsBackedOff(t *testing.T, f e2e.FollowSetup) {
	first := f.Publish(t, 1000)
	dataDir := t.TempDir()
	node := e2e.StartServer(t, dataDir, "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms", "--node-name", "node-a")
	token := node.Session(t, "acme", 100)
	bytesBefore, _ := node.Metric(t, "companydocs_index_download_bytes_total")

	meta := e2e.MustBuild(t, f.PublisherDir, 1500, e2e.SampleFile(t))
	onlyNew := profileOnlyIn(t, filepath.Join(f.PublisherDir, "index", meta.ID), 1000, 1500)
	size := f.PublishDamaged(t, meta)
	waitMetric(t, node, "companydocs_index_follow_failures_total", 1, "step", "damaged")
	time.Sleep(5 * time.Second)

	fetched, _ := node.Metric(t, "companydocs_index_download_bytes_total")
	failures, _ := node.Metric(t, "companydocs_index_follow_failures_total", "step", "damaged")
	gauge, _ := node.Metric(t, "companydocs_index_damaged_generations")
	t.Logf("in 5 s after the damage: %.0f damage failures, %.0f bytes fetched (the generation has %d)", failures, fetched-bytesBefore, size)
	if failures != 1 || gauge != 1 {
		t.Errorf("damage failures %v and damaged generations %v, want 1 and 1: the damaged object is fetched again at every interval", failures, gauge)
	}
	if fetched-bytesBefore > float64(size) {
		t.Errorf("%.0f bytes fetched in 5 s, more than the generation's %d once", fetched-bytesBefore, size)
	}
	if got := node.ServingGeneration(); got != first {
		t.Errorf("the node serves %q, want %s", got, first)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dataDir, "index", ".download-*")); len(leftovers) > 0 {
		t.Errorf("download folders left: %v", leftovers)
	}
	out, _, _, _ := e2e.RunCLI(t, "nodes", "--store", f.Store)
	if !strings.Contains(out, "node-a found damaged: "+meta.ID) {
		t.Errorf("companydocs nodes does not name the damaged generation:\n%s", out)
	}
	checkNeverOrderable(t, node, token, onlyNew)
	if c := f.Node(t, "node-new"); c.ServingGeneration() != first {
		t.Errorf("a node added while the newest generation is damaged serves %q, want %s", c.ServingGeneration(), first)
	}
}

// checkNeverOrderable asks for a company only a damaged generation holds:
// a preview blocks it as unknown and an order is refused 422.
func checkNeverOrderable(t *testing.T, s *e2e.TestServer, token, id string) {
	t.Helper()
	var preview e2e.PreviewAnswer
	status, raw := s.Call(t, "POST", "/api/v1/documents/orders/preview/", token, e2e.OrderBody(id, "AD", "ad-single"), &preview)
	if status != http.StatusOK || preview.OrderingEligible || len(preview.Blockers) == 0 || preview.Blockers[0].Code != "company_not_found" {
		t.Errorf("preview of a company only the damaged generation holds: %d %s, want company_not_found", status, raw)
	}
	if status, raw := s.Call(t, "POST", "/api/v1/documents/orders/", token, e2e.OrderBody(id, "AD", "ad-single"), nil); status != http.StatusUnprocessableEntity {
		t.Errorf("order of a company only the damaged generation holds: %d %s, want 422", status, raw)
	}
}

// waitMetric waits until s's metric (with labels) reaches at least want.
func waitMetric(t *testing.T, s *e2e.TestServer, name string, want float64, labels ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if n, _ := s.Metric(t, name, labels...); n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s%v did not reach %v in 30 s\n%s", name, labels, want, s.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDamagedManifestLeavesNoDownloadFolder: live rows of the metastore
// whose manifests name a path outside the generation, or are not JSON,
// are refused once each and backed off; no .download-* folder is left of
// them, and the node serves what it has.
func TestDamagedManifestLeavesNoDownloadFolder(t *testing.T) {
	t.Parallel() // mostly waiting on follow intervals
	f := e2e.NewFollowSetup(t)
	first := f.Publish(t, 300)
	dataDir := t.TempDir()
	node := e2e.StartServer(t, dataDir, "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms")
	for i, manifest := range []string{`[{"Path":"../../escape","Size":3,"SHA256":"00"}]`, `{"not":"a list"}`} {
		f.RecordLive(t, first+"-hostile"+string(rune('a'+i)), json.RawMessage(manifest), 3, 1)
	}
	waitMetric(t, node, "companydocs_index_damaged_generations", 2)
	time.Sleep(2 * time.Second) // 20 intervals
	if n, _ := node.Metric(t, "companydocs_index_follow_failures_total", "step", "damaged"); n != 2 {
		t.Errorf("%v damage failures in 2 s, want 2: one for each row", n)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dataDir, "index", ".download-*")); len(leftovers) > 0 {
		t.Errorf("download folders left: %v", leftovers)
	}
	if got := node.ServingGeneration(); got != first {
		t.Errorf("the node serves %q, want %s", got, first)
	}
}

// TestHeartbeatWhileDownloading: a node downloading a generation slowly
// (--download-rate) goes on reporting itself every follow interval, naming
// the generation it installs, so that neither an operator nor retention
// takes it for gone.
func TestHeartbeatWhileDownloading(t *testing.T) {
	t.Parallel() // mostly waiting on a slow download
	f := e2e.NewFollowSetup(t)
	f.Publish(t, 300)
	e2e.StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "200ms",
		"--node-name", "slow", "--download-rate", "200000")
	second := f.Publish(t, 3000)
	ctx := context.Background()
	db, err := postgres.Open(ctx, f.Store, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	seen, oldest := 0, time.Duration(0)
	for deadline := time.Now().Add(30 * time.Second); seen < 20; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the node was seen installing %s %d times in 30 s", second, seen)
		}
		nodes, err := metastore.New(db).IndexNodes(ctx)
		if err != nil || len(nodes) != 1 {
			t.Fatalf("nodes %v, %v", nodes, err)
		}
		n := nodes[0]
		if n.Installing != second {
			if n.Generation == second {
				t.Fatalf("the node swapped after %d heartbeats seen while installing: make the download slower", seen)
			}
			continue
		}
		seen++
		oldest = max(oldest, time.Since(n.HeartbeatAt)) // the cluster runs on this machine, on its clock
	}
	t.Logf("20 readings during the download: the oldest heartbeat was %s old", oldest.Round(time.Millisecond))
	if oldest > 2*time.Second {
		t.Errorf("a heartbeat %s old during the download, at a follow interval of 200 ms", oldest)
	}
}

// TestFollowCountsAHungObjectStoreWithinOneInterval: an object store
// that accepts connections and answers nothing fails a node's download
// within one follow interval, counted as a follow failure, instead of
// holding the follow for the store's two-minute default.
func TestFollowCountsAHungObjectStoreWithinOneInterval(t *testing.T) {
	_, url := e2e.StartTestCluster(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "companydocs")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ctx := context.Background()
	objects, err := objectstore.Open(ctx, "s3://generations?prefix=companydocs/&endpoint="+objectstoretest.HungEndpoint(t)+"&region=us-east-1&use_path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	defer objects.Close()
	const interval = 2 * time.Second
	objects.WithIdle(publication.FollowIdle(interval))
	f := e2e.FollowSetup{Store: url}
	f.RecordLive(t, "gen-20261202T000000Z-hung", []objectstore.File{{Path: index.ProfilesFile, Size: 1 << 20, SHA256: strings.Repeat("0", 64)}}, 1<<20, 1)
	db, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := metrics.New()
	fl := publication.NewFollower(publication.FollowerConfig{Meta: metastore.New(db), Objects: objects, DataDir: t.TempDir(), Node: "hung",
		Interval: interval, Keep: 2, Logger: slog.New(slog.DiscardHandler), Metrics: reg, Serving: func() string { return "" }})
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	began := time.Now()
	_, err = fl.Sync(sctx)
	took := time.Since(began)
	t.Logf("the sync failed after %s: %v", took.Round(time.Millisecond), err)
	if err == nil || publication.IsDamage(err) {
		t.Fatalf("a store that answers nothing: %v, want a download failure that is not damage", err)
	}
	if took > interval+time.Second {
		t.Errorf("the download failed after %s, want within one follow interval (%s)", took, interval)
	}
	if n := counterValue(t, reg, "companydocs_index_follow_failures_total", "step", "download"); n != 1 {
		t.Errorf("download failures %v, want 1", n)
	}
}

// counterValue reads a counter of reg with the given label.
func counterValue(t *testing.T, reg *metrics.Registry, name, label, value string) float64 {
	t.Helper()
	families, err := reg.Prometheus.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{%s=%q}", name, label, value)
	return 0
}
