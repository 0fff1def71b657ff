package serve

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/index"
	"companydocs/internal/cli"
)

// TestIngestBuildsOnTheLiveGeneration: a re-ingest builds its search
// index on the live generation's and says so; --incremental, which asks
// for the same, changes nothing; with --full the index is built anew; and
// the two together are refused.
func TestIngestBuildsOnTheLiveGeneration(t *testing.T) {
	dir := t.TempDir()
	recs := chunk53Lines(t, 1000)
	first := writeLines(t, filepath.Join(t.TempDir(), "a.jsonl"), recs)
	second := writeLines(t, filepath.Join(t.TempDir(), "b.jsonl"), editedChunk53(t, recs))
	run := func(args ...string) (string, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := app.RunCommand(context.Background(), append([]string{"ingest", "--data-dir", dir, "--log-format", "json"}, args...), &stdout, &stderr)
		return stdout.String() + stderr.String(), err
	}
	ingest := func(args ...string) string {
		t.Helper()
		out, err := run(args...)
		if err != nil {
			t.Fatalf("ingest %v: %v\n%s", args, err, out)
		}
		return out
	}
	if out := ingest(first); !strings.Contains(out, "Search index built anew: "+index.ReasonNoPrevious+".\n") {
		t.Errorf("first ingest's report:\n%s", out)
	}
	for _, flags := range [][]string{nil, {"--incremental"}} {
		live, err := index.ReadCurrent(dir)
		if err != nil {
			t.Fatal(err)
		}
		want := "Search index built on " + live + ": 4 documents written, 1 deleted, 2 segments.\n"
		if flags != nil {
			// the same files again: nothing changed since the previous
			want = "Search index built on " + live + ": 0 documents written, 0 deleted, 2 segments.\n"
		}
		if out := ingest(append(flags, second)...); !strings.Contains(out, want) {
			t.Errorf("ingest %v reports:\n%s\nwant the line %q", flags, out, want)
		}
	}
	if out := ingest("--full", second); !strings.Contains(out, "Search index built anew, as --full asks.\n") {
		t.Errorf("ingest --full reports:\n%s", out)
	}
	if out, err := run("--full", "--incremental", second); !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "--full and --incremental") {
		t.Errorf("ingest --full --incremental: %v\n%s", err, out)
	}
}
