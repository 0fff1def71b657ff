//go:build !race

package main

// The tests here kill or measure real processes: a killed run that must
// resume, an ingest killed while it writes its change record, a node
// killed in the middle of comparing watches, the resident memory of a
// long run. Under the race detector every process they start is
// instrumented and takes minutes, and a memory figure means nothing, so
// make test runs them apart, without it.

import (
	"bytes"
	"companydocs/index"
	"companydocs/internal/realdata"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestResolveResumesAfterKill kills a resolve process (SIGKILL) in the
// middle of a run of 1,000 real rows, resumes it with --resume, and
// compares the file with an uninterrupted run's, byte for byte. A file
// cut in the middle of a row resumes to the same bytes as well.
func TestResolveResumesAfterKill(t *testing.T) {
	dir, recs := sampleSheet(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	writeSheet(t, in, ',', false, germanExcelRows(recs, 1000, 7))
	args := []string{"resolve", "--data-dir", dir, "--query", "Firma", "--city", "Ort", "--register", "Registernummer", "--workers", "2"}

	whole := filepath.Join(tmp, "whole.csv")
	if _, _, line, code := runCLI(t, append(args, "--output", whole, in)...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d, %s", code, line)
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}

	killed := filepath.Join(tmp, "killed.csv")
	cmd, _, stderr := companydocsCommand(t, append(args, "--output", killed, in)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for lines(killed) < 200 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := lines(killed)
	if before < 200 || before >= 1000 {
		t.Fatalf("killed with %d lines written, want a run killed midway (stderr %s)", before, stderr)
	}
	t.Logf("killed with %d lines of 1,001 written", before)
	if _, _, line, code := runCLI(t, append(args, "--output", killed, "--resume", in)...); code != 0 {
		t.Fatalf("resume: exit %d, %s", code, line)
	}
	if got, _ := os.ReadFile(killed); !bytes.Equal(got, want) {
		t.Errorf("resumed after a kill at %d lines: %d bytes, want the uninterrupted run's %d bytes", before, len(got), len(want))
	}

	torn := filepath.Join(tmp, "torn.csv")
	cut := bytes.Index(want[len(want)/2:], []byte("\n")) + len(want)/2 + 20
	if err := os.WriteFile(torn, want[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, line, code := runCLI(t, append(args, "--output", torn, "--resume", in)...); code != 0 {
		t.Fatalf("resume of a torn file: exit %d, %s", code, line)
	}
	if got, _ := os.ReadFile(torn); !bytes.Equal(got, want) {
		t.Errorf("resumed a file cut in the middle of a row: %d bytes, want the uninterrupted run's %d", len(got), len(want))
	}

	other := filepath.Join(tmp, "other.csv")
	writeSheet(t, other, ',', false, [][]string{{"Name", "Seat"}, {recs[0].Name, recs[0].Attributes.Office}})
	if _, _, line, code := runCLI(t, "resolve", "--data-dir", dir, "--query", "Name", "--output", torn, "--resume", other); code != 2 || !strings.Contains(line, "was not written by this command from this input") {
		t.Errorf("resume from an input of other columns: exit %d, %q; want a usage error", code, line)
	}
}

// TestResolveMemoryIsFlat resolves 10,000 and then 100,000 rows built
// from the real records of the embedded sample (their names, seats and
// register entries; most rows give the register entry as the clue, one
// in fifty the name) and samples the heap in use: the peak of the long
// run stays within the short run's and a fixed bound, since rows stream
// through a bounded pipeline.
func TestResolveMemoryIsFlat(t *testing.T) {
	dir, recs := sampleSheet(t)
	peak := func(n int) uint64 {
		path := filepath.Join(t.TempDir(), "rows.csv")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.Write([]string{"Clue", "Name", "Ort"})
		for i := range n {
			r := recs[i%len(recs)]
			clue := registerClue(r)
			if i%50 == 0 || clue == "" {
				clue = r.Name
			}
			w.Write([]string{clue, r.Name, r.Attributes.Office})
		}
		w.Flush()
		f.Close()
		runtime.GC()
		var high atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > high.Load() {
					high.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		}()
		var out countingWriter
		_, _, line, code := runCLIOut(t, &out, "resolve", "--data-dir", dir, "--query", "Clue", "--city", "Ort", path)
		close(stop)
		<-sampled
		if code != 0 {
			t.Fatalf("%d rows: exit %d, %s", n, code, line)
		}
		if out.lines != n+1 {
			t.Fatalf("%d rows: %d lines written", n, out.lines)
		}
		return high.Load()
	}
	short, long := peak(10_000), peak(100_000)
	t.Logf("heap in use, peak: %.1f MB for 10,000 rows, %.1f MB for 100,000 rows", float64(short)/(1<<20), float64(long)/(1<<20))
	if long > short*3/2+(8<<20) || long > 96<<20 {
		t.Errorf("heap peak %.1f MB for 100,000 rows against %.1f MB for 10,000: memory grows with the input", float64(long)/(1<<20), float64(short)/(1<<20))
	}
}

// TestKilledIngestLeavesNoHalfChangeRecord kills an ingest once its change
// record exists in the build directory: no published generation has a
// change record that is not whole, and the next ingest compares with the
// generation that was current.
func TestKilledIngestLeavesNoHalfChangeRecord(t *testing.T) {
	sample := sampleFile(t)
	dir := t.TempDir()
	first := mustBuild(t, dir, 2000, sample)

	cmd, _, stderr := ingestCommand(t, dir, realdata.Chunk(t, "ocdata.chunk1.jsonl.bz2", 20000), realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 50000))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLong(t, "the ingest to write its change record", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "index", ".building-*", "changes.db"))
		return len(m) > 0
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the ingest was not killed while recording changes (%v); its log:\n%s", err, stderr.String())
	}
	if cur, err := index.ReadCurrent(dir); err != nil || cur != first.ID {
		t.Fatalf("CURRENT = %q, %v after the kill; want %s", cur, err, first.ID)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "index", "gen-*"))
	for _, name := range names {
		g, err := index.Open(name)
		if err != nil {
			t.Fatalf("published generation %s: %v", filepath.Base(name), err)
		}
		if _, err := g.Changes(); err != nil {
			t.Errorf("change record of published generation %s: %v", filepath.Base(name), err)
		}
		g.Close()
	}

	next := mustBuild(t, dir, 300, sample)
	if next.Changes == nil || next.Changes.Previous != first.ID {
		t.Fatalf("the next ingest compared with %+v, want %s", next.Changes, first.ID)
	}
	if left := leftoverBuilds(t, dir); len(left) != 0 {
		t.Errorf("leftover builds after the next ingest: %v", left)
	}
}

// TestWatchesSurviveSIGKILL: the node is killed while it compares 1,200
// watches with a generation that changes every watched company, as soon
// as the first event arrives; after the restart every watch has had
// exactly one event (one webhook-id per watch; a delivery cut off by the
// kill may come again under its webhook-id) and none is lost.
func TestWatchesSurviveSIGKILL(t *testing.T) {
	var recs []map[string]any
	for _, line := range sampleLines(t, 3*crashWatches) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	var watched []map[string]any
	ids := map[string]bool{}
	for _, r := range recs {
		id := profileIDOfRecord(t, r)
		if orderable(r) && !ids[id] && len(watched) < crashWatches {
			ids[id] = true
			watched = append(watched, r)
		}
	}
	if len(watched) < crashWatches {
		t.Fatalf("only %d watchable records", len(watched))
	}
	dir := t.TempDir()
	var cases []watchCase
	edits := map[string]func(map[string]any){}
	for i, r := range watched {
		name := fmt.Sprint("c", i)
		cases = append(cases, watchCase{name: name, record: r})
		edits[name] = func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " i.L.") }
	}
	writeGeneration(t, dir, recs, cases, nil)
	keys := storeAccounts(t, dir, 1)
	plans := filepath.Join(t.TempDir(), "plans.json")
	os.WriteFile(plans, fmt.Appendf(nil, `{"plans":[{"id":"sub","name":"Subscription","kind":"subscription","document_types":["AD","CD"],"currency":"EUR","price":"0.00","credit_cost":1,"watch_limit":%d}]}`, crashWatches), 0o644)
	flags := []string{"--plans", plans, "--poll-interval", "50ms"}
	s := startCrashServer(t, dir, flags...)
	token := s.login(t, keys)["store-0"]
	rcv := newReceiver(t)
	nodeRegister(t, s, rcv, token, "/hook")
	watchConcurrently(t, s, token, watched)

	s.kill(t)
	s = startCrashServer(t, dir, append(flags, "--log-level", "debug")...) // logs each committed page
	genB := writeGeneration(t, dir, recs, cases, edits)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.stderr.String(), "watch comparison committed") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.kill(t)
	behind := watchesBehind(t, dir, genB)
	t.Logf("killed with %d of %d watches not yet compared with %s", behind, len(watched), genB)
	if behind == 0 {
		t.Fatal("the kill came after the comparison had finished; it must land in the middle of it")
	}

	s = startCrashServer(t, dir, flags...)
	byWatch := map[string]string{} // watch id -> webhook-id
	eventually(t, "an event per watch", func() bool {
		for _, h := range rcv.delivered("/hook") {
			w := fmt.Sprint(h.order["watch_id"])
			if prev, ok := byWatch[w]; ok && prev != h.id {
				t.Fatalf("watch %s: two events, %s and %s", w, prev, h.id)
			}
			byWatch[w] = h.id
		}
		return len(byWatch) >= len(watched)
	})
	time.Sleep(time.Second)
	if n := len(byWatch); n != len(watched) {
		t.Errorf("%d watches had an event, want %d", n, len(watched))
	}
	s.kill(t)
	migrateWatches(t, dir, len(watched))
}
