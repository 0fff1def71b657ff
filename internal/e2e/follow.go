package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/internal/objectstoretest"
)

// FollowSetup is a publisher's data directory, a metastore and an object
// store for nodes that follow, which down and up take away and bring back.
type FollowSetup struct {
	PublisherDir, Store, Source string
	Down, Up                    func()
}

// NewFollowSetup follows from a shared directory (fileblob).
func NewFollowSetup(t *testing.T) FollowSetup {
	_, url := StartTestCluster(t)
	dir := t.TempDir()
	move := func(from, to string) {
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	return FollowSetup{PublisherDir: t.TempDir(), Store: url, Source: "file://" + filepath.ToSlash(dir),
		Down: func() { move(dir, dir+".away") }, Up: func() { move(dir+".away", dir) }}
}

// newS3FollowSetup follows from an S3-compatible store (SeaweedFS on
// 127.0.0.1; its credentials in the environment, as a node reads them).
func newS3FollowSetup(t *testing.T) FollowSetup {
	_, url := StartTestCluster(t)
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	return FollowSetup{PublisherDir: t.TempDir(), Store: url, Source: srv.URL(), Down: srv.Stop, Up: func() {
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	}}
}

// ForEachObjectStore runs fn on a shared directory and on S3.
func ForEachObjectStore(t *testing.T, fn func(t *testing.T, f FollowSetup)) {
	t.Run("shared directory", func(t *testing.T) { fn(t, NewFollowSetup(t)) })
	t.Run("S3", func(t *testing.T) { fn(t, newS3FollowSetup(t)) })
}

// Publish builds a generation of the first records of the embedded
// sample and publishes it; it returns the generation's name.
func (f FollowSetup) Publish(t *testing.T, records int) string {
	t.Helper()
	name, _ := f.PublishSaying(t, records)
	return name
}

// PublishSaying is publish, also returning what the command printed.
func (f FollowSetup) PublishSaying(t *testing.T, records int) (string, string) {
	t.Helper()
	meta := MustBuild(t, f.PublisherDir, records, SampleFile(t))
	out, errOut, line, code := RunCLI(t, "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store)
	if code != 0 {
		t.Fatalf("publish: exit %d %s\n%s%s", code, line, out, errOut)
	}
	return meta.ID, out
}

// WaitReported waits until companydocs nodes shows every node of names
// serving gen.
func (f FollowSetup) WaitReported(t *testing.T, gen string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, _, code := RunCLI(t, "nodes", "--store", f.Store)
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

// Node starts a server on an empty data directory that follows the
// published generations.
func (f FollowSetup) Node(t *testing.T, name string) *TestServer {
	t.Helper()
	return StartServer(t, t.TempDir(), "--store", f.Store, "--index-source", f.Source, "--follow-interval", "100ms", "--node-name", name)
}

// WaitServing waits until s serves the generation name.
func WaitServing(t *testing.T, s *TestServer, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for s.ServingGeneration() != name {
		if time.Now().After(deadline) {
			t.Fatalf("the node still serves %q, not %s, after 30 s\n%s", s.ServingGeneration(), name, s.Logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
