//go:build !race

package follow

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/objectstore"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
)

// TestRolloutSurvivesKills: publishes and downloads of a generation of
// 10,000 real records are killed with SIGKILL at random moments, until 10
// of each were killed before they finished (a publish that finished is
// undone, so that the next try starts from nothing). After every kill the
// generation is live in the metastore only if its publish finished, a
// node that follows serves the old generation or the whole new one, and a
// killed node's data directory holds no generation, or the whole new one;
// then the publish and the node finish and serve it.
func TestRolloutSurvivesKills(t *testing.T) {
	f := e2e.NewFollowSetup(t)
	first := f.Publish(t, 1000)
	watcher := f.Node(t, "watcher")
	meta := e2e.MustBuild(t, f.PublisherDir, 10000, e2e.SampleFile(t))
	db, err := postgres.Open(context.Background(), f.Store, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	objects, err := objectstore.Open(context.Background(), f.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer objects.Close()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	cut, attempts := 0, 0
	for ; cut < 10 && attempts < 80; attempts++ {
		killed := killAfter(t, time.Duration(rng.Int64N(int64(250*time.Millisecond))), "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store)
		live, err := metastore.New(db).NewestLive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := watcher.ServingGeneration(); got != first && (got != meta.ID || live.Name != meta.ID) {
			t.Fatalf("kill %d of a publish: the following node serves %q, the newest live is %s", cut, got, live.Name)
		}
		switch {
		case killed && live.Name != meta.ID:
			cut++
		case live.Name == meta.ID:
			// it finished: start the next try from nothing, as a new
			// generation's publish would
			if err := objects.Delete(context.Background(), meta.ID); err != nil {
				t.Fatal(err)
			}
			if err := metastore.New(db).DeletePublication(context.Background(), meta.ID); err != nil {
				t.Fatal(err)
			}
			// The watcher heard of it at once and may serve it now: a
			// fresh one starts on the first, so that the next kill's
			// check still tells a whole generation from a cut one.
			watcher.Shutdown()
			watcher = f.Node(t, "watcher")
		}
	}
	t.Logf("%d publishes killed before the generation went live, in %d tries", cut, attempts)
	if cut < 10 {
		t.Errorf("only %d kills landed before a publish finished", cut)
	}
	f.FinishPublish(t)
	e2e.WaitServing(t, watcher, meta.ID)

	node := t.TempDir()
	args := []string{"serve", "--data-dir", node, "--addr", "127.0.0.1:0", "--store", f.Store, "--index-source", f.Source,
		"--node-name", "killed", "--download-rate", "500000", "--log-format", "json"}
	partial := 0
	for i := range 10 {
		killAfter(t, 150*time.Millisecond+time.Duration(rng.Int64N(int64(750*time.Millisecond))), args...)
		switch cur, err := index.ReadCurrent(node); {
		case errors.Is(err, index.ErrNoGeneration):
			partial++
		case err != nil:
			t.Fatal(err)
		case cur != meta.ID:
			t.Fatalf("kill %d of a download: CURRENT names %s, want none or %s", i, cur, meta.ID)
		default:
			g, err := index.Open(filepath.Join(node, "index", cur))
			if err != nil {
				t.Fatalf("kill %d of a download: the installed generation does not open: %v", i, err)
			}
			g.Close()
		}
	}
	t.Logf("%d of 10 downloads killed before the generation was installed", partial)
	if partial == 0 {
		t.Errorf("no kill landed before the download finished: the test tried nothing")
	}
	s := e2e.StartServer(t, node, "--store", f.Store, "--index-source", f.Source, "--node-name", "killed")
	if got := s.ServingGeneration(); got != meta.ID {
		t.Errorf("after the kills the node serves %q, want %s", got, meta.ID)
	}
}

// killAfter runs the companydocs command line args in a child process and
// kills it with SIGKILL after d, or lets it end before; it reports
// whether it killed it.
func killAfter(t *testing.T, d time.Duration, args ...string) bool {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), e2e.RunMainEnv+"=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return false
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return true
	}
}

// TestFollowWhileTheObjectStoreIsDown: the object store goes away while a
// node downloads a new generation, under search load. The node keeps
// serving the generation it has, stays ready, says so in a log line and a
// metric, answers every search; once the store is back it continues the
// download and swaps the new generation in.
func TestFollowWhileTheObjectStoreIsDown(t *testing.T) {
	e2e.ForEachObjectStore(t, testFollowWhileTheObjectStoreIsDown)
}

func testFollowWhileTheObjectStoreIsDown(t *testing.T, f e2e.FollowSetup) {
	first := f.Publish(t, 1000)
	s := e2e.StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms", "--node-name", "n", "--download-rate", "1000000")
	second := f.Publish(t, 10000)
	ctx, stopLoad := context.WithCancel(context.Background())
	load, waitLoad := e2e.SearchLoad(ctx, s.Base, []string{"Rheinbahn", "HRB 6684 München", "Bäckerei Köln", "Müller GmbH"})
	time.Sleep(500 * time.Millisecond) // the download is under way
	f.Down()
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := s.Metric(t, "companydocs_index_follow_failures_total", "step", "download"); n < 2; n, _ = s.Metric(t, "companydocs_index_follow_failures_total", "step", "download") {
		if time.Now().After(deadline) {
			t.Fatalf("no failed download counted while the object store is gone\n%s", s.Logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := s.ServingGeneration(); got != first {
		t.Errorf("while the object store is gone the node serves %q, want %s", got, first)
	}
	if status, body, _ := s.Do(t, "GET", "/readyz", ""); status != http.StatusOK {
		t.Errorf("readyz while the object store is gone: %d %s", status, body)
	}
	if !strings.Contains(s.Logs.String(), "following published generations failed") {
		t.Error("no log line says the follow failed")
	}
	f.Up()
	e2e.WaitServing(t, s, second)
	stopLoad()
	waitLoad()
	t.Logf("%d searches answered during the outage and the rollout, %d failed", load.Ok.Load(), load.Failed.Load())
	if load.Failed.Load() > 0 || load.Ok.Load() < 20 {
		t.Errorf("%d searches failed (%v), %d answered", load.Failed.Load(), load.Failures, load.Ok.Load())
	}
}
