package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"companydocs/index"

	"companydocs/internal/realdata"
)

// Bounds of the search load that runs during a re-ingest.
const (
	loadWorkers     = 3
	loadMaxRequests = 4000 // per worker
	loadPause       = 2 * time.Millisecond
)

// loadResult counts the answers of a search load.
type loadResult struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	failures   []string
}

func (r *loadResult) fail(msg string) {
	r.failed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.failures) < 5 {
		r.failures = append(r.failures, msg)
	}
}

// searchLoad sends searches for queries from a few workers until ctx ends
// or each worker has sent loadMaxRequests. Every answer must be 200 with a
// candidates list.
func searchLoad(ctx context.Context, base string, queries []string) (*loadResult, func()) {
	res := &loadResult{}
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for w := 0; w < loadWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < loadMaxRequests && ctx.Err() == nil; i++ {
				q := queries[(w*7+i)%len(queries)]
				searchOnce(client, base, q, res)
				time.Sleep(loadPause)
			}
		}()
	}
	return res, wg.Wait
}

func searchOnce(client *http.Client, base, query string, res *loadResult) {
	body, _ := json.Marshal(map[string]string{"query": query})
	resp, err := client.Post(base+"/api/v1/documents/companies/search/", "application/json", bytes.NewReader(body))
	if err != nil {
		res.fail(err.Error())
		return
	}
	defer resp.Body.Close()
	var out struct {
		Candidates []json.RawMessage `json:"candidates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Candidates == nil {
		res.fail(resp.Status)
		return
	}
	res.ok.Add(1)
}

// onlyIn returns a live record of recs whose name occurs nowhere in old.
func onlyIn(tb testing.TB, recs, old []record) record {
	tb.Helper()
	names := map[string]bool{}
	for _, r := range old {
		names[strings.ToLower(r.Name)] = true
	}
	for _, r := range recs {
		if r.CurrentStatus == "currently registered" && len(r.Name) > 12 && !names[strings.ToLower(r.Name)] {
			return r
		}
	}
	tb.Fatal("every fixture name is in the first generation")
	return record{}
}

// waitFor polls cond every 50 ms, at most 20 s.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("gave up waiting for %s", what)
}

func generationExists(dir, id string) bool {
	_, err := os.Stat(filepath.Join(dir, "index", id))
	return err == nil
}

// TestHotSwapUnderLoad re-ingests while searches run: no search fails,
// the new generation is swapped in (a company only in the new input
// becomes findable), and old generations are pruned, keeping two.
func TestHotSwapUnderLoad(t *testing.T) {
	sample := sampleFile(t)
	fixtures := offeneRegister(t, "fixtures_665.jsonl")
	dir := t.TempDir()
	oldRecs := readRecords(t, sample, 1000)
	first := mustBuild(t, dir, len(oldRecs), sample)
	s := startServer(t, dir)
	newcomer := onlyIn(t, readRecords(t, fixtures, 665), oldRecs)
	if _, ok := findByName(s.search(t, newcomer.Name), newcomer.Name); ok {
		t.Fatalf("%q is found before the re-ingest", newcomer.Name)
	}
	var queries []string
	for _, r := range oldRecs[:50] {
		queries = append(queries, r.Name, r.Attributes.Office+" "+r.Attributes.Registrar)
	}
	queries = append(queries, newcomer.Name)

	ctx, stop := context.WithCancel(context.Background())
	load, wait := searchLoad(ctx, s.base, queries)
	start := time.Now()
	second := mustBuild(t, dir, 1500, fixtures, realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 1500))
	waitFor(t, "the new company to be found", func() bool {
		_, ok := findByName(s.search(t, newcomer.Name), newcomer.Name)
		return ok
	})
	t.Logf("re-ingest of %d profiles and swap took %s", second.Profiles, time.Since(start).Round(time.Millisecond))
	stop()
	wait()
	t.Logf("%d searches answered during the re-ingest and swap, %d failed", load.ok.Load(), load.failed.Load())
	if load.failed.Load() != 0 || load.ok.Load() == 0 {
		t.Fatalf("%d searches failed during the swap (%d answered): %v", load.failed.Load(), load.ok.Load(), load.failures)
	}
	if id, n, _ := s.Live.Current(); id != second.ID || n != second.Profiles {
		t.Errorf("serving %s (%d profiles), want %s (%d)", id, n, second.ID, second.Profiles)
	}
	if v, _ := s.metric(t, "companydocs_index_generation_info", "generation", second.ID); v != 1 {
		t.Error("generation metric does not name the new generation")
	}
	if v, _ := s.metric(t, "companydocs_index_swaps_total"); v != 1 {
		t.Errorf("swaps counted %v, want 1", v)
	}
	if !generationExists(dir, first.ID) {
		t.Fatal("the previous generation was removed at once; two are kept")
	}

	// Two more publishes: each removes the generation before its predecessor.
	third := mustBuild(t, dir, 300, fixtures)
	if generationExists(dir, first.ID) || !generationExists(dir, second.ID) {
		t.Errorf("after the third generation: first exists %v (want false), second exists %v (want true)",
			generationExists(dir, first.ID), generationExists(dir, second.ID))
	}
	waitFor(t, "the third generation to be served", func() bool { id, _, _ := s.Live.Current(); return id == third.ID })
	mustBuild(t, dir, 300, fixtures)
	if generationExists(dir, second.ID) || !generationExists(dir, third.ID) {
		t.Errorf("after the fourth generation: second exists %v (want false), third exists %v (want true)",
			generationExists(dir, second.ID), generationExists(dir, third.ID))
	}
}

// ingestCommand runs "companydocs ingest" as a separate process (this test
// binary, acting as the companydocs binary through TestMain).
func ingestCommand(t *testing.T, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"ingest", "--data-dir", dir, "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stdout, stderr := &bytes.Buffer{}, &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

func leftoverBuilds(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "index", ".building-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}

// TestKilledIngestKeepsServing kills an ingest process midway: the server
// keeps serving the previous generation, and the next ingest cleans up the
// leftover build and publishes.
func TestKilledIngestKeepsServing(t *testing.T) {
	sample := sampleFile(t)
	dir := t.TempDir()
	oldRecs := readRecords(t, sample, 500)
	first := mustBuild(t, dir, len(oldRecs), sample)
	s := startServer(t, dir)

	// The repository's 70,000 chunk lines take several seconds to ingest.
	cmd, _, stderr := ingestCommand(t, dir, realdata.Chunk(t, "ocdata.chunk1.jsonl.bz2", 20000), realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 50000))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ingest to start building", func() bool { return len(leftoverBuilds(t, dir)) > 0 })
	time.Sleep(2 * time.Second) // let it write part of the generation
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the ingest was not killed midway (%v); its log:\n%s", err, stderr.String())
	}
	if len(leftoverBuilds(t, dir)) == 0 {
		t.Fatal("the killed ingest left no partial build: it was not midway")
	}

	if cur, err := index.ReadCurrent(dir); err != nil || cur != first.ID {
		t.Fatalf("CURRENT = %q, %v after the kill; want %s", cur, err, first.ID)
	}
	if err := s.Live.Reload(); err != nil {
		t.Fatalf("reload after the kill: %v", err)
	}
	if id, _, _ := s.Live.Current(); id != first.ID {
		t.Fatalf("serving %s after the kill, want %s", id, first.ID)
	}
	if _, ok := findByName(s.search(t, oldRecs[0].Name), oldRecs[0].Name); !ok {
		t.Errorf("%q is no longer found after the killed ingest", oldRecs[0].Name)
	}
	s.mustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")

	next, stdout, stderr := ingestCommand(t, dir, "--max-records", "300", offeneRegister(t, "fixtures_665.jsonl"))
	if err := next.Run(); err != nil {
		t.Fatalf("the next ingest failed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), " is current in ") {
		t.Fatalf("the next ingest did not publish: %s", stdout.String())
	}
	if left := leftoverBuilds(t, dir); len(left) != 0 {
		t.Errorf("leftover builds after the next ingest: %v", left)
	}
	cur, err := index.ReadCurrent(dir)
	if err != nil || cur == first.ID {
		t.Fatalf("CURRENT = %q, %v after the next ingest", cur, err)
	}
	waitFor(t, "the server to swap in the new generation", func() bool { id, _, _ := s.Live.Current(); return id == cur })
}
