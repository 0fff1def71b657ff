//go:build resources

package resources

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/internal/bench"
	"companydocs/internal/e2e"
)

// The resource scenarios (make test-resources) attack the real binary on
// 127.0.0.1 at the scale of the probe that found each weakness, and hold
// the server to these bounds meanwhile. They build only with the tag
// "resources": each takes tens of seconds and measures the process's
// resident memory, which the race detector of make test would multiply.
const (
	// resourceMaxRSS bounds the server's peak resident memory (VmHWM),
	// from start to the end of the attack.
	resourceMaxRSS = 400 << 20
	// resourceSlowdown bounds a bystander's p99 under attack, as a
	// multiple of its idle p99.
	resourceSlowdown = 3
	// resourceIdleFloor is the least idle p99 the slowdown multiplies: a
	// p99 below it on a shared two-core machine is scheduling noise.
	resourceIdleFloor = 5 * time.Millisecond
	// resourceRecords is the size of the served generation.
	resourceRecords = 500
	// resourceSamples is how many search and preview pairs the idle
	// measurement takes.
	resourceSamples = 200
)

// resourceServer is the real binary serving a sample generation, with a
// bystander account whose searches and previews are timed while an
// attacker works on the server.
type resourceServer struct {
	*e2e.CrashServer
	dir      string
	keys     map[string]string // API keys by account name (e2e.CrashCreateAccounts)
	tokens   map[string]string // session tokens by account name
	profiles []string          // orderable profile ids of the generation
}

// bystanderAccount is the account whose latency is watched; the other
// accounts of e2e.CrashCreateAccounts and e2e.CrashOperator are free for the
// attack.
const bystanderAccount = "crash-0"

// startResourceServer builds a generation, creates the crash test's
// accounts (in the PostgreSQL database storeURL when it is not empty)
// and starts the server with extra flags.
func startResourceServer(t *testing.T, storeURL string, extra ...string) *resourceServer {
	t.Helper()
	return startResourceServerWith(t, storeURL, 0, extra...)
}

// startResourceServerWith is startResourceServer with attackers more
// client accounts, named by attackerAccount.
func startResourceServerWith(t *testing.T, storeURL string, attackers int, extra ...string) *resourceServer {
	t.Helper()
	dir := t.TempDir()
	e2e.MustBuild(t, dir, resourceRecords, e2e.SampleFile(t))
	var keys map[string]string
	if storeURL == "" {
		keys = e2e.CrashCreateAccounts(t, dir)
	} else {
		keys = e2e.CrashCreateAccountsIn(t, storeURL)
		extra = append([]string{"--store", storeURL}, extra...)
	}
	var names []string
	for i := range attackers {
		names = append(names, attackerAccount(i))
	}
	maps.Copy(keys, createClients(t, dir, storeURL, names))
	srv := e2e.StartCrashServer(t, dir, extra...)
	t.Cleanup(func() { srv.Kill(t) })
	return &resourceServer{CrashServer: srv, dir: dir, keys: keys, tokens: srv.Login(t, keys), profiles: e2e.CrashProfiles(t, resourceRecords)}
}

// memory is the server process's resident memory now and at its peak.
func (s *resourceServer) memory(t *testing.T) bench.ProcMemory {
	t.Helper()
	m, err := bench.ReadProcMemory(s.Cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkPeakMemory fails the test when the server's peak resident memory
// passed resourceMaxRSS, and logs it.
func (s *resourceServer) checkPeakMemory(t *testing.T, scenario string) {
	t.Helper()
	m := s.memory(t)
	t.Logf("%s: server resident memory %s now, %s at its peak (bound %s)", scenario, bench.MiB(m.RSS), bench.MiB(m.Peak), bench.MiB(resourceMaxRSS))
	if m.Peak > resourceMaxRSS {
		t.Errorf("%s: the server's resident memory peaked at %s, over the bound of %s", scenario, bench.MiB(m.Peak), bench.MiB(resourceMaxRSS))
	}
}

// latencies are a bystander's timed requests of one kind.
type latencies struct {
	took     []time.Duration
	failures []string // 5xx answers and transport errors
}

func (l *latencies) p99() time.Duration {
	if len(l.took) == 0 {
		return 0
	}
	s := slices.Clone(l.took)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// bystander times one search and one preview after another, as the
// bystander account, until stop.
type bystander struct {
	s                *resourceServer
	client           *http.Client
	mu               sync.Mutex
	search, preview  latencies
	stopped, stopAck chan struct{}
}

func (s *resourceServer) newBystander() *bystander {
	return &bystander{s: s, client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2}}}
}

// once times one search and one preview.
func (b *bystander) once(i int) {
	profile := b.s.profiles[i%len(b.s.profiles)]
	b.time(&b.search, "POST", "/api/v1/documents/companies/search/", "", `{"query":"`+bystanderQueries[i%len(bystanderQueries)]+`"}`)
	b.time(&b.preview, "POST", "/api/v1/documents/orders/preview/", b.s.tokens[bystanderAccount],
		`{"company_profile_id":"`+profile+`","document_type":"AD","plan_id":"ad-single"}`)
}

// bystanderQueries are real clues of the sample: a name, a register
// reference, a city.
var bystanderQueries = []string{"Rheinbahn", "HRB 6684 München", "Bäckerei Köln", "Müller GmbH"}

func (b *bystander) time(l *latencies, method, path, token, body string) {
	req, err := http.NewRequestWithContext(context.Background(), method, b.s.Base+path, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	began := time.Now()
	resp, err := b.client.Do(req)
	took := time.Since(began)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case err != nil:
		l.failures = append(l.failures, fmt.Sprintf("%s %s: %v", method, path, err))
	case resp.StatusCode >= 500:
		l.failures = append(l.failures, fmt.Sprintf("%s %s: status %d", method, path, resp.StatusCode))
	}
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	l.took = append(l.took, took)
}

// idle measures the bystander's p99 on a quiet server.
func (b *bystander) idle(t *testing.T) (search, preview time.Duration) {
	t.Helper()
	for i := range resourceSamples {
		b.once(i)
	}
	b.checkNoFailures(t, "idle")
	search, preview = b.search.p99(), b.preview.p99()
	b.search, b.preview = latencies{}, latencies{}
	return search, preview
}

// start times requests in the background until stop.
func (b *bystander) start() {
	b.stopped, b.stopAck = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.stopAck)
		for i := 0; ; i++ {
			select {
			case <-b.stopped:
				return
			default:
				b.once(i)
				time.Sleep(5 * time.Millisecond)
			}
		}
	}()
}

func (b *bystander) stop() {
	close(b.stopped)
	<-b.stopAck
}

func (b *bystander) checkNoFailures(t *testing.T, when string) {
	t.Helper()
	for _, l := range []*latencies{&b.search, &b.preview} {
		if n := len(l.failures); n > 0 {
			t.Errorf("%s: the bystander got %d failures, first %s", when, n, l.failures[0])
		}
	}
}

// underAttack runs attack while the bystander's searches and previews
// are timed, and fails the test when their p99 passes resourceSlowdown
// times the idle p99 (at least resourceIdleFloor), when one failed or
// got a 5xx, or when the server's peak memory passed resourceMaxRSS.
func (s *resourceServer) underAttack(t *testing.T, scenario string, attack func()) {
	t.Helper()
	b := s.newBystander()
	idleSearch, idlePreview := b.idle(t)
	b.start()
	attack()
	b.stop()
	b.checkNoFailures(t, scenario)
	for _, k := range []struct {
		kind string
		idle time.Duration
		l    *latencies
	}{{"search", idleSearch, &b.search}, {"preview", idlePreview, &b.preview}} {
		bound := resourceSlowdown * max(k.idle, resourceIdleFloor)
		t.Logf("%s: bystander %s p99 %v idle, %v under attack over %d requests (bound %v)", scenario, k.kind, k.idle, k.l.p99(), len(k.l.took), bound)
		if len(k.l.took) < 10 {
			t.Errorf("%s: the bystander made only %d %s requests during the attack", scenario, len(k.l.took), k.kind)
		}
		if k.l.p99() > bound {
			t.Errorf("%s: the bystander's %s p99 rose to %v under attack, over %v (%d times the idle %v)", scenario, k.kind, k.l.p99(), bound, resourceSlowdown, k.idle)
		}
	}
	s.checkPeakMemory(t, scenario)
}
