package index

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// liveOn serves a copy of the damage template named goodName in a new data
// directory and returns the directory and the live index.
func liveOn(t *testing.T, opts LiveOptions) (string, *Live) {
	t.Helper()
	tmpl := sharedDamageTemplate(t)
	dataDir := t.TempDir()
	copyGeneration(t, tmpl.dir, dataDir, goodName)
	if err := writeCurrent(dataDir, goodName); err != nil {
		t.Fatal(err)
	}
	opts.PollInterval = -1
	live, err := OpenLive(dataDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Close() })
	return dataDir, live
}

// A generation copied under another name keeps the id in its meta.json;
// it is swapped in once, not on every poll.
func TestCopiedGenerationIsSwappedInOnce(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	var swaps []string
	dataDir, live := liveOn(t, LiveOptions{OnSwap: func(m Meta) { swaps = append(swaps, m.ID) }})
	copyGeneration(t, tmpl.dir, dataDir, badName)
	if err := writeCurrent(dataDir, badName); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := live.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	if len(swaps) != 1 || swaps[0] != badName {
		t.Errorf("swaps after 5 polls: %v, want one to %s", swaps, badName)
	}
	if id, _, _ := live.Current(); id != badName {
		t.Errorf("serving %s, want %s", id, badName)
	}
	probe(t, live, tmpl.profiles)
}

// Out of file descriptors, a valid generation cannot be opened: the swap is
// refused for now, the old generation serves, and a later poll swaps it in.
func TestReloadOutOfFileDescriptorsRetries(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	var rejected []string
	dataDir, live := liveOn(t, LiveOptions{OnReject: func(name, reason string) { rejected = append(rejected, name+":"+reason) }})
	copyGeneration(t, tmpl.dir, dataDir, badName)
	if err := writeCurrent(dataDir, badName); err != nil {
		t.Fatal(err)
	}
	// Every number of free descriptors too small to open the generation
	// fails at another step (bleve skips a segment it cannot open, and
	// then counts too few documents); each is a refusal for now.
	var refusals int
	for free := uint64(0); free < 8; free++ {
		var err error
		withFileLimit(t, free, func() { err = live.Reload() })
		if err == nil {
			t.Logf("with %d free file descriptors the generation opens", free)
			break
		}
		refusals++
		if RejectReason(err) != RejectOpen {
			t.Errorf("Reload with %d free file descriptors: %v, want reason %q", free, err, RejectOpen)
		}
		if id, _, _ := live.Current(); id != goodName {
			t.Fatalf("serving %s while the swap could not open, want %s", id, goodName)
		}
		probe(t, live, tmpl.profiles)
	}
	if refusals < 3 {
		t.Fatalf("only %d refusals: the file limit did not bite", refusals)
	}
	if len(rejected) != 1 || rejected[0] != badName+":"+RejectOpen {
		t.Errorf("rejections reported: %v, want one %s:%s", rejected, badName, RejectOpen)
	}
	if err := live.Reload(); err != nil {
		t.Fatalf("Reload with file descriptors free again: %v", err)
	}
	if id, _, _ := live.Current(); id != badName {
		t.Fatalf("serving %s after the retry, want %s", id, badName)
	}
	probe(t, live, tmpl.profiles)
}

// withFileLimit runs f with the soft limit of open files set to the number
// open now plus free, and restores the limit.
func withFileLimit(t *testing.T, free uint64, f func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	// ReadDir's own descriptor is closed again, so it counts as free.
	lim := old
	lim.Cur = uint64(len(fds)) - 1 + free
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// A file of the serving generation truncated on disk while mapped: reads
// past its new end fault; the lookups and searches that hit them fail with
// an error (none hangs), the process lives, and the next poll replaces the
// generation with an older one that verifies.
func TestFileShrunkWhileMappedIsAnError(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	for _, file := range []string{profilesName, zapFile(t, tmpl)} {
		t.Run(caseName(file), func(t *testing.T) {
			dataDir := t.TempDir()
			copyGeneration(t, tmpl.dir, dataDir, goodName)
			dir := copyGeneration(t, tmpl.dir, dataDir, badName)
			if err := writeCurrent(dataDir, badName); err != nil {
				t.Fatal(err)
			}
			live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer live.Close()
			if err := os.Truncate(filepath.Join(dir, file), 4096); err != nil {
				t.Fatal(err)
			}
			var failed int
			for _, p := range tmpl.profiles {
				_, err1 := live.Profile(p.ID)
				_, err2 := live.SearchText(t.Context(), nameQueryOf(p.Name))
				if err1 != nil || err2 != nil {
					failed++
				}
			}
			if failed == 0 {
				t.Fatal("no lookup or search failed on a truncated file")
			}
			t.Logf("%d of %d profiles: lookup or search failed with an error", failed, len(tmpl.profiles))
			if err := live.Reload(); err != nil {
				t.Fatalf("Reload after the fault: %v", err)
			}
			if id, _, _ := live.Current(); id != goodName {
				t.Fatalf("serving %s after the fault, want %s", id, goodName)
			}
			probe(t, live, tmpl.profiles)
		})
	}
}

func zapFile(t *testing.T, tmpl damageTemplate) string {
	for _, f := range tmpl.files {
		if filepath.Ext(f) == ".zap" {
			return f
		}
	}
	t.Fatal("the generation has no segment file")
	return ""
}

// A kill between the rename of a built generation and the write of CURRENT
// leaves a generation newer than CURRENT, named by PUBLISHING. The server's
// start removes it; a newer generation PUBLISHING does not name (CURRENT
// rolled back by an operator) stays; one a process has open stays until
// the next ingest finds it closed.
func TestOrphanGenerationIsSwept(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	dataDir := t.TempDir()
	copyGeneration(t, tmpl.dir, dataDir, goodName)
	if err := writeCurrent(dataDir, goodName); err != nil {
		t.Fatal(err)
	}
	rolledBack := "gen-20000101T000002.000Z-cccccc"
	copyGeneration(t, tmpl.dir, dataDir, rolledBack)
	orphan := copyGeneration(t, tmpl.dir, dataDir, badName)
	if err := writeNameFile(dataDir, publishingName, badName); err != nil {
		t.Fatal(err)
	}
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	live.Close()
	if exists(orphan) || exists(filepath.Join(indexDir(dataDir), publishingName)) {
		t.Errorf("after start: orphan exists %v, PUBLISHING exists %v; want neither", exists(orphan), exists(filepath.Join(indexDir(dataDir), publishingName)))
	}
	if !exists(filepath.Join(indexDir(dataDir), rolledBack)) || !exists(filepath.Join(indexDir(dataDir), goodName)) {
		t.Error("start removed a generation PUBLISHING does not name")
	}
	if cur, _ := readCurrent(dataDir); cur != goodName {
		t.Errorf("CURRENT = %s, want %s", cur, goodName)
	}

	copyGeneration(t, tmpl.dir, dataDir, badName)
	if err := writeNameFile(dataDir, publishingName, badName); err != nil {
		t.Fatal(err)
	}
	held, err := Open(orphan)
	if err != nil {
		t.Fatal(err)
	}
	if removed, err := sweepOrphanUnlessBuilding(dataDir); err != nil || removed != "" || !exists(orphan) {
		t.Errorf("sweep of an open orphan: removed %q, %v, exists %v; want it kept", removed, err, exists(orphan))
	}
	held.Close()
	b, err := NewBuilder(dataDir, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.Abort()
	if exists(orphan) {
		t.Error("the next ingest did not remove the orphan")
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
