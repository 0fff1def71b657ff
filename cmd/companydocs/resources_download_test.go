//go:build resources

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
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
	statuses := map[int]int{}
	var mu sync.Mutex
	s.underAttack(t, "slow downloads on PostgreSQL", func() {
		until := time.Now().Add(hold)
		var wg sync.WaitGroup
		for range conns {
			wg.Go(func() {
				status := stallDownload(t, s.addr(), raw, until)
				mu.Lock()
				statuses[status]++
				mu.Unlock()
			})
		}
		wg.Wait()
	})
	t.Logf("answers to %d slow downloads of one account: %v (-1: no answer within %v)", conns, statuses, hold)
	if statuses[http.StatusOK] > 4 || statuses[http.StatusTooManyRequests] < conns-4 {
		t.Errorf("%d downloads of one account were sent at once and %d refused; want at most 4 sent and the rest 429", statuses[http.StatusOK], statuses[http.StatusTooManyRequests])
	}
}

// stallDownload sends raw on a connection with a small receive buffer,
// reads the answer's status line and headers, then stops reading until
// until, as a slow client does. It returns the status (-1: none came).
func stallDownload(t *testing.T, addr, raw string, until time.Time) int {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Error(err)
		return -2
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	conn.SetDeadline(until)
	if _, err := conn.Write([]byte(raw)); err != nil {
		return 0
	}
	status := -1
	if resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil); err == nil {
		status = resp.StatusCode
	}
	time.Sleep(time.Until(until)) // stall with the body unread
	return status
}
