//go:build resources

package resources

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/httpapi"
	"companydocs/internal/e2e"
)

// uploadPath is the upload route of an order.
func uploadPath(orderID string) string { return "/api/v1/operator/orders/" + orderID + "/document" }

// rawUploadHead is the request line and headers of an upload announcing
// length bytes, with token's session when token is not empty.
func rawUploadHead(orderID, token string, length int) string {
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	return fmt.Sprintf("PUT %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/pdf\r\n%sContent-Length: %d\r\n\r\n", uploadPath(orderID), auth, length)
}

// TestResourcesUnauthenticatedUploads: 120 connections without a session
// each announce a 20 MiB upload, send 5 bytes and stay open for a few
// seconds. The server must answer each 401 (or close it) before reading
// the body, and hold no announced body in memory: before the fix it
// raised the body limit from the request line alone and fasthttp
// allocated each announced body at once.
func TestResourcesUnauthenticatedUploads(t *testing.T) {
	s := startResourceServer(t, "")
	const conns, hold = 120, 4 * time.Second
	var statuses map[int]int
	s.underAttack(t, "unauthenticated uploads", func() {
		raw := rawUploadHead("ord_00000000000000000000000000", "", 20<<20) + "%PDF-"
		statuses = holdRequests(t, conns, uploadAttacker, s.addr(), raw, time.Now().Add(hold), 0)
	})
	t.Logf("answers to %d unauthenticated 20 MiB uploads: %v (0: closed without an answer, -1: no answer within %v)", conns, statuses, hold)
	// All come from one address: those over the connection cap per
	// address are refused 503 before their request is read, the others
	// 401 before their body is.
	for status, n := range statuses {
		if status != http.StatusUnauthorized && status != 0 && status != http.StatusServiceUnavailable {
			t.Errorf("%d unauthenticated uploads got %d, want 401, a closed connection or 503 over the connection cap", n, status)
		}
	}
	if statuses[http.StatusUnauthorized] == 0 || statuses[http.StatusServiceUnavailable] > conns-min(conns, httpapi.DefaultMaxConnectionsPerAddr) {
		t.Errorf("%d answered 401 and %d 503: want 401 for the connections within the cap per address", statuses[http.StatusUnauthorized], statuses[http.StatusServiceUnavailable])
	}
}

// uploadAttacker is the loopback address the unauthenticated uploads come
// from, so that the connection cap per address falls on them, not on the
// bystander.
const uploadAttacker = "127.0.0.3"

// holdRequests sends raw on n connections at once (holdRequest) and
// counts the answers by status.
func holdRequests(t *testing.T, n int, local, addr, raw string, until time.Time, readBuffer int) map[int]int {
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status := holdRequest(t, local, addr, raw, until, readBuffer)
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}

// holdRequest dials addr from the loopback address local (with a receive
// buffer of readBuffer bytes when not 0), sends raw and reads the answer's
// status line and headers, then keeps the connection open, its body
// unread, until until, as an attacker does. It returns the status: 0 when
// the server closed the connection first, -1 when no answer came, -2
// when the dial failed.
func holdRequest(t *testing.T, local, addr, raw string, until time.Time, readBuffer int) int {
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	conn, err := dialer.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return -2
	}
	defer conn.Close()
	if readBuffer > 0 {
		conn.(*net.TCPConn).SetReadBuffer(readBuffer)
	}
	conn.SetDeadline(until)
	if _, err := conn.Write([]byte(raw)); err != nil {
		return 0
	}
	status := -1
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4<<10), nil)
	switch {
	case err == nil:
		status = resp.StatusCode
	case !isTimeoutErr(err):
		status = 0
	}
	time.Sleep(time.Until(until))
	return status
}

func isTimeoutErr(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// addr is the server's host:port.
func (s *resourceServer) addr() string { return strings.TrimPrefix(s.Base, "http://") }

// requestedOrders has account order n documents, which the operator pays
// and requests, and returns their ids.
func (s *resourceServer) requestedOrders(t *testing.T, account string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		var o struct{ ID string }
		if status := s.Post(t, "/api/v1/documents/orders", s.tokens[account], e2e.OrderJSON(s.profiles[10+i], "AD", "ad-single"), "", &o); status != http.StatusCreated {
			t.Fatalf("order %d: %d", i, status)
		}
		for _, action := range []string{"pay", "request"} {
			if status, body := s.Call(t, "POST", "/api/v1/operator/orders/"+o.ID+"/"+action, "application/json", s.tokens[e2e.CrashOperator], "", ""); status != http.StatusOK {
				t.Fatalf("%s %s: %d %s", action, o.ID, status, body)
			}
		}
		ids[i] = o.ID
	}
	return ids
}

// testPDFOf is a PDF of n bytes whose content depends on seed.
func testPDFOf(n int, seed string) []byte {
	pdf := append([]byte("%PDF-1.7\n% "+seed+"\n"), bytes.Repeat([]byte("a register printout "+seed+"\n"), n/20)...)
	return pdf[:n]
}

// TestResourcesUploadsInFlight: an operator starting more uploads at once
// than the node takes (--uploads-in-flight, 4 by default) gets 503 with
// Retry-After for the ones over the bound, at once, while the others
// hold their slots; the others, once their bodies arrive, are stored
// under their SHA-256 and download byte-identical.
func TestResourcesUploadsInFlight(t *testing.T) {
	s := startResourceServer(t, "")
	const bound, extra = 4, 2
	ids := s.requestedOrders(t, "crash-1", bound+extra)
	pdfs := make([][]byte, len(ids))
	conns := make([]net.Conn, len(ids))
	readers := make([]*bufio.Reader, len(ids))
	for i, id := range ids {
		pdfs[i] = testPDFOf(1<<20+i, id)
		c, err := net.DialTimeout("tcp", s.addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Headers and the first KiB; the rest waits until the refusals are in.
		if _, err := c.Write(append([]byte(rawUploadHead(id, s.tokens[e2e.CrashOperator], len(pdfs[i]))), pdfs[i][:1024]...)); err != nil {
			t.Fatal(err)
		}
		conns[i], readers[i] = c, bufio.NewReader(c)
	}
	var waiting []int
	refused := 0
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Second))
		resp, err := http.ReadResponse(readers[i], nil)
		switch {
		case err != nil && isTimeoutErr(err):
			waiting = append(waiting, i)
		case err != nil:
			t.Fatalf("upload %d: %v", i, err)
		case resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
			refused++
		default:
			t.Errorf("upload %d: %d (Retry-After %q), want 503 with Retry-After or no answer while its body is on its way", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if refused != extra || len(waiting) != bound {
		t.Fatalf("%d uploads refused, %d in flight; want %d and %d", refused, len(waiting), extra, bound)
	}
	for _, i := range waiting {
		conns[i].SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conns[i].Write(pdfs[i][1024:]); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(readers[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Status   string
			Document struct {
				SHA256 string
				Size   int
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&o)
		sum := sha256.Sum256(pdfs[i])
		if err != nil || resp.StatusCode != http.StatusOK || o.Document.SHA256 != hex.EncodeToString(sum[:]) || o.Document.Size != len(pdfs[i]) {
			t.Fatalf("upload %d: %d %+v (%v), want 200 with SHA-256 %x", i, resp.StatusCode, o, err, sum)
		}
		status, got := s.Call(t, "GET", "/api/v1/documents/orders/"+ids[i]+"/document", "", s.tokens["crash-1"], "", "")
		if status != http.StatusOK || !bytes.Equal(got, pdfs[i]) {
			t.Errorf("download of upload %d: %d, %d bytes, want the %d uploaded", i, status, len(got), len(pdfs[i]))
		}
	}
}
