//go:build !race

package crash

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/internal/realdata"
)

// TestResolveResumesAfterKill kills a resolve process (SIGKILL) in the
// middle of a run of 1,000 real rows, resumes it with --resume, and
// compares the file with an uninterrupted run's, byte for byte. A file
// cut in the middle of a row resumes to the same bytes as well.
func TestResolveResumesAfterKill(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 1000, 7))
	args := []string{"resolve", "--data-dir", dir, "--query", "Firma", "--city", "Ort", "--register", "Registernummer", "--workers", "2"}

	whole := filepath.Join(tmp, "whole.csv")
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", whole, in)...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d, %s", code, line)
	}
	want, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}

	killed := filepath.Join(tmp, "killed.csv")
	cmd, _, stderr := e2e.CompanydocsCommand(t, append(args, "--output", killed, in)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for e2e.Lines(killed) < 200 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	before := e2e.Lines(killed)
	if before < 200 || before >= 1000 {
		t.Fatalf("killed with %d lines written, want a run killed midway (stderr %s)", before, stderr)
	}
	t.Logf("killed with %d lines of 1,001 written", before)
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", killed, "--resume", in)...); code != 0 {
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
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", torn, "--resume", in)...); code != 0 {
		t.Fatalf("resume of a torn file: exit %d, %s", code, line)
	}
	if got, _ := os.ReadFile(torn); !bytes.Equal(got, want) {
		t.Errorf("resumed a file cut in the middle of a row: %d bytes, want the uninterrupted run's %d", len(got), len(want))
	}

	other := filepath.Join(tmp, "other.csv")
	e2e.WriteSheet(t, other, ',', false, [][]string{{"Name", "Seat"}, {recs[0].Name, recs[0].Attributes.Office}})
	if _, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Name", "--output", torn, "--resume", other); code != 2 || !strings.Contains(line, "was not written by this command from this input") {
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
	dir, recs := e2e.SampleSheet(t)
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
			clue := e2e.RegisterClue(r)
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
		var out e2e.CountingWriter
		_, _, line, code := e2e.RunCLIOut(t, &out, "resolve", "--data-dir", dir, "--query", "Clue", "--city", "Ort", path)
		close(stop)
		<-sampled
		if code != 0 {
			t.Fatalf("%d rows: exit %d, %s", n, code, line)
		}
		if out.Lines != n+1 {
			t.Fatalf("%d rows: %d lines written", n, out.Lines)
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
	sample := e2e.SampleFile(t)
	dir := t.TempDir()
	first := e2e.MustBuild(t, dir, 2000, sample)

	cmd, _, stderr := e2e.IngestCommand(t, dir, realdata.Chunk(t, "ocdata.chunk1.jsonl.bz2", 20000), realdata.Chunk(t, "ocdata.chunk13.jsonl.bz2", 50000))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e2e.WaitForLong(t, "the ingest to write its change record", func() bool {
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

	next := e2e.MustBuild(t, dir, 300, sample)
	if next.Changes == nil || next.Changes.Previous != first.ID {
		t.Fatalf("the next ingest compared with %+v, want %s", next.Changes, first.ID)
	}
	if left := e2e.LeftoverBuilds(t, dir); len(left) != 0 {
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
	for _, line := range e2e.SampleLines(t, 3*e2e.CrashWatches) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	var watched []map[string]any
	ids := map[string]bool{}
	for _, r := range recs {
		id := e2e.ProfileIDOfRecord(t, r)
		if e2e.Orderable(r) && !ids[id] && len(watched) < e2e.CrashWatches {
			ids[id] = true
			watched = append(watched, r)
		}
	}
	if len(watched) < e2e.CrashWatches {
		t.Fatalf("only %d watchable records", len(watched))
	}
	dir := t.TempDir()
	var cases []e2e.WatchCase
	edits := map[string]func(map[string]any){}
	for i, r := range watched {
		name := fmt.Sprint("c", i)
		cases = append(cases, e2e.WatchCase{Name: name, Record: r})
		edits[name] = func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " i.L.") }
	}
	e2e.WriteGeneration(t, dir, recs, cases, nil)
	keys := e2e.StoreAccounts(t, dir, 1)
	plans := filepath.Join(t.TempDir(), "plans.json")
	os.WriteFile(plans, fmt.Appendf(nil, `{"plans":[{"id":"sub","name":"Subscription","kind":"subscription","document_types":["AD","CD"],"currency":"EUR","price":"0.00","credit_cost":1,"watch_limit":%d}]}`, e2e.CrashWatches), 0o644)
	flags := []string{"--plans", plans, "--poll-interval", "50ms"}
	s := e2e.StartCrashServer(t, dir, flags...)
	token := s.Login(t, keys)["store-0"]
	rcv := e2e.NewReceiver(t)
	e2e.NodeRegister(t, s, rcv, token, "/hook")
	e2e.WatchConcurrently(t, s, token, watched)

	s.Kill(t)
	s = e2e.StartCrashServer(t, dir, append(flags, "--log-level", "debug")...) // logs each committed page
	genB := e2e.WriteGeneration(t, dir, recs, cases, edits)
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.Stderr.String(), "watch comparison committed") && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	s.Kill(t)
	behind := e2e.WatchesBehind(t, dir, genB)
	t.Logf("killed with %d of %d watches not yet compared with %s", behind, len(watched), genB)
	if behind == 0 {
		t.Fatal("the kill came after the comparison had finished; it must land in the middle of it")
	}

	s = e2e.StartCrashServer(t, dir, flags...)
	byWatch := map[string]string{} // watch id -> webhook-id
	e2e.Eventually(t, "an event per watch", func() bool {
		for _, h := range rcv.Delivered("/hook") {
			w := fmt.Sprint(h.Order["watch_id"])
			if prev, ok := byWatch[w]; ok && prev != h.ID {
				t.Fatalf("watch %s: two events, %s and %s", w, prev, h.ID)
			}
			byWatch[w] = h.ID
		}
		return len(byWatch) >= len(watched)
	})
	time.Sleep(time.Second)
	if n := len(byWatch); n != len(watched) {
		t.Errorf("%d watches had an event, want %d", n, len(watched))
	}
	s.Kill(t)
	e2e.MigrateWatches(t, dir, len(watched))
}

// TestCrashSafety kills the real binary with SIGKILL at random moments
// while clients create and cancel orders, an operator pays, requests,
// delivers (uploading PDFs), fails and cancels them, and webhook
// deliveries to a receiver on 127.0.0.1 are under way. After every kill it
// checks the order database the killed process left against itself and
// against what the clients were told: every acknowledged order exists
// exactly once, an Idempotency-Key never made two orders, every
// acknowledged transition is in its order's history, refunds were made
// once and balances add up, delivered orders' files exist with their
// hash, and the database passes ordering's Check. At the end a server
// that is not killed delivers what is left, and the receiver must have
// seen every committed event (one per history entry) with a valid
// signature. Last, "store migrate" copies the orders.db the last kill
// left (events not yet delivered included) into PostgreSQL, where a server
// answers as a server on orders.db did.
func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, e2e.CrashRecords, e2e.SampleFile(t))
	profiles := e2e.CrashProfiles(t, e2e.CrashRecords)
	keys := e2e.CrashCreateAccounts(t, dir)
	rcv := newCrashReceiver(t)
	j := newCrashJournal()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 8))

	srv := e2e.StartCrashServer(t, dir)
	srv.RegisterWebhooks(t, rcv, keys)
	srv.Kill(t)
	for kill := 1; kill <= e2e.CrashKills; kill++ {
		srv := e2e.StartCrashServer(t, dir)
		burst := time.Duration(rng.Int64N(int64(e2e.CrashMaxBurst)))
		if kill%6 == 0 {
			burst = time.Duration(rng.Int64N(int64(5 * time.Millisecond))) // right after start
		}
		crashLoad(t, j, []*e2e.CrashServer{srv}, 0, srv.Login(t, keys), profiles, rng.Uint64(), burst, nil)
		srv.Kill(t)
		crashCheck(t, dir, j)
		if t.Failed() {
			t.Fatalf("after kill %d: %s", kill, strings.Join(j.Failures, "\n"))
		}
	}
	// A last start retries whatever is still pending; the one after it
	// makes no requests and must deliver every event that is left.
	srv = e2e.StartCrashServer(t, dir)
	crashLoad(t, j, []*e2e.CrashServer{srv}, 0, srv.Login(t, keys), profiles, rng.Uint64(), 0, nil)
	srv.Kill(t)
	orders := crashCheck(t, dir, j)
	undelivered := e2e.CopyOrdersDB(t, dir) // for store migrate, with its outbox and pending deliveries
	srv = e2e.StartCrashServer(t, dir)
	drain := time.Now()
	rcv.WaitForAll(t, orders)
	t.Logf("the last server delivered the remaining events in %v", time.Since(drain).Round(time.Millisecond))
	srv.Kill(t)
	stored := len(crashCheck(t, dir, j))
	if len(j.Failures) > 0 {
		t.Fatalf("client-side failures:\n%s", strings.Join(j.Failures, "\n"))
	}
	if j.Created < e2e.CrashKills || j.Moved < e2e.CrashKills {
		t.Errorf("only %d orders were created and %d transitions made over %d kills: the load did not reach the store", j.Created, j.Moved, e2e.CrashKills)
	}
	r := rcv.Report()
	t.Logf("crash safety: %d kills survived, %d orders stored and checked, %d acknowledged with 201, %d duplicate answers, %d key retries, %d refusals, %d creates cut off by a kill; "+
		"%d transitions acknowledged (%d uploads), %d refused as already moved, %d cut off; "+
		"%d events delivered to 2 endpoints (%d distinct, %d duplicates, %d answered 500 and retried)",
		e2e.CrashKills, stored, j.Created, j.Duplicates, j.Retried, j.Refused, j.Lost,
		j.Moved, len(j.Uploads), j.Conflicts, j.MovesLost, r.Delivered, r.Distinct, r.Duplicates, r.Refused)
	e2e.MigrateCrashDatabase(t, dir, undelivered, keys)
}

// TestCrashSafetyPostgres is TestCrashSafety with two nodes on one
// PostgreSQL database: two real "serve --store" processes, each with its
// own data directory, take creates with and without Idempotency-Keys and
// transitions (every request goes to a random node), deliver webhooks to
// the receiver, and one of the two, at random, is killed with SIGKILL at a
// random moment and started again, crashPGKills times; once, mid-load,
// PostgreSQL itself is killed and started again (answers meanwhile are
// 503, outcome unknown, and keyed creates are retried). Afterwards every
// acknowledged order and transition is stored exactly once, balances add
// up, the store passes its check, and a last node delivers every
// committed event. Deliveries with a PDF are left out: each node keeps
// PDFs in its own data directory, so a node would refuse to start on
// another node's documents.
func TestCrashSafetyPostgres(t *testing.T) {
	ctx := context.Background()
	cluster, url := e2e.StartTestCluster(t)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	e2e.MustBuild(t, dirs[0], e2e.CrashRecords, e2e.SampleFile(t))
	if out, err := exec.Command("cp", "-a", dirs[0]+"/.", dirs[1]).CombinedOutput(); err != nil {
		t.Fatalf("copy the data directory: %v %s", err, out)
	}
	profiles := e2e.CrashProfiles(t, e2e.CrashRecords)
	keys := e2e.CrashCreateAccountsIn(t, url)
	rcv := newCrashReceiver(t)
	j := newCrashJournal()
	j.Unknown503 = true
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	start := func(i int) *e2e.CrashServer {
		return e2e.StartCrashServer(t, dirs[i], "--store", url, "--store-pool-size", crashPGPoolSize, "--store-statement-timeout", crashPGStatement)
	}

	nodes := [2]*e2e.CrashServer{start(0), start(1)}
	nodes[0].RegisterWebhooks(t, rcv, keys)
	tokens := nodes[0].Login(t, keys) // sessions are shared: one token serves on both nodes
	began := time.Now()
	for kill := 1; kill <= crashPGKills; kill++ {
		victim := rng.IntN(2)
		burst := time.Duration(rng.Int64N(int64(e2e.CrashMaxBurst)))
		if kill%6 == 0 {
			burst = time.Duration(rng.Int64N(int64(5 * time.Millisecond)))
		}
		var outage func()
		if kill == crashPGOutageAt {
			burst = e2e.CrashMaxBurst + crashPGOutage
			outage = func() { crashPostgres(t, ctx, cluster) }
		}
		crashLoad(t, j, nodes[:], victim, tokens, profiles, rng.Uint64(), burst, outage)
		nodes[victim].Kill(t)
		if len(j.Failures) > 0 {
			t.Fatalf("after kill %d: %s", kill, strings.Join(j.Failures, "\n"))
		}
		nodes[victim] = start(victim)
	}
	// Retry what is pending on a quiet system, then stop both nodes and
	// check; a last node delivers every event that is left.
	crashLoad(t, j, nodes[:], -1, tokens, profiles, rng.Uint64(), 0, nil)
	nodes[0].Kill(t)
	nodes[1].Kill(t)
	loaded := time.Since(began)
	orders := crashCheckPostgres(t, url, dirs[0], j)
	last := start(1)
	drain := time.Now()
	rcv.WaitForAll(t, orders)
	drained := time.Since(drain)
	last.Kill(t)
	stored := len(crashCheckPostgres(t, url, dirs[0], j))
	if len(j.Failures) > 0 {
		t.Fatalf("client-side failures:\n%s", strings.Join(j.Failures, "\n"))
	}
	if j.Unavailable == 0 {
		t.Errorf("no request was answered 503 while PostgreSQL was down: the outage did not meet the load")
	}
	if j.Created < crashPGKills || j.Moved < crashPGKills {
		t.Errorf("only %d orders were created and %d transitions made over %d kills: the load did not reach the store", j.Created, j.Moved, crashPGKills)
	}
	r := rcv.Report()
	t.Logf("crash safety on PostgreSQL, two nodes: %d kills and 1 PostgreSQL crash survived in %v, %d orders stored and checked, %d acknowledged with 201, "+
		"%d duplicate answers, %d key retries, %d refusals, %d creates cut off by a kill or the outage; %d transitions acknowledged, %d refused as already moved, %d cut off; %d answers 503 during the outage; "+
		"%d events delivered to 2 endpoints (%d distinct, %d duplicates, %d answered 500 and retried); the last node delivered the rest in %v",
		crashPGKills, loaded.Round(time.Second), stored, j.Created, j.Duplicates, j.Retried, j.Refused, j.Lost,
		j.Moved, j.Conflicts, j.MovesLost, j.Unavailable, r.Delivered, r.Distinct, r.Duplicates, r.Refused, drained.Round(time.Millisecond))
}
