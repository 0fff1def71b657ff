package serve

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/index"
)

// TestIngestBuildsOnTheLiveGeneration: a re-ingest with --incremental
// builds its search index on the live generation's and says so; without
// it, the index is built anew.
func TestIngestBuildsOnTheLiveGeneration(t *testing.T) {
	dir := t.TempDir()
	recs := chunk53Lines(t, 1000)
	first := writeLines(t, filepath.Join(t.TempDir(), "a.jsonl"), recs)
	second := writeLines(t, filepath.Join(t.TempDir(), "b.jsonl"), editedChunk53(t, recs))
	ingest := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := app.RunCommand(context.Background(), append([]string{"ingest", "--data-dir", dir, "--log-format", "json"}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("ingest %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	if out := ingest("--incremental", first); !strings.Contains(out, "Search index built anew: "+index.ReasonNoPrevious+".\n") {
		t.Errorf("first ingest's report:\n%s", out)
	}
	firstID, err := index.ReadCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := "Search index built on " + firstID + ": 4 documents written, 1 deleted, 2 segments.\n"
	if out := ingest("--incremental", second); !strings.Contains(out, want) {
		t.Errorf("second ingest's report:\n%s\nwant the line %q", out, want)
	}
	if out := ingest(second); !strings.Contains(out, "Search index built anew (--incremental builds it on the live generation's).\n") {
		t.Errorf("ingest without --incremental reports:\n%s", out)
	}
}
