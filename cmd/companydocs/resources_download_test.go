//go:build resources

package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"companydocs/httpapi"
)

// TestResourcesSlowDownloadsPostgres: on PostgreSQL, an attacker account
// opens 120 downloads of its own 20 MiB PDF at once, reads a few bytes of
// each and stalls. Before the fix each download read the PDF whole into
// the node's memory inside a pooled connection's transaction: the node
// grew by GBs and the pool ran dry, so that other accounts waited or got
// 503. Now the account may have 4 downloads in flight (429 beyond), each
// holds one 256 KiB chunk and no connection while its client stalls.
func TestResourcesSlowDownloadsPostgres(t *testing.T) {
	_, url := startTestCluster(t)
	s := startResourceServer(t, url)
	const attacker, conns, hold = "crash-1", 120, 5 * time.Second
	id := s.requestedOrders(t, attacker, 1)[0]
	pdf := testPDFOf(20<<20, id)
	if status, body := s.call(t, "PUT", uploadPath(id), "application/pdf", s.tokens[crashOperator], string(pdf), ""); status != http.StatusOK {
		t.Fatalf("delivery: %d %s", status, body)
	}
	raw := fmt.Sprintf("GET /api/v1/documents/orders/%s/document HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", id, s.tokens[attacker])
	var statuses map[int]int
	s.underAttack(t, "slow downloads on PostgreSQL", func() {
		statuses = holdRequests(t, conns, downloadAttacker, s.addr(), raw, time.Now().Add(hold), 4<<10)
	})
	t.Logf("answers to %d slow downloads of one account: %v (-1: no answer within %v)", conns, statuses, hold)
	// The connections past the cap per address are refused before their
	// request is read (503); those within it are the account's downloads.
	within := min(conns, httpapi.DefaultMaxConnectionsPerAddr)
	if statuses[http.StatusOK] > 4 || statuses[http.StatusOK]+statuses[http.StatusTooManyRequests] != within || statuses[http.StatusServiceUnavailable] != conns-within {
		t.Errorf("of %d downloads of one account from one address, %d were sent at once, %d refused 429 and %d refused 503; want at most 4 sent, the rest of the first %d refused 429, and the %d over the connection cap 503",
			conns, statuses[http.StatusOK], statuses[http.StatusTooManyRequests], statuses[http.StatusServiceUnavailable], within, conns-within)
	}
}

// downloadAttacker is the loopback address the slow downloads come from,
// so that the connection cap per address falls on them, not on the
// bystander.
const downloadAttacker = "127.0.0.2"
