package httpapi

import (
	"math"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// NodeShare is this node's share of the rate limits that hold for a
// service of several nodes behind one load balancer: each node grants an
// address or an account 1/n of every rate and burst, n the live nodes the
// metastore's heartbeats name, so that n nodes do not grant n times the
// rate. A node that is alone (or follows no published index, so reads no
// heartbeats) keeps the whole rate. The zero value is one node.
type NodeShare struct{ nodes atomic.Int64 }

// SetNodes records how many live nodes share the limits (at least 1).
func (s *NodeShare) SetNodes(n int) { s.nodes.Store(int64(max(n, 1))) }

// Nodes is the number of live nodes the limits are shared by, at least 1.
func (s *NodeShare) Nodes() int {
	if s == nil {
		return 1
	}
	return int(max(s.nodes.Load(), 1))
}

// shareOf is a rate and burst divided among n nodes: the burst rounded up,
// so that every node grants at least one request.
func shareOf(limit rate.Limit, burst, n int) (rate.Limit, int) {
	return limit / rate.Limit(n), max(int(math.Ceil(float64(burst)/float64(n))), 1)
}
