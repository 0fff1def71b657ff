package serve

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/e2e"
)

// TestCorruptInputKeepsTheLiveGeneration feeds the ingest command broken
// files after a good one: each fails with the file (and line) named, and
// CURRENT still names the first generation.
func TestCorruptInputKeepsTheLiveGeneration(t *testing.T) {
	dir := t.TempDir()
	good := e2e.MustBuild(t, dir, 500, e2e.SampleFile(t))
	files := t.TempDir()
	truncated := filepath.Join(files, "truncated.jsonl.bz2")
	// Cut inside the fourth bzip2 block: a few thousand good lines first.
	if err := os.WriteFile(truncated, data.Sample[:200_000], 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(files, "logo.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, want string
	}{
		{truncated, "truncated.jsonl.bz2:"},
		{png, "logo.png"},
		{filepath.Join(files, "missing.jsonl"), "missing.jsonl"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := app.RunCommand(context.Background(), []string{"ingest", "--data-dir", dir, "--log-format", "json", tc.file}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "live index is unchanged") {
				t.Fatalf("ingest %s: err = %v, want it to name %q", tc.file, err, tc.want)
			}
			if cur, err := index.ReadCurrent(dir); err != nil || cur != good.ID {
				t.Errorf("CURRENT = %q (%v), want %s", cur, err, good.ID)
			}
		})
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "index"))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".building") {
			t.Errorf("leftover build directory %s", e.Name())
		}
	}
}

// TestReingestKeepsProfileIDs ingests the same real records twice: every
// profile keeps its id, so orders and bookmarks stay valid.
func TestReingestKeepsProfileIDs(t *testing.T) {
	dir := t.TempDir()
	sample := e2e.SampleFile(t)
	first := e2e.MustBuild(t, dir, 800, sample)
	second := e2e.MustBuild(t, dir, 800, sample)
	if first.ID == second.ID || first.Profiles != second.Profiles || first.Profiles < 790 {
		t.Fatalf("generations %s (%d) and %s (%d)", first.ID, first.Profiles, second.ID, second.Profiles)
	}
	live, err := index.OpenLive(dir, index.LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	file, err := ingest.Open(sample, ingest.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	checked := 0
	errStop := errors.New("enough")
	err = file.Read(context.Background(), func(it ingest.Item) error {
		if it.Profile == nil {
			return nil
		}
		p, err := live.Profile(it.Profile.ID)
		if err != nil || p == nil || p.Ref != it.Profile.Ref {
			t.Errorf("line %d: profile %s not found again after re-ingest (%v)", it.Line, it.Profile.ID, err)
		}
		if checked++; checked == 800 {
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		t.Fatal(err)
	}
}
