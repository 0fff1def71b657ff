package publication

import (
	"fmt"
	"slices"
	"testing"
	"time"
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
