package httpapi

import (
	"runtime"
	"strconv"
	"sync"

	"companydocs"

	"github.com/gofiber/fiber/v2"
)

// Batches (the search batch, reconciliation's query batches) share the
// node with single searches, which must keep their speed:
//   - a client address has one batch resolved at a time (429 with
//     Retry-After for a second), and the node Config.BatchesInFlight (503
//     with Retry-After beyond), both taken before the batch's body is
//     read, so that memory follows the batches resolved, not those sent;
//   - the queries of all batches together are resolved on at most half
//     the cores (batchCores), so that single searches, which take no such
//     slot, always have the other half.

// batchRetryAfter is the Retry-After, in seconds, of a batch refused for
// want of a slot: most batches of 1,000 queries are answered within it.
const batchRetryAfter = 5

// Refusal reasons of a batch, the label of the metric.
const (
	batchRefusedClient = "client"
	batchRefusedNode   = "node"
)

// batchCores is how many batch queries are resolved at once on the node:
// half the cores, at least one.
func batchCores() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// admitBatch takes the client address's batch slot and one of the node's,
// or answers rate_limited (the address has a batch running) or
// service_unavailable (the node resolves as many as it takes), each with
// Retry-After. release gives the slots back; calls after the first do
// nothing.
func (s *Server) admitBatch(c *fiber.Ctx) (release func(), err error) {
	client := s.clientIP(c)
	clientFull, nodeFull := s.batches.take(client, true)
	switch {
	case clientFull:
		return nil, s.refuseBatch(c, batchRefusedClient, companydocs.Refusal(companydocs.ERATELIMITED, "refusal.batch_running", companydocs.Args{"seconds": batchRetryAfter}))
	case nodeFull:
		return nil, s.refuseBatch(c, batchRefusedNode, companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.server_batches_full", companydocs.Args{"max": s.batches.total, "seconds": batchRetryAfter}))
	}
	var once sync.Once
	return func() { once.Do(func() { s.batches.release(client) }) }, nil
}

func (s *Server) refuseBatch(c *fiber.Ctx, reason string, err error) error {
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(batchRetryAfter))
	c.Context().SetConnectionClose() // the body, unread, is no next request
	s.Metrics.ObserveBatchRefused(reason)
	return err
}
