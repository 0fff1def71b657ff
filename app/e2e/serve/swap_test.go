package serve

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/internal/realdata"
)

// onlyIn returns a live record of recs whose name occurs nowhere in old.
func onlyIn(tb testing.TB, recs, old []e2e.Record) e2e.Record {
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
	return e2e.Record{}
}

func generationExists(dir, id string) bool {
	_, err := os.Stat(filepath.Join(dir, "index", id))
	return err == nil
}

// TestHotSwapUnderLoad re-ingests while searches run: no search fails,
// the new generation is swapped in (a company only in the new input
// becomes findable), and old generations are pruned, keeping two.
func TestHotSwapUnderLoad(t *testing.T) {
	sample := e2e.SampleFile(t)
	fixtures := e2e.OffeneRegister(t, "fixtures_665.jsonl")
	dir := t.TempDir()
	oldRecs := e2e.ReadRecords(t, sample, 1000)
	first := e2e.MustBuild(t, dir, len(oldRecs), sample)
	s := e2e.StartServer(t, dir)
	newcomer := onlyIn(t, e2e.ReadRecords(t, fixtures, 665), oldRecs)
	if _, ok := e2e.FindByName(s.Search(t, newcomer.Name), newcomer.Name); ok {
		t.Fatalf("%q is found before the re-ingest", newcomer.Name)
	}
	var queries []string
	for _, r := range oldRecs[:50] {
		queries = append(queries, r.Name, r.Attributes.Office+" "+r.Attributes.Registrar)
	}
	queries = append(queries, newcomer.Name)

	ctx, stop := context.WithCancel(context.Background())
	load, wait := e2e.SearchLoad(ctx, s.Base, queries)
	start := time.Now()
	second := e2e.MustBuild(t, dir, 1500, fixtures, realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 1500))
	e2e.WaitFor(t, "the new company to be found", func() bool {
		_, ok := e2e.FindByName(s.Search(t, newcomer.Name), newcomer.Name)
		return ok
	})
	t.Logf("re-ingest of %d profiles and swap took %s", second.Profiles, time.Since(start).Round(time.Millisecond))
	stop()
	wait()
	t.Logf("%d searches answered during the re-ingest and swap, %d failed", load.Ok.Load(), load.Failed.Load())
	if load.Failed.Load() != 0 || load.Ok.Load() == 0 {
		t.Fatalf("%d searches failed during the swap (%d answered): %v", load.Failed.Load(), load.Ok.Load(), load.Failures)
	}
	if id, n, _ := s.Live.Current(); id != second.ID || n != second.Profiles {
		t.Errorf("serving %s (%d profiles), want %s (%d)", id, n, second.ID, second.Profiles)
	}
	if v, _ := s.Metric(t, "companydocs_index_generation_info", "generation", second.ID); v != 1 {
		t.Error("generation metric does not name the new generation")
	}
	if v, _ := s.Metric(t, "companydocs_index_swaps_total"); v != 1 {
		t.Errorf("swaps counted %v, want 1", v)
	}
	if !generationExists(dir, first.ID) {
		t.Fatal("the previous generation was removed at once; two are kept")
	}

	// Two more publishes: each removes the generation before its predecessor.
	third := e2e.MustBuild(t, dir, 300, fixtures)
	if generationExists(dir, first.ID) || !generationExists(dir, second.ID) {
		t.Errorf("after the third generation: first exists %v (want false), second exists %v (want true)",
			generationExists(dir, first.ID), generationExists(dir, second.ID))
	}
	e2e.WaitFor(t, "the third generation to be served", func() bool { id, _, _ := s.Live.Current(); return id == third.ID })
	e2e.MustBuild(t, dir, 300, fixtures)
	if generationExists(dir, second.ID) || !generationExists(dir, third.ID) {
		t.Errorf("after the fourth generation: second exists %v (want false), third exists %v (want true)",
			generationExists(dir, second.ID), generationExists(dir, third.ID))
	}
}

// TestKilledIngestKeepsServing kills an ingest process midway: the server
// keeps serving the previous generation, and the next ingest cleans up the
// leftover build and publishes.
func TestKilledIngestKeepsServing(t *testing.T) {
	sample := e2e.SampleFile(t)
	dir := t.TempDir()
	oldRecs := e2e.ReadRecords(t, sample, 500)
	first := e2e.MustBuild(t, dir, len(oldRecs), sample)
	s := e2e.StartServer(t, dir)

	// The repository's 70,000 chunk lines take several seconds to ingest.
	cmd, _, stderr := e2e.IngestCommand(t, dir, realdata.Chunk(t, "ocdata.chunk1.jsonl.bz2", 20000), realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 50000))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, "the ingest to start building", func() bool { return len(e2e.LeftoverBuilds(t, dir)) > 0 })
	time.Sleep(2 * time.Second) // let it write part of the generation
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the ingest was not killed midway (%v); its log:\n%s", err, stderr.String())
	}
	if len(e2e.LeftoverBuilds(t, dir)) == 0 {
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
	if _, ok := e2e.FindByName(s.Search(t, oldRecs[0].Name), oldRecs[0].Name); !ok {
		t.Errorf("%q is no longer found after the killed ingest", oldRecs[0].Name)
	}
	s.MustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")

	next, stdout, stderr := e2e.IngestCommand(t, dir, "--max-records", "300", e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	if err := next.Run(); err != nil {
		t.Fatalf("the next ingest failed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), " is current in ") {
		t.Fatalf("the next ingest did not publish: %s", stdout.String())
	}
	if left := e2e.LeftoverBuilds(t, dir); len(left) != 0 {
		t.Errorf("leftover builds after the next ingest: %v", left)
	}
	cur, err := index.ReadCurrent(dir)
	if err != nil || cur == first.ID {
		t.Fatalf("CURRENT = %q, %v after the next ingest", cur, err)
	}
	e2e.WaitFor(t, "the server to swap in the new generation", func() bool { id, _, _ := s.Live.Current(); return id == cur })
}
