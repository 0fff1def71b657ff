package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"companydocs/postgres"
)

// TestRetirable: a live generation is deleted once every node that
// reports serves a generation two newer, never while one serves it or
// may fall back to it, and not for nodes that stopped reporting.
func TestRetirable(t *testing.T) {
	now := time.Now()
	gens := []string{"gen-4", "gen-3", "gen-2", "gen-1"}
	var pubs []postgres.Publication
	for _, g := range gens {
		pubs = append(pubs, postgres.Publication{Name: g, State: postgres.PublicationLive})
	}
	uploading := append([]postgres.Publication{{Name: "gen-5", State: postgres.PublicationUploading}}, pubs...)
	node := func(gen string, age time.Duration) postgres.IndexNode {
		return postgres.IndexNode{Node: gen + fmt.Sprint(age), Generation: gen, HeartbeatAt: now.Add(-age)}
	}
	for _, c := range []struct {
		name  string
		pubs  []postgres.Publication
		nodes []postgres.IndexNode
		want  []string
	}{
		{"every node on the newest", pubs, []postgres.IndexNode{node("gen-4", 0), node("gen-4", time.Second)}, []string{"gen-2", "gen-1"}},
		{"one node a generation behind", pubs, []postgres.IndexNode{node("gen-4", 0), node("gen-3", 0)}, []string{"gen-1"}},
		{"one node on the oldest", pubs, []postgres.IndexNode{node("gen-4", 0), node("gen-1", 0)}, nil},
		{"a node that stopped reporting is not waited for", pubs, []postgres.IndexNode{node("gen-4", 0), node("gen-1", time.Hour)}, []string{"gen-2", "gen-1"}},
		{"a node with nothing yet is not waited for", pubs, []postgres.IndexNode{node("gen-4", 0), node("", 0)}, []string{"gen-2", "gen-1"}},
		{"no node reports", pubs, nil, nil},
		{"an upload in progress is no generation", uploading, []postgres.IndexNode{node("gen-4", 0)}, []string{"gen-2", "gen-1"}},
	} {
		if got := retirable(c.pubs, c.nodes, now); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
