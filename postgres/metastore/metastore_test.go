package metastore

import (
	"context"
	"errors"
	"testing"
	"time"

	"companydocs/internal/pgcluster"
	"companydocs/postgres"
	"companydocs/publication"
)

// TestPublicationsBecomeVisibleWhenComplete: a publication being uploaded
// is recorded but not live; completing it makes it the newest live one
// for every node on the database at once; beginning a live one again
// changes nothing, completing it again is refused; a killed publish run
// again starts over with its new manifest.
func TestPublicationsBecomeVisibleWhenComplete(t *testing.T) {
	ctx := context.Background()
	nodes := openNodes(t, newDatabase(t), 2)
	a := publication.Publication{Name: "gen-20261128T060000.000Z-aaaaaa", Manifest: []byte(`[{"path":"meta.json","size":10}]`), Bytes: 10, Profiles: 3}
	if err := nodes[0].BeginPublication(ctx, a); err != nil {
		t.Fatal(err)
	}
	if p, err := nodes[1].NewestLive(ctx); err != nil || p != nil {
		t.Fatalf("while uploading: newest live %+v, %v; want none", p, err)
	}
	a.Manifest, a.Bytes = []byte(`[{"path":"meta.json","size":11}]`), 11
	if err := nodes[0].BeginPublication(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := nodes[0].CompletePublication(ctx, a.Name); err != nil {
		t.Fatal(err)
	}
	p, err := nodes[1].NewestLive(ctx)
	if err != nil || p == nil || p.Name != a.Name || p.Bytes != 11 || string(p.Manifest) != `[{"path": "meta.json", "size": 11}]` || p.PublishedAt.IsZero() {
		t.Fatalf("after completing: %+v, %v; want %s with the manifest of its second try", p, err, a.Name)
	}
	for serving, want := range map[string]int{"": 1, "gen-20261128T050000.000Z-000000": 1, a.Name: 0} {
		if n, err := nodes[1].LiveNewerThan(ctx, serving); err != nil || n != want {
			t.Errorf("live publications newer than %q: %d, %v; want %d", serving, n, err, want)
		}
	}
	if err := nodes[1].CompletePublication(ctx, a.Name); !errors.Is(err, publication.ErrNotUploading) {
		t.Errorf("completing a live publication again: %v, want publication.ErrNotUploading", err)
	}
	b := publication.Publication{Name: "gen-20261128T070000.000Z-bbbbbb", Manifest: []byte(`[]`)}
	if err := nodes[1].BeginPublication(ctx, b); err != nil {
		t.Fatal(err)
	}
	if p, _ := nodes[0].NewestLive(ctx); p == nil || p.Name != a.Name {
		t.Errorf("a newer publication still uploading: newest live %+v, want %s", p, a.Name)
	}
	if n, err := nodes[0].LiveNewerThan(ctx, a.Name); err != nil || n != 0 {
		t.Errorf("a newer publication still uploading counts as newer: %d, %v", n, err)
	}
	all, err := nodes[0].Publications(ctx)
	if err != nil || len(all) != 2 || all[0].Name != b.Name || all[0].State != publication.StateUploading || !all[0].PublishedAt.IsZero() {
		t.Errorf("publications %+v, %v; want b uploading, then a", all, err)
	}
}

// TestNodesReportWhatTheyServe: a node's heartbeat replaces its last one.
func TestNodesReportWhatTheyServe(t *testing.T) {
	ctx := context.Background()
	db := openNodes(t, newDatabase(t), 1)[0]
	started := time.Now().UTC().Truncate(time.Second)
	for _, n := range []publication.Node{{Node: "b", Generation: "", StartedAt: started}, {Node: "a", Generation: "gen-1", Behind: 1, StartedAt: started}, {Node: "b", Generation: "gen-2", StartedAt: started}} {
		if err := db.Heartbeat(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := db.IndexNodes(ctx)
	if err != nil || len(nodes) != 2 || nodes[0].Node != "a" || nodes[0].Behind != 1 || nodes[1].Generation != "gen-2" || !nodes[1].StartedAt.Equal(started) || nodes[1].HeartbeatAt.IsZero() {
		t.Fatalf("nodes %+v, %v", nodes, err)
	}
}

// cluster is this test binary's PostgreSQL; each test opens a fresh
// database on it (newDatabase).
var cluster *pgcluster.Cluster

func TestMain(m *testing.M) {
	pgcluster.RunTests(m, func(c *pgcluster.Cluster) { cluster = c })
}

// newDatabase creates an empty database and returns its URL.
func newDatabase(tb testing.TB) string {
	tb.Helper()
	url, err := cluster.CreateDatabase(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return url
}

// openNodes opens the metastore of url n times, as n nodes do, each
// closed when the test ends.
func openNodes(t *testing.T, url string, n int) []*Store {
	t.Helper()
	nodes := make([]*Store, n)
	for i := range nodes {
		db, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		nodes[i] = New(db)
	}
	return nodes
}
