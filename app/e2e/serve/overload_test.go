package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
)

// searchAs sends one search from client with optional headers and returns
// the status, the Retry-After header, the error code and the latency.
func searchAs(t *testing.T, client *http.Client, base, query string, headers ...string) (int, string, string, time.Duration) {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/api/v1/documents/companies/search/", strings.NewReader(`{"query":`+strconv.Quote(query)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("search: %v", err)
		return 0, "", "", 0
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	elapsed := time.Since(start)
	var body struct {
		Error struct{ Code string }
	}
	json.Unmarshal(raw, &body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), body.Error.Code, elapsed
}

// overloadStats counts a client's answers.
type overloadStats struct {
	mu        sync.Mutex
	byStatus  map[int]int
	latencies []time.Duration
	bad       []string
}

func (s *overloadStats) add(status int, retryAfter, code string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byStatus == nil {
		s.byStatus = map[int]int{}
	}
	s.byStatus[status]++
	if status == http.StatusOK {
		s.latencies = append(s.latencies, d)
	}
	if status == http.StatusTooManyRequests {
		if n, err := strconv.Atoi(retryAfter); err != nil || n < 1 || code != companydocs.ERATELIMITED {
			s.bad = append(s.bad, fmt.Sprintf("429 with Retry-After %q code %q", retryAfter, code))
		}
	} else if status != http.StatusOK {
		s.bad = append(s.bad, fmt.Sprintf("status %d code %q", status, code))
	}
}

func (s *overloadStats) median() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.latencies) == 0 {
		return 0
	}
	l := slices.Clone(s.latencies)
	slices.Sort(l)
	return l[len(l)/2]
}

// TestOverloadIsolatesTheFloodingClient floods search from 127.0.0.1 at ten
// times the configured rate while 127.0.0.2 searches at half the rate: the
// flood gets rate_limited with Retry-After, the calm client gets every
// answer at its usual latency, and the server's memory stays bounded.
func TestOverloadIsolatesTheFloodingClient(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 0, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	s := e2e.StartServer(t, dir, "--search-rate", strconv.Itoa(e2e.OverloadRate), "--search-burst", strconv.Itoa(e2e.OverloadBurst))
	flood, calm := e2e.LoopbackClient(t, "127.0.0.1"), e2e.LoopbackClient(t, "127.0.0.2")
	queries := []string{"Rheinbahn Düsseldorf", "HRB 562 Düsseldorf", "Bau GmbH", "Müller", "Stadtwerke"}

	var baseline overloadStats
	for i := range e2e.OverloadBurst - 2 { // leaves the calm client budget for its pace
		baseline.add(searchAs(t, calm, s.Base, queries[i%len(queries)]))
	}
	heapBefore, _ := s.Metric(t, "go_memstats_heap_inuse_bytes")

	var flooded, calmed overloadStats
	var wg sync.WaitGroup
	stop := time.Now().Add(e2e.OverloadDuration)
	interval := time.Second / e2e.OverloadRate / e2e.OverloadFactor * e2e.OverloadWorkers
	for w := range e2e.OverloadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop) && i < 1000; i++ {
				flooded.add(searchAs(t, flood, s.Base, queries[(w+i)%len(queries)], "X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i%250)))
				time.Sleep(interval)
			}
		}()
	}
	for i := 0; time.Now().Before(stop) && i < 100; i++ {
		calmed.add(searchAs(t, calm, s.Base, queries[i%len(queries)]))
		time.Sleep(2 * time.Second / e2e.OverloadRate)
	}
	wg.Wait()
	heapAfter, _ := s.Metric(t, "go_memstats_heap_inuse_bytes")

	sent := 0
	for _, n := range flooded.byStatus {
		sent += n
	}
	allowed := e2e.OverloadBurst + e2e.OverloadRate*int(e2e.OverloadDuration/time.Second) + e2e.OverloadRate // one second of slack
	switch {
	case sent < e2e.OverloadRate*e2e.OverloadFactor:
		t.Errorf("the flood sent only %d searches", sent)
	case flooded.byStatus[http.StatusOK] > allowed:
		t.Errorf("the flooding client got %d answers, the budget allows %d (X-Forwarded-For must not make it several clients)", flooded.byStatus[http.StatusOK], allowed)
	case flooded.byStatus[http.StatusTooManyRequests] == 0:
		t.Error("the flooding client was never rate limited")
	}
	if len(flooded.bad) > 0 || len(calmed.bad) > 0 || len(baseline.bad) > 0 {
		t.Errorf("wrong answers: flood %v, calm %v, baseline %v", flooded.bad, calmed.bad, baseline.bad)
	}
	if calmed.byStatus[http.StatusOK] < 5 {
		t.Errorf("the calm client got %v", calmed.byStatus)
	}
	// Latency is not asserted tightly (no timed tests), only that the calm
	// client was not starved: its median stays within a wide margin.
	if m, b := calmed.median(), baseline.median(); m > 20*b+time.Second {
		t.Errorf("the calm client's median latency rose from %v to %v during the flood", b, m)
	}
	if growth := heapAfter - heapBefore; growth > 64<<20 {
		t.Errorf("heap in use grew by %.0f MB during the flood", growth/(1<<20))
	}
	if n, _ := s.Metric(t, "companydocs_search_rate_limited_total"); int(n) != flooded.byStatus[http.StatusTooManyRequests] {
		t.Errorf("rate-limited metric %v, the flood got %d", n, flooded.byStatus[http.StatusTooManyRequests])
	}
	t.Logf("overload: flood sent %d searches in %v (%v), calm client %v with median latency %v (alone %v), heap in use %+.1f MB",
		sent, e2e.OverloadDuration, flooded.byStatus, calmed.byStatus, calmed.median(), baseline.median(), (heapAfter-heapBefore)/(1<<20))
}

// TestForwardedForOnlyFromTrustedProxies: without --trusted-proxies the
// client address is the socket's, whatever X-Forwarded-For says; with it,
// X-Forwarded-For is believed from the proxy and only from the proxy.
func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	limit := []string{"--search-rate", "0.01", "--search-burst", "2"}

	t.Run("not configured", func(t *testing.T) {
		s := e2e.StartServer(t, dir, limit...)
		client := e2e.LoopbackClient(t, "127.0.0.1")
		statuses := xffSearches(t, client, s.Base, "198.51.100.1", "198.51.100.2", "198.51.100.3")
		if want := []int{200, 200, 429}; !slices.Equal(statuses, want) {
			t.Errorf("three searches with different X-Forwarded-For from one socket address: %v, want %v", statuses, want)
		}
		checkClientLogged(t, s, "127.0.0.1", "198.51.100.")
	})
	t.Run("trusted proxy", func(t *testing.T) {
		s := e2e.StartServer(t, dir, append(limit, "--trusted-proxies", "127.0.0.1")...)
		proxy, other := e2e.LoopbackClient(t, "127.0.0.1"), e2e.LoopbackClient(t, "127.0.0.2")
		statuses := xffSearches(t, proxy, s.Base, "198.51.100.1", "198.51.100.1", "198.51.100.1", "198.51.100.2")
		if want := []int{200, 200, 429, 200}; !slices.Equal(statuses, want) {
			t.Errorf("searches through the trusted proxy for two clients: %v, want %v", statuses, want)
		}
		// A client behind the proxy that sends its own X-Forwarded-For gets
		// the proxy's address for it appended: only that one counts.
		statuses = xffSearches(t, proxy, s.Base, "192.0.2.1, 198.51.100.7", "192.0.2.2, 198.51.100.7", "192.0.2.3,198.51.100.7")
		if want := []int{200, 200, 429}; !slices.Equal(statuses, want) {
			t.Errorf("searches of one client claiming three addresses in front of the proxy's: %v, want %v", statuses, want)
		}
		statuses = xffSearches(t, other, s.Base, "198.51.100.3", "198.51.100.4", "198.51.100.5")
		if want := []int{200, 200, 429}; !slices.Equal(statuses, want) {
			t.Errorf("searches from an untrusted address claiming three clients: %v, want %v", statuses, want)
		}
		checkClientLogged(t, s, "198.51.100.1", "198.51.100.3")
		checkClientLogged(t, s, "198.51.100.7", "192.0.2.")
	})
}

func xffSearches(t *testing.T, client *http.Client, base string, forwarded ...string) []int {
	t.Helper()
	var out []int
	for _, xff := range forwarded {
		status, _, _, _ := searchAs(t, client, base, "Rheinbahn", "X-Forwarded-For", xff)
		out = append(out, status)
	}
	return out
}

// checkClientLogged checks that some request log line names client want,
// and none names client never.
func checkClientLogged(t *testing.T, s *e2e.TestServer, want, never string) {
	t.Helper()
	found := false
	for _, l := range requestLogs(t, s.Logs.String()) {
		c, _ := l["client"].(string)
		found = found || c == want
		if strings.HasPrefix(c, never) {
			t.Errorf("request logged for client %q, which only a header claimed", c)
		}
	}
	if !found {
		t.Errorf("no request logged for client %s", want)
	}
}
