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
)

// The child process of TestKilledIncrementalBuild builds in the data
// directory this names and stops for ever at the log message the other
// variable names.
const (
	killDataDirEnv = "COMPANYDOCS_TEST_KILL_DATA_DIR"
	killAtEnv      = "COMPANYDOCS_TEST_KILL_AT"
)

// TestKilledIncrementalBuild kills an incremental build with SIGKILL
// after it shared the live generation's segments and opened them for
// writing, and after it wrote its documents: the live generation stays
// byte for byte as published and CURRENT names it, and the next build
// succeeds on it.
func TestKilledIncrementalBuild(t *testing.T) {
	if dir := os.Getenv(killDataDirEnv); dir != "" {
		runKilledBuild(t, dir, os.Getenv(killAtEnv))
		return
	}
	a, b, _ := realEdits(t)
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, a)
	baseDir := filepath.Join(indexDir(dataDir), first.ID)
	before := fileHashes(t, baseDir)
	for _, at := range []string{"segments of the previous generation shared", "search index updated"} {
		killBuildAt(t, dataDir, at)
		if after := fileHashes(t, baseDir); !reflect.DeepEqual(after, before) {
			t.Errorf("killed at %q: the live generation's files changed", at)
		}
		if cur, err := readCurrent(dataDir); err != nil || cur != first.ID {
			t.Errorf("killed at %q: CURRENT names %q (%v), want %s", at, cur, err, first.ID)
		}
		g, err := Open(baseDir)
		if err != nil {
			t.Fatalf("killed at %q: the live generation no longer opens: %v", at, err)
		}
		g.Close()
	}
	m := mustBuildWith(t, dataDir, b, incrementalOpts)
	if m.Build.Kind != BuildIncremental || m.Build.Base != first.ID {
		t.Errorf("build after the kills %+v, want an incremental one on %s", m.Build, first.ID)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(indexDir(dataDir), buildingPrefix+"*")); len(leftovers) != 0 {
		t.Errorf("leftovers of the killed builds: %v", leftovers)
	}
}

// killBuildAt starts the child, waits until it logged at and kills it.
func killBuildAt(t *testing.T, dataDir, at string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledIncrementalBuild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDataDirEnv+"="+dataDir, killAtEnv+"="+at)
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
func runKilledBuild(t *testing.T, dataDir, at string) {
	_, b, _ := realEdits(t)
	opts := incrementalOpts
	opts.Logger = slog.New(stopAt{slog.NewTextHandler(os.Stderr, nil), at})
	mustBuildWith(t, dataDir, b, opts)
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
