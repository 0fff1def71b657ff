package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/app"
	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/internal/realdata"
	"companydocs/register"
)

// chunk53Lines returns the first n lines of the real chunk 53, decoded for
// editing.
func chunk53Lines(t *testing.T, n int) []map[string]any {
	t.Helper()
	sc := bufio.NewScanner(realdata.Open(t, realdata.Chunk(t, "ocdata.chunk53.jsonl.bz2", 5727)))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var recs []map[string]any
	for len(recs) < n && sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

func writeLines(t *testing.T, path string, recs []map[string]any) string {
	t.Helper()
	var buf bytes.Buffer
	for _, rec := range recs {
		b, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// editedChunk53 applies the register's kinds of edits to the records and
// drops one, as the next dump of the register would have them.
func editedChunk53(t *testing.T, recs []map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range recs {
		switch rec["company_number"] {
		case "M1405_HRB8956": // renamed
			rec["previous_names"] = []any{map[string]any{"company_name": rec["name"]}}
			rec["name"] = "H.A. Service UG (haftungsbeschränkt)"
		case "M1405_HRB8957": // managing director replaced
			rec["officers"].([]any)[0].(map[string]any)["name"] = "Harun Yilmaz"
		case "M1405_HRB8958": // put into liquidation
			rec["name"] = "HAGEPA Friedberg GmbH i.L."
		case "M1405_HRB8960": // no longer in the dump
			continue
		case "M1405_HRB8961": // struck off
			rec["current_status"] = "removed"
		}
		out = append(out, rec)
	}
	if len(out) != len(recs)-1 {
		t.Fatalf("the edited records are not among the first %d", len(recs))
	}
	return out
}

// TestIngestRecordsChanges ingests real records, then the same records with
// real edits, into a served data directory: the ingest reports the
// changes, the generation records them, and the server's metrics count
// them once it swaps the generation in.
func TestIngestRecordsChanges(t *testing.T) {
	dir := t.TempDir()
	recs := chunk53Lines(t, 1000)
	first := writeLines(t, filepath.Join(t.TempDir(), "a.jsonl"), recs)
	var stdout, stderr bytes.Buffer
	if err := app.RunCommand(context.Background(), []string{"ingest", "--data-dir", dir, "--log-format", "json", first}, &stdout, &stderr); err != nil {
		t.Fatalf("first ingest: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "No changes recorded: no previous generation.") {
		t.Errorf("first ingest's report:\n%s", stdout.String())
	}
	firstID, err := index.ReadCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := e2e.StartServer(t, dir)
	if v, ok := s.Metric(t, "companydocs_index_generation_changed_profiles"); !ok || v != 0 {
		t.Errorf("changed profiles of the first generation: %v, %v; want 0", v, ok)
	}

	second := writeLines(t, filepath.Join(t.TempDir(), "b.jsonl"), editedChunk53(t, recs))
	stdout.Reset()
	if err := app.RunCommand(context.Background(), []string{"ingest", "--data-dir", dir, "--log-format", "json", second}, &stdout, &stderr); err != nil {
		t.Fatalf("second ingest: %v\n%s", err, stderr.String())
	}
	want := "Changes against " + firstID + ": 5 profiles changed or removed (name 2, status 2, officers 1, previous_names 1, removed 1), 0 new."
	if !strings.Contains(stdout.String(), want) {
		t.Errorf("second ingest's report:\n%s\nwant the line %q", stdout.String(), want)
	}
	secondID, err := index.ReadCurrent(dir)
	if err != nil {
		t.Fatal(err)
	}
	e2e.WaitFor(t, "the server to swap in the second generation", func() bool { id, _, _ := s.Live.Current(); return id == secondID })
	// The gauges are set by the swap's hook, just after the generation
	// became current: wait for them, then say which differ.
	wantChanges := map[string]float64{"name": 2, "status": 2, "officers": 1, "previous_names": 1, "removed": 1, "register": 0, "lei": 0}
	changesAre := func() bool {
		for field, n := range wantChanges {
			if v, ok := s.Metric(t, "companydocs_index_generation_changes", "field", field); !ok || v != n {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(5 * time.Second); !changesAre() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	for field, n := range wantChanges {
		if v, ok := s.Metric(t, "companydocs_index_generation_changes", "field", field); !ok || v != n {
			t.Errorf("changes of field %s: %v, %v; want %v", field, v, ok, n)
		}
	}
	if v, _ := s.Metric(t, "companydocs_index_generation_changed_profiles"); v != 5 {
		t.Errorf("changed profiles: %v, want 5", v)
	}

	g, release := s.Live.Acquire()
	defer release()
	cs, err := g.Changes()
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := register.ParseCompanyNumber("M1405_HRB8957")
	changes, ok, err := cs.Lookup(companydocs.ProfileID(ref))
	got, _ := json.Marshal(changes)
	if wantJSON := `[{"field":"officers","before":[{"name":"Chris Müller","role":"Geschäftsführer"}],"after":[{"name":"Harun Yilmaz","role":"Geschäftsführer"}]}]`; !ok || err != nil || string(got) != wantJSON {
		t.Errorf("changes of Spiratio UG: %s, %v, %v; want %s", got, ok, err, wantJSON)
	}

	stdout.Reset()
	if err := app.RunCommand(context.Background(), []string{"ingest", "--data-dir", dir, "--log-format", "json", "--no-changes", second}, &stdout, &stderr); err != nil {
		t.Fatalf("third ingest: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "No change record (--no-changes).") {
		t.Errorf("third ingest's report:\n%s", stdout.String())
	}
	thirdID, _ := index.ReadCurrent(dir)
	e2e.WaitFor(t, "the server to swap in the third generation", func() bool { id, _, _ := s.Live.Current(); return id == thirdID })
	if v, _ := s.Metric(t, "companydocs_index_generation_changed_profiles"); v != -1 {
		t.Errorf("changed profiles without a change record: %v, want -1", v)
	}
}
