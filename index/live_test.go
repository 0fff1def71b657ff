package index

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs"
)

func TestLiveSwapsUnderLoad(t *testing.T) {
	ps := loadRealProfiles(t)
	first, second := ps[:400], ps[300:800]
	dataDir := t.TempDir()
	genA := mustBuild(t, dataDir, first)
	swapped := make(chan Meta, 4)
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: 5 * time.Millisecond, OnSwap: func(m Meta) { swapped <- m }})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if id, n, _ := live.Current(); id != genA.ID || n != len(first) {
		t.Fatalf("Current = %s, %d; want %s, %d", id, n, genA.ID, len(first))
	}
	held, release := live.Acquire()

	// Profiles in both generations are searched by several goroutines
	// while the generation changes under them.
	both := ps[300:400]
	stop := make(chan struct{})
	var errs, searches atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				p := both[i%len(both)]
				hits, err := live.SearchText(t.Context(), nameQueryOf(p.Name))
				got, err2 := live.Profile(p.ID)
				if err != nil || err2 != nil || len(hits) == 0 || got == nil {
					errs.Add(1)
					t.Logf("search %q: %d hits, %v; profile: %v, %v", p.Name, len(hits), err, got != nil, err2)
				}
				searches.Add(1)
			}
		}(w)
	}

	genB := mustBuild(t, dataDir, second)
	m := <-swapped
	if m.ID != genB.ID {
		t.Fatalf("swapped to %s, want %s", m.ID, genB.ID)
	}
	waitSearches(&searches, 200)
	close(stop)
	wg.Wait()
	if errs.Load() != 0 {
		t.Fatalf("%d of %d searches failed during the swap", errs.Load(), searches.Load())
	}
	if id, n, _ := live.Current(); id != genB.ID || n != len(second) {
		t.Fatalf("Current = %s, %d; want %s, %d", id, n, genB.ID, len(second))
	}

	// The generation acquired before the swap stays open until released.
	if p, err := held.Profile(first[0].ID); err != nil || p == nil {
		t.Fatalf("held old generation unusable before release: %v, %v", p, err)
	}
	release()
	release() // a second call is harmless
	if _, err := held.Profile(first[0].ID); err == nil {
		t.Fatal("old generation still open after its last release")
	}
	if p, _ := live.Profile(first[0].ID); p != nil {
		t.Errorf("profile only in the old generation still served: %s", p.ID)
	}
	if p, _ := live.Profile(ps[799].ID); p == nil {
		t.Errorf("profile of the new generation not served")
	}
}

// waitSearches lets the searching goroutines run on the new generation for
// a while; it waits for a number of searches, not for a time.
func waitSearches(n *atomic.Int64, more int64) {
	target := n.Load() + more
	for n.Load() < target {
		time.Sleep(time.Millisecond)
	}
}

func TestLiveKeepsServingWhenNewGenerationIsBroken(t *testing.T) {
	ps := loadRealProfiles(t)[:200]
	dataDir := t.TempDir()
	genA := mustBuild(t, dataDir, ps)
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	garbage := filepath.Join(indexDir(dataDir), "gen-29990101T000000.000Z-garbage")
	if err := os.MkdirAll(filepath.Join(garbage, bleveDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeMeta(garbage, Meta{Version: IndexVersion, ID: filepath.Base(garbage), Profiles: 3}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(garbage, profilesName), []byte("not a bbolt file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{filepath.Base(garbage), "gen-missing"} {
		if err := writeCurrent(dataDir, target); err != nil {
			t.Fatal(err)
		}
		if err := live.Reload(); err == nil {
			t.Errorf("Reload onto %s succeeded", target)
		}
		if id, _, _ := live.Current(); id != genA.ID {
			t.Errorf("after a broken CURRENT (%s) serving %s, want %s", target, id, genA.ID)
		}
		hits, err := live.SearchText(t.Context(), nameQueryOf(ps[5].Name))
		if err != nil || !containsID(hitProfiles(hits), ps[5].ID) {
			t.Errorf("old generation does not serve after a broken CURRENT: %v", err)
		}
	}
	if err := writeCurrent(dataDir, genA.ID); err != nil {
		t.Fatal(err)
	}
	if err := live.Reload(); err != nil {
		t.Errorf("Reload back to the serving generation: %v", err)
	}
}

// TestLiveWithoutGeneration: a data directory without a published
// generation is ErrNoGeneration, and the error names the directory it
// looked in as an absolute path, also when given a relative one.
func TestLiveWithoutGeneration(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("var", 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := OpenLive("var", LiveOptions{})
	if !errors.Is(err, ErrNoGeneration) {
		t.Fatalf("OpenLive on an empty data dir: %v, want ErrNoGeneration", err)
	}
	want := "no index generation published yet in the data directory " + filepath.Join(dir, "var") + " (it holds no index/CURRENT): ingest one with companydocs ingest --data-dir " + filepath.Join(dir, "var")
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("the error says %q, want it to start %q", err, want)
	}
}

func TestLiveClose(t *testing.T) {
	ps := loadRealProfiles(t)[:50]
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	live, err := OpenLive(dataDir, LiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g, release := live.Acquire()
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err := g.Profile(ps[0].ID); err != nil || p == nil {
		t.Fatalf("generation acquired before Close unusable: %v", err)
	}
	release()
	if _, err := live.SearchText(t.Context(), companydocs.TextQuery{NameTerms: []string{"gmbh"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("SearchText after Close: %v, want ErrClosed", err)
	}
	if g, _ := live.Acquire(); g != nil {
		t.Error("Acquire after Close returned a generation")
	}
	if err := live.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
