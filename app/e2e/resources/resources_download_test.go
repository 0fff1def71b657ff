//go:build resources

package resources

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/internal/bench"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"
)

// Slow downloads: downloadAttackers client accounts, each with its own
// delivered 20 MiB PDF, open downloadConns downloads at once from the
// loopback addresses downloadAddrs, read a few bytes now and then and
// keep reading until the write timeout has cut them off; downloadRounds
// times. Each account may have 4 downloads in flight (429 beyond), the
// node 32 (503 beyond): 10 accounts fill the node's slots. The accounts
// stay under 64 connections per address, so that every request reaches
// the download bounds.
const (
	downloadAttackers = 10
	downloadConns     = 120
	downloadRounds    = 3
	downloadSize      = 20 << 20
	// downloadHold is how long an attacker keeps a download open: past
	// the server's write timeout (10 s), which cuts it off.
	downloadHold = 12 * time.Second
	// downloadRatchet bounds the server's resident memory after a round,
	// every socket closed, above where it was before the attack.
	downloadRatchet = 50_000_000
	// downloadNodeSlots is the node's bound, --downloads-in-flight.
	downloadNodeSlots = 32
)

// downloadAddrs are the loopback addresses the slow downloads come from,
// so that the connection cap per address falls on them, not on the
// bystander.
var downloadAddrs = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}

// TestResourcesSlowDownloads: on each store, 10 attacker accounts open
// 120 downloads of their 20 MiB PDFs at once, three rounds, each
// download read a few bytes at a time until the write timeout cuts it
// off. The server runs at its default log level, as deployed. Before the
// fix the request log's size of the answer (fasthttp's Response.Body)
// read each PDF whole into a pooled 20 MiB buffer and closed the stream,
// giving the download's slot back before a byte was sent: most downloads
// were sent at once, and the buffers stayed in the pool after the
// sockets had closed. Now at most 32 are sent at once, each holding a
// copy buffer (and 32 KiB of a chunk on PostgreSQL), and the resident
// memory after every round, every socket closed, is within 50 MB of
// where it was before the attack.
func TestResourcesSlowDownloads(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) { slowDownloads(t, "") })
	t.Run("postgres", func(t *testing.T) {
		_, url := e2e.StartTestCluster(t)
		slowDownloads(t, url)
	})
}

func slowDownloads(t *testing.T, storeURL string) {
	s := startResourceServerWith(t, storeURL, downloadAttackers, "--log-level", "info")
	var raws []string
	for i := range downloadAttackers {
		account := attackerAccount(i)
		id := s.requestedOrders(t, account, 1)[0]
		if status, body := s.Call(t, "PUT", uploadPath(id), "application/pdf", s.tokens[e2e.CrashOperator], string(testPDFOf(downloadSize, id)), ""); status != http.StatusOK {
			t.Fatalf("delivery to %s: %d %s", account, status, body)
		}
		raws = append(raws, fmt.Sprintf("GET /api/v1/documents/orders/%s/document HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n", id, s.tokens[account]))
	}
	scenario := "slow downloads on " + storeName(storeURL)
	s.underAttack(t, scenario, func() {
		// The bystander alone first, as long as a round: its searches'
		// garbage fills the heap to the GC's target (GOGC 800, gc.go)
		// whether or not anyone downloads, so "before" is taken there.
		idle := s.heapFigures(t)
		time.Sleep(downloadHold)
		before := s.heapFigures(t)
		t.Logf("the bystander alone: %s; %v later, before the attack: %s", idle, downloadHold, before)
		for round := 1; round <= downloadRounds; round++ {
			statuses := slowDownloadRound(t, s.addr(), raws)
			after := s.heapFigures(t)
			t.Logf("round %d: answers %v; every socket closed: %s", round, statuses, after)
			s.checkDownloadAnswers(t, round, statuses)
			if grown := after.RSS - before.RSS; grown > downloadRatchet {
				t.Errorf("round %d: the server's resident memory grew by %s to %s after every socket had closed, over the %d MB allowed",
					round, bench.MiB(grown), bench.MiB(after.RSS), downloadRatchet/1_000_000)
			}
		}
	})
}

func storeName(storeURL string) string {
	if storeURL == "" {
		return "orders.db"
	}
	return "PostgreSQL"
}

// attackerAccount names the i-th account startResourceServerWith adds.
func attackerAccount(i int) string { return fmt.Sprintf("attacker-%d", i) }

// checkDownloadAnswers holds a round's answers to the bounds: at most 32
// downloads sent (the node's slots; 4 per account), every other one
// refused 429 or 503.
func (s *resourceServer) checkDownloadAnswers(t *testing.T, round int, statuses map[int]int) {
	t.Helper()
	sent, refused := statuses[http.StatusOK], statuses[http.StatusTooManyRequests]+statuses[http.StatusServiceUnavailable]
	if sent > downloadNodeSlots || sent+refused != downloadConns {
		t.Errorf("round %d: of %d downloads %d were sent at once and %d refused (429 or 503); want at most %d sent and the rest refused",
			round, downloadConns, sent, refused, downloadNodeSlots)
	}
}

// slowDownloadRound opens downloadConns downloads at once, spread over
// the requests raws (one per account) and downloadAddrs, and returns the
// count of each answer's status once every connection has closed.
func slowDownloadRound(t *testing.T, addr string, raws []string) map[int]int {
	until := time.Now().Add(downloadHold)
	statuses := map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range downloadConns {
		wg.Go(func() {
			status := slowDownload(t, downloadAddrs[i%len(downloadAddrs)], addr, raws[i%len(raws)], until)
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return statuses
}

// slowDownload dials addr from local with a small receive buffer, sends
// raw and reads the answer 64 bytes at a time, 20 ms apart, until the
// server closes the connection or until passes. It returns the status,
// -1 when no answer came, -2 when the dial failed.
func slowDownload(t *testing.T, local, addr, raw string, until time.Time) int {
	dialer := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	conn, err := dialer.Dial("tcp", addr)
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
	r := bufio.NewReaderSize(conn, 64)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return -1
	}
	buf := make([]byte, 64)
	for {
		if _, err := resp.Body.Read(buf); err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Until(until))
	return resp.StatusCode
}

// heapFigures is the server's resident memory, in all, anonymous (the
// Go heap, stacks) and mapped from files (the index, orders.db), and
// figures of its Go runtime.
type heapFigures struct {
	bench.ProcMemory
	Anon, File int64 // RssAnon, RssFile
	// HeapInuse, HeapIdle and HeapReleased are go_memstats_heap_*_bytes;
	// Allocated is go_memstats_alloc_bytes_total, GCs
	// go_gc_duration_seconds_count.
	HeapInuse, HeapIdle, HeapReleased, Allocated, GCs int64
}

func (f heapFigures) String() string {
	return fmt.Sprintf("resident %s (peak %s; anonymous %s, files %s), heap in use %s, idle %s of which released %s; %s allocated since the start, %d GCs",
		bench.MiB(f.RSS), bench.MiB(f.Peak), bench.MiB(f.Anon), bench.MiB(f.File), bench.MiB(f.HeapInuse), bench.MiB(f.HeapIdle), bench.MiB(f.HeapReleased), bench.MiB(f.Allocated), f.GCs)
}

// heapFigures reads the server's memory from /proc and the runtime's
// figures from its /metrics.
func (s *resourceServer) heapFigures(t *testing.T) heapFigures {
	t.Helper()
	f := heapFigures{ProcMemory: s.memory(t)}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "RssAnon":
			f.Anon = kib << 10
		case "RssFile":
			f.File = kib << 10
		}
	}
	resp, err := http.Get(s.Base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_memstats_heap_inuse_bytes":
			f.HeapInuse = int64(v)
		case "go_memstats_heap_idle_bytes":
			f.HeapIdle = int64(v)
		case "go_memstats_heap_released_bytes":
			f.HeapReleased = int64(v)
		case "go_memstats_alloc_bytes_total":
			f.Allocated = int64(v)
		case "go_gc_duration_seconds_count":
			f.GCs = int64(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return f
}

// createClients creates the client accounts names in the order store
// of dir (storeURL empty) or of storeURL, while no server runs, and
// returns their API keys.
func createClients(t *testing.T, dir, storeURL string, names []string) map[string]string {
	t.Helper()
	var accounts *ordering.Accounts
	if storeURL == "" {
		svc, _ := e2e.OpenOrderService(t, dir, ordering.Options{})
		defer svc.Close()
		accounts = svc.Accounts
	} else {
		db, err := postgres.Open(context.Background(), storeURL, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		accounts = ordering.NewAccounts(db, ordering.Options{SweepInterval: -1})
		defer accounts.Close()
	}
	keys := map[string]string{}
	for _, name := range names {
		key, err := accounts.CreateAccount(name, e2e.CrashCredits)
		if err != nil {
			t.Fatal(err)
		}
		keys[name] = key
	}
	return keys
}
