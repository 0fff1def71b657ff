//go:build resources

package resources

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/httpapi"
	"companydocs/internal/e2e"
)

// connAttackAddrs are the loopback addresses the connection attack comes
// from: together they ask for more connections than the server holds.
const (
	connAttackAddrs   = 20
	connAttackPerAddr = 200
	connAttackHold    = 3 * time.Second
)

// TestResourcesIdleConnections opens 200 idle connections from each of 20
// loopback addresses (4,000 in all) and holds them, while a bystander on
// 127.0.0.1 searches and previews on its kept-alive connection. Each
// address gets at most httpapi.DefaultMaxConnectionsPerAddr connections and
// the server at most httpapi.DefaultMaxConnections; every connection over
// a cap is answered 503 service_unavailable with Retry-After, in the error
// shape, and closed. Before the caps every connection was held.
func TestResourcesIdleConnections(t *testing.T) {
	s := startResourceServer(t, "")
	var (
		mu       sync.Mutex
		held     []net.Conn
		refused  int
		failures []string
	)
	s.underAttack(t, "4,000 idle connections from 20 addresses", func() {
		var wg sync.WaitGroup
		for a := range connAttackAddrs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				conns, n, errs := openIdle(s.Base, fmt.Sprintf("127.0.0.%d", a+2), connAttackPerAddr)
				mu.Lock()
				held, refused, failures = append(held, conns...), refused+n, append(failures, errs...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		time.Sleep(connAttackHold)
	})
	t.Logf("connections held %d, refused %d", len(held), refused)
	for _, c := range held {
		c.Close()
	}
	if len(failures) > 0 {
		t.Errorf("%d connections over a cap were not refused in the error shape; first: %s", len(failures), failures[0])
	}
	want := min(connAttackAddrs*httpapi.DefaultMaxConnectionsPerAddr, httpapi.DefaultMaxConnections-2) // the bystander holds up to 2
	if len(held) < want-2 || len(held) > want {
		t.Errorf("the server held %d attacking connections, want %d (per address %d, in all %d)", len(held), want, httpapi.DefaultMaxConnectionsPerAddr, httpapi.DefaultMaxConnections)
	}
	if refused+len(held)+len(failures) != connAttackAddrs*connAttackPerAddr {
		t.Errorf("held %d + refused %d + failed %d is not the %d connections opened", len(held), refused, len(failures), connAttackAddrs*connAttackPerAddr)
	}
	if v, _ := metricFrom(t, s.Base, "companydocs_http_connections_refused_total"); int(v) != refused {
		t.Errorf("companydocs_http_connections_refused_total is %v, want %d", v, refused)
	}
}

// openIdle opens n connections from the loopback address local at once
// and returns those the server kept (no answer within 2 s after the last dial) and
// the count of those it refused with 503 service_unavailable and
// Retry-After; a refusal of another shape is a failure. The connections
// are opened well within the server's read timeout (10 s), after which it
// closes a connection that sent nothing.
func openIdle(base, local string, n int) (held []net.Conn, refused int, failures []string) {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	addr := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	for range n {
		c, err := dialer.Dial("tcp", addr)
		if err != nil {
			failures = append(failures, fmt.Sprintf("dial from %s: %v", local, err))
			continue
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(2 * time.Second)
	type outcome struct {
		failure  string
		answered bool
	}
	outcomes := make([]outcome, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(deadline)
			outcomes[i].failure, outcomes[i].answered = readRefusal(c)
		}()
	}
	wg.Wait()
	for i, o := range outcomes {
		switch {
		case !o.answered:
			conns[i].SetReadDeadline(time.Time{})
			held = append(held, conns[i])
		case o.failure != "":
			failures = append(failures, "from "+local+": "+o.failure)
		default:
			refused++
		}
	}
	return held, refused, failures
}

// readRefusal reads what the server answered on a connection that sent
// nothing: answered is false when nothing came before the deadline;
// failure describes an answer that is not the refusal of a connection
// over a cap. An answered connection is closed.
func readRefusal(c net.Conn) (failure string, answered bool) {
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return "", false
	}
	defer c.Close()
	if err != nil {
		return err.Error(), true
	}
	defer resp.Body.Close()
	var body struct{ Error struct{ Code string } }
	err = json.NewDecoder(resp.Body).Decode(&body)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || body.Error.Code != companydocs.EUNAVAILABLE {
		return fmt.Sprintf("status %d, Retry-After %q, code %q, %v", resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Code, err), true
	}
	return "", true
}

// metricFrom reads one metric's value from the server's /metrics.
func metricFrom(t *testing.T, base, name string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return e2e.MetricIn(b.String(), name)
}
