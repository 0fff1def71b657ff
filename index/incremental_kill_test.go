package index

import (
	"bufio"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"companydocs"
)

// The child process of TestKilledIncrementalBuild builds in the data
// directory the first variable names the edits the third names (b or c),
// and stops for ever at the log message the second names.
const (
	killDataDirEnv = "COMPANYDOCS_TEST_KILL_DATA_DIR"
	killAtEnv      = "COMPANYDOCS_TEST_KILL_AT"
	killEditsEnv   = "COMPANYDOCS_TEST_KILL_EDITS"
)

// TestKilledIncrementalBuild kills an incremental build with SIGKILL
// after it shared the live generation's segments and opened them for
// writing, after it wrote its documents, and after it wrote its profile
// layer and shared the live generation's profile store; then, on that
// layered generation, builds of further edits killed after they shared
// its segments, shared its profile store's base and merged its layer with
// theirs, and after they checksummed their files: the live generation stays byte
// for byte as published (its shared files included) and CURRENT names
// it, and the next build succeeds on it.
func TestKilledIncrementalBuild(t *testing.T) {
	if dir := os.Getenv(killDataDirEnv); dir != "" {
		runKilledBuild(t, dir, os.Getenv(killAtEnv), os.Getenv(killEditsEnv))
		return
	}
	a, b, _ := realEdits(t)
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, a)
	killBuildsAt(t, dataDir, first.ID, "b", "segments of the previous generation shared", "search index updated", "profile layer written")
	second := mustBuildWith(t, dataDir, b, incrementalOpts)
	if second.Build.Kind != BuildIncremental || second.Build.Base != first.ID || len(second.ProfileLayers) != 1 {
		t.Errorf("build after the kills %+v, layers %q, want an incremental one on %s with a layer", second.Build, second.ProfileLayers, first.ID)
	}
	killBuildsAt(t, dataDir, second.ID, "c", "segments of the previous generation shared", "profile layer written", "generation files checksummed")
	third := mustBuildWith(t, dataDir, killEdits(t, "c"), incrementalOpts)
	if third.Build.Base != second.ID || len(third.ProfileLayers) != 1 || linked(layerPath(dataDir, second, 0), layerPath(dataDir, third, 0)) {
		t.Errorf("build on the layered generation after the kills %+v, layers %q, want %s's layer merged with the edits", third.Build, third.ProfileLayers, second.ID)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(indexDir(dataDir), buildingPrefix+"*")); len(leftovers) != 0 {
		t.Errorf("leftovers of the killed builds: %v", leftovers)
	}
}

// killBuildsAt kills a build of edits at each of at in turn, and checks
// after each that the live generation is untouched, current and opens.
func killBuildsAt(t *testing.T, dataDir, live, edits string, at ...string) {
	t.Helper()
	baseDir := filepath.Join(indexDir(dataDir), live)
	before := fileHashes(t, baseDir)
	for _, at := range at {
		killBuildAt(t, dataDir, at, edits)
		if after := fileHashes(t, baseDir); !reflect.DeepEqual(after, before) {
			t.Errorf("killed at %q: the live generation's files changed", at)
		}
		if cur, err := readCurrent(dataDir); err != nil || cur != live {
			t.Errorf("killed at %q: CURRENT names %q (%v), want %s", at, cur, err, live)
		}
		g, err := Open(baseDir)
		if err != nil {
			t.Fatalf("killed at %q: the live generation no longer opens: %v", at, err)
		}
		g.Close()
	}
}

// killEdits are the profiles the child builds: B of realEdits, or C,
// B with one profile in a hundred renamed.
func killEdits(t *testing.T, edits string) []*companydocs.Profile {
	_, b, _ := realEdits(t)
	if edits == "c" {
		return renamed(b, 1, 100, "C")
	}
	return b
}

// killBuildAt starts the child, waits until it logged at and kills it.
func killBuildAt(t *testing.T, dataDir, at, edits string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledIncrementalBuild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDataDirEnv+"="+dataDir, killAtEnv+"="+at, killEditsEnv+"="+edits)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	reached := false
	for !reached && sc.Scan() {
		reached = strings.Contains(sc.Text(), "stopped at: "+at)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !reached {
		t.Fatalf("the build never reached %q", at)
	}
}

// runKilledBuild is the child: an incremental build of the edited
// records whose logger stops the build at the message at.
func runKilledBuild(t *testing.T, dataDir, at, edits string) {
	opts := incrementalOpts
	opts.Logger = slog.New(stopAt{slog.NewTextHandler(os.Stderr, nil), at})
	mustBuildWith(t, dataDir, killEdits(t, edits), opts)
	t.Fatal("the build was not stopped")
}

// stopAt is a log handler that blocks the goroutine logging msg for ever,
// so that the build is killed right there.
type stopAt struct {
	slog.Handler
	msg string
}

func (h stopAt) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Message == h.msg {
		os.Stderr.WriteString("stopped at: " + h.msg + "\n")
		time.Sleep(time.Hour)
	}
	return err
}

// layerPath is the path of the n-th profile layer of generation m.
func layerPath(dataDir string, m Meta, n int) string {
	return filepath.Join(indexDir(dataDir), m.ID, m.ProfileLayers[n])
}
