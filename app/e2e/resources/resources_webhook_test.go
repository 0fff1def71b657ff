//go:build resources

package resources

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/bench"
	"companydocs/internal/e2e"
	"companydocs/internal/rawhttp"
	"companydocs/ordering"
)

// Bounds of the endless-headers scenario: the probe registered 70
// endpoints on one receiver that answers every attempt with header lines
// that never end.
const (
	floodEndpoints = 70
	floodAttack    = 25 * time.Second
	// floodOrderEvery is how often each attacking client creates an
	// order, each fanned out to its 10 endpoints and the operator's 10:
	// 6 clients make about 80 orders, so that the operator's endpoints
	// get fewer deliveries than the deliveries route shows (100).
	floodOrderEvery = 2 * time.Second
	// floodConnLimit ends a receiver connection the dispatcher never
	// closes (a bound on the test, not an assertion).
	floodConnLimit = 40 * time.Second
	// floodRetryBase is the server's first retry delay: the attacker
	// chooses endpoints and events, the server the pace of retries (30 s
	// in production; the crash tests' 20 ms would make the scenario
	// measure bbolt commits of 600 attempts a second). At 1 s every
	// delivery is still retried several times during the attack.
	floodRetryBase = "1s"
)

// floodAccounts are the attackers beside the crash test's accounts: with
// crash-1, crash-2 and the operator, seven accounts of 10 endpoints.
var floodAccounts = []string{"flood-0", "flood-1", "flood-2", "flood-3"}

// TestResourcesEndlessWebhookHeaders: 70 endpoints on a receiver that
// answers every attempt with "HTTP/1.1 200 OK" and then endless 1 KiB
// header lines, and orders created for 25 s so that every endpoint gets
// attempt after attempt. The dispatcher's attempts in flight
// (--webhook-workers) each read at most 4 KiB of headers, so the server
// stays small and the bystander fast; each endpoint's deliveries show
// the failed attempts and why.
func TestResourcesEndlessWebhookHeaders(t *testing.T) {
	s := startFloodServer(t)
	flood := startHeaderFlood(t)
	endpoints := s.registerFloodEndpoints(t, flood.url())
	var orders, refused int
	s.underAttack(t, "endless webhook headers", func() {
		orders, refused = s.orderForFloodAccounts(t, floodAttack)
	})
	s.checkFloodDeliveries(t, endpoints) // while the flood still answers
	conns, written := flood.stop()
	t.Logf("endless webhook headers: %d orders created (%d refused), %d attempts reached the receiver, %s of headers written to them",
		orders, refused, conns, bench.MiB(written))
	if orders == 0 || conns < floodEndpoints {
		t.Errorf("the attack made %d orders and %d attempts, too few to reach every endpoint", orders, conns)
	}
}

// startFloodServer starts the resource scenarios' server with the flood
// accounts created beside the crash test's.
func startFloodServer(t *testing.T) *resourceServer {
	t.Helper()
	dir := t.TempDir()
	e2e.MustBuild(t, dir, resourceRecords, e2e.SampleFile(t))
	keys := e2e.CrashCreateAccounts(t, dir)
	svc, _ := e2e.OpenOrderService(t, dir, ordering.Options{})
	for _, name := range floodAccounts {
		key, err := svc.CreateAccount(name, e2e.CrashCredits)
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = key
	}
	svc.Close()
	srv := e2e.StartCrashServer(t, dir, "--webhook-retry-base", floodRetryBase)
	t.Cleanup(func() { srv.Kill(t) })
	return &resourceServer{CrashServer: srv, dir: dir, keys: keys, tokens: srv.Login(t, keys), profiles: e2e.CrashProfiles(t, resourceRecords)}
}

// floodAttackers are the accounts whose endpoints point at the flood;
// all but the operator create orders.
func floodAttackers() []string {
	return append([]string{"crash-1", "crash-2", e2e.CrashOperator}, floodAccounts...)
}

// headerFlood is a receiver on 127.0.0.1 that answers every request
// with a status line and header lines that never end, until the sender
// closes the connection.
type headerFlood struct {
	ln      net.Listener
	done    chan struct{}
	conns   sync.WaitGroup
	n       atomic.Int64 // connections accepted
	written atomic.Int64 // header bytes written
}

func startHeaderFlood(t *testing.T) *headerFlood {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &headerFlood{ln: ln, done: make(chan struct{})}
	go f.accept()
	t.Cleanup(func() { f.stop() })
	return f
}

func (f *headerFlood) url() string { return "http://" + f.ln.Addr().String() }

func (f *headerFlood) accept() {
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.n.Add(1)
		f.conns.Go(func() { f.answer(conn) })
	}
}

// answer sends "200 OK" and 1 KiB header lines until writing fails (the
// sender gave up), the flood stops or floodConnLimit passes.
func (f *headerFlood) answer(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(floodConnLimit))
	// A small send buffer keeps the receiver's own work (it shares the
	// machine's cores with the server) to about what the sender reads.
	conn.(*net.TCPConn).SetWriteBuffer(8 << 10)
	if !rawhttp.ReadRequestHead(conn) {
		return
	}
	go io.Copy(io.Discard, conn) // the body
	pad := strings.Repeat("p", 1024)
	if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\n"); err != nil {
		return
	}
	for i := 0; ; i++ {
		select {
		case <-f.done:
			return
		default:
		}
		n, err := io.WriteString(conn, "X-Pad-"+strconv.Itoa(i)+": "+pad+"\r\n")
		f.written.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// stop ends the flood and returns the connections accepted and the
// header bytes written.
func (f *headerFlood) stop() (conns, written int64) {
	select {
	case <-f.done:
	default:
		close(f.done)
		f.ln.Close()
	}
	f.conns.Wait()
	return f.n.Load(), f.written.Load()
}

// registerFloodEndpoints registers 10 endpoints per attacker on the
// flood and returns their ids by account.
func (s *resourceServer) registerFloodEndpoints(t *testing.T, base string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, account := range floodAttackers() {
		for i := range ordering.MaxWebhooksPerAccount {
			var ep companydocs.WebhookEndpoint
			body := fmt.Sprintf(`{"url":%q}`, fmt.Sprintf("%s/%s/%d", base, account, i))
			if status := s.Post(t, "/api/v1/webhooks/", s.tokens[account], body, "", &ep); status != http.StatusCreated {
				t.Fatalf("register endpoint %d of %s: status %d", i, account, status)
			}
			out[account] = append(out[account], ep.ID)
		}
	}
	if n := len(floodAttackers()) * ordering.MaxWebhooksPerAccount; n != floodEndpoints {
		t.Fatalf("%d endpoints registered, want %d", n, floodEndpoints)
	}
	return out
}

// orderForFloodAccounts has every attacking client create an order each
// floodOrderEvery until d has passed, and returns how many were created
// and refused.
func (s *resourceServer) orderForFloodAccounts(t *testing.T, d time.Duration) (created, refused int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	tick := time.NewTicker(floodOrderEvery)
	defer tick.Stop()
	for i := 0; ; i++ {
		for _, account := range floodAttackers() {
			if account == e2e.CrashOperator {
				continue
			}
			p := e2e.CrashPlans[i%2] // the one-off AD and CD plans: no credits
			body := e2e.OrderJSON(s.profiles[(i/2)%len(s.profiles)], p.Doc, p.Plan)
			switch status := s.Post(t, "/api/v1/documents/orders/", s.tokens[account], body, "", &struct{}{}); status {
			case http.StatusCreated:
				created++
			default:
				refused++
			}
		}
		select {
		case <-ctx.Done():
			return created, refused
		case <-tick.C:
		}
	}
}

// checkFloodDeliveries wants every endpoint to show deliveries whose
// attempts failed, each saying the headers passed the cap.
func (s *resourceServer) checkFloodDeliveries(t *testing.T, endpoints map[string][]string) {
	t.Helper()
	const reason = "headers were longer than 4096 bytes"
	attempts := 0
	for account, ids := range endpoints {
		for _, id := range ids {
			var out struct{ Deliveries []companydocs.WebhookDelivery }
			if status := s.Send(t, "GET", "/api/v1/webhooks/"+id+"/deliveries/", "", s.tokens[account], "", "", &out); status != http.StatusOK {
				t.Fatalf("deliveries of %s: status %d", id, status)
			}
			ds := out.Deliveries
			n, other := 0, ""
			for _, d := range ds {
				for _, a := range d.Attempts {
					n++
					if (!strings.Contains(a.Error, reason) || d.State == companydocs.DeliveryDelivered) && other == "" {
						other = fmt.Sprintf("%s: %+v", d.State, a)
					}
				}
			}
			attempts += n
			if n == 0 || other != "" {
				t.Errorf("endpoint %s of %s: %d deliveries, %d attempts; want failed attempts saying %q, got %s", id, account, len(ds), n, reason, other)
			}
		}
	}
	t.Logf("endless webhook headers: %d failed attempts shown in the deliveries of %d endpoints", attempts, floodEndpoints)
}
