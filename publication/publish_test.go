package publication

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs/objectstore"
)

// TestRetirable: a live generation is deleted once every node that
// reports serves a generation two newer, never while one serves it or
// may fall back to it, and not for nodes that stopped reporting.
func TestRetirable(t *testing.T) {
	now := time.Now()
	gens := []string{"gen-4", "gen-3", "gen-2", "gen-1"}
	var pubs []Publication
	for _, g := range gens {
		pubs = append(pubs, Publication{Name: g, State: StateLive})
	}
	uploading := append([]Publication{{Name: "gen-5", State: StateUploading}}, pubs...)
	node := func(gen string, age time.Duration) Node {
		return Node{Node: gen + fmt.Sprint(age), Generation: gen, HeartbeatAt: now.Add(-age)}
	}
	for _, c := range []struct {
		name  string
		pubs  []Publication
		nodes []Node
		want  []string
	}{
		{"every node on the newest", pubs, []Node{node("gen-4", 0), node("gen-4", time.Second)}, []string{"gen-2", "gen-1"}},
		{"one node a generation behind", pubs, []Node{node("gen-4", 0), node("gen-3", 0)}, []string{"gen-1"}},
		{"one node on the oldest", pubs, []Node{node("gen-4", 0), node("gen-1", 0)}, nil},
		{"a node that stopped reporting is not waited for", pubs, []Node{node("gen-4", 0), node("gen-1", time.Hour)}, []string{"gen-2", "gen-1"}},
		{"a node with nothing yet is not waited for", pubs, []Node{node("gen-4", 0), node("", 0)}, []string{"gen-2", "gen-1"}},
		{"no node reports", pubs, nil, nil},
		{"an upload in progress is no generation", uploading, []Node{node("gen-4", 0)}, []string{"gen-2", "gen-1"}},
	} {
		if got := retirable(c.pubs, c.nodes, now); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRetentionKeepsInstallingGenerations: a generation a reporting node
// installs is kept as one it serves is, with the one before it; a node
// that reported 10 minutes ago still reports (nodeStale is 15 minutes).
func TestRetentionKeepsInstallingGenerations(t *testing.T) {
	now := time.Now()
	var pubs []Publication
	for _, g := range []string{"gen-5", "gen-4", "gen-3", "gen-2", "gen-1"} {
		pubs = append(pubs, Publication{Name: g, State: StateLive})
	}
	node := func(serves, installs string, age time.Duration) Node {
		return Node{Node: serves + "+" + installs + fmt.Sprint(age), Generation: serves, Installing: installs, HeartbeatAt: now.Add(-age)}
	}
	for _, c := range []struct {
		name  string
		nodes []Node
		want  []string
	}{
		{"every node on the newest", []Node{node("gen-5", "", 0)}, []string{"gen-3", "gen-2", "gen-1"}},
		{"a node installs the newest", []Node{node("gen-4", "gen-5", 0)}, []string{"gen-2", "gen-1"}},
		{"a new node installs an old one", []Node{node("gen-5", "", 0), node("", "gen-2", 0)}, nil},
		{"a node installs one older than it serves", []Node{node("gen-5", "gen-3", 0)}, []string{"gen-1"}},
		{"only an installing node reports", []Node{node("", "gen-4", 0)}, []string{"gen-2", "gen-1"}},
		{"an installing node 10 minutes ago", []Node{node("gen-5", "", 0), node("", "gen-1", 10*time.Minute)}, nil},
		{"an installing node past nodeStale", []Node{node("gen-5", "", 0), node("", "gen-1", nodeStale+time.Second)}, []string{"gen-3", "gen-2", "gen-1"}},
	} {
		got := retirable(pubs, c.nodes, now)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		for _, n := range c.nodes {
			if now.Sub(n.HeartbeatAt) <= nodeStale && (slices.Contains(got, n.Generation) || slices.Contains(got, n.Installing)) {
				t.Errorf("%s: retires a generation node %s serves or installs", c.name, n.Node)
			}
		}
	}
}

// TestNothingChangesWhileAnotherPublishes, on a shared directory: three
// generations are live and every node serves the third, so the first is
// due for retirement. While another publish holds the publishing lock,
// Retire deletes nothing and says why, and the publish of a fourth
// returns the lock's error having recorded and uploaded nothing. Once the
// lock is let go, Retire deletes the first and the fourth is published.
func TestNothingChangesWhileAnotherPublishes(t *testing.T) {
	ctx := context.Background()
	pub, meta, objects, out, warn := newPublisher(t, "file://"+filepath.ToSlash(t.TempDir()))
	src := t.TempDir()
	records := sampleProfiles(t, 300)
	var live []string
	for round := range 3 {
		live = append(live, mustPublish(t, pub, src, renamed(records, round), false).Name)
	}
	meta.serveAll(live[2])
	fourth := mustBuild(t, src, renamed(records, 3), false)

	release, err := meta.LockPublishing(ctx) // another publish's
	if err != nil {
		t.Fatal(err)
	}
	before := mustContents(t, objects)
	out.Reset()
	pub.Retire(ctx)
	if _, err := pub.Publish(ctx, fourth); err == nil {
		t.Error("a publish ran while another held the publishing lock")
	}
	if !strings.Contains(warn.String(), "retention skipped: another publish is running") || out.Len() > 0 {
		t.Errorf("Retire while another publish runs says %q, warns %q; want it skipped", out.String(), warn.String())
	}
	if pubs, _ := meta.Publications(ctx); len(pubs) != 3 || !slices.Equal(mustContents(t, objects), before) {
		t.Errorf("while another publish ran: %d publications, objects %v; want 3 and %v", len(pubs), mustContents(t, objects), before)
	}

	release()
	pub.Retire(ctx)
	if !strings.Contains(out.String(), "deleted "+live[0]+" ") {
		t.Errorf("Retire once the lock is let go says %q, want %s deleted", out.String(), live[0])
	}
	if _, err := pub.Publish(ctx, fourth); err != nil {
		t.Errorf("publish once the lock is let go: %v", err)
	}
}

// mustContents lists what lies in objects.
func mustContents(t *testing.T, objects Blobs) []objectstore.Entry {
	t.Helper()
	entries, err := objects.Contents(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return entries
}
