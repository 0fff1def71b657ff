//go:build !race

package index_test

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/resolver"
)

// TestIncrementalAnswersAsFullBuild ingests the embedded sample, then an
// edited copy of it (renamed, new officers, struck off, gone, moved to
// another court, new) on it, and the edited copy in full elsewhere: the
// resolver answers every query of its evaluation set and every query
// about an edited record alike on both, candidates, labels, reasons and
// confidences.
func TestIncrementalAnswersAsFullBuild(t *testing.T) {
	dir := t.TempDir()
	sample, edited, leis := filepath.Join(dir, "sample.jsonl"), filepath.Join(dir, "edited.jsonl"), filepath.Join(dir, "lei_sample.csv")
	queries := writeEditedSample(t, sample, edited)
	if err := os.WriteFile(leis, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	incDir, fullDir := filepath.Join(dir, "incremental"), filepath.Join(dir, "full")
	ingestFiles(t, incDir, false, sample, leis)
	copyTree(t, incDir, fullDir)
	inc := ingestFiles(t, incDir, true, edited, leis)
	full := ingestFiles(t, fullDir, false, edited, leis)
	if inc.Build.Kind != index.BuildIncremental || inc.Build.Segments != 2 || inc.Build.Indexed < answersSampleRecords/40 {
		t.Fatalf("edited sample built %+v, want incremental", inc.Build)
	}
	if inc.Profiles != full.Profiles || !sameChanges(inc.Changes, full.Changes) {
		t.Errorf("incremental: %d profiles, changes %+v; full: %d, %+v", inc.Profiles, inc.Changes, full.Profiles, full.Changes)
	}
	a, b := openGeneration(t, incDir, inc.ID), openGeneration(t, fullDir, full.ID)
	if x, y := changeEntries(t, a), changeEntries(t, b); fmt.Sprint(x) != fmt.Sprint(y) || len(x) < answersSampleRecords/40 {
		t.Errorf("the change records differ, or hold few entries: %d and %d", len(x), len(y))
	}
	queries = append(queries, evalRequests(t)...)
	found := 0
	for _, q := range queries {
		got, want := answer(t, a, q), answer(t, b, q)
		if got != want {
			t.Errorf("query %+v:\nincremental %s\nfull        %s", q, got, want)
		}
		if !strings.Contains(want, `"candidates":[]`) {
			found++
		}
	}
	t.Logf("%d queries, %d with candidates, answered alike", len(queries), found)
}

// sameChanges compares two change summaries but for the generation
// compared with.
func sameChanges(a, b *index.ChangeSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Previous, y.Previous = "", ""
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// copyTree copies the data directory src to dst, file by file.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil || e.IsDir() {
			return errors.Join(err, os.MkdirAll(filepath.Join(dst, rel), 0o755))
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// changeEntries returns every entry of g's change record as JSON.
func changeEntries(t *testing.T, g *index.Generation) map[string]string {
	t.Helper()
	cs, err := g.Changes()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	err = cs.Each(func(id string, changes []companydocs.FieldChange) error {
		b, err := json.Marshal(changes)
		out[id] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ingestFiles ingests files into dataDir as the command does.
func ingestFiles(t *testing.T, dataDir string, incremental bool, files ...string) index.Meta {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := index.NewBuilder(dataDir, index.BuilderOptions{Incremental: incremental, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []ingest.Input
	for _, f := range files {
		inputs = append(inputs, ingest.Input{Path: f})
	}
	sum, err := ingest.Run(context.Background(), inputs, b, ingest.Options{})
	if err != nil {
		b.Abort()
		t.Fatal(err)
	}
	m, err := b.Commit(index.Meta{Sources: files, Summary: sum.String()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func openGeneration(t *testing.T, dataDir, id string) *index.Generation {
	t.Helper()
	g, err := index.Open(filepath.Join(dataDir, "index", id))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// answer is the resolver's whole answer to q as JSON.
func answer(t *testing.T, g *index.Generation, q resolver.Request) string {
	t.Helper()
	res, err := resolver.Resolve(context.Background(), g, q)
	if err != nil {
		t.Fatalf("resolve %+v: %v", q, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// evalRequests reads the queries of the resolver's evaluation set.
func evalRequests(t *testing.T) []resolver.Request {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "resolver", "testdata", "eval.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []resolver.Request
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct {
			Query      string              `json:"query"`
			Mode       string              `json:"mode"`
			Discover   bool                `json:"discover"`
			Properties resolver.Properties `json:"properties"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, resolver.Request{Query: c.Query, Mode: c.Mode, Discover: c.Discover, Properties: c.Properties})
	}
	if err := sc.Err(); err != nil || len(out) < 3000 {
		t.Fatalf("read %d evaluation queries: %v", len(out), err)
	}
	return out
}

// writeEditedSample writes the embedded sample to sample and an edited
// copy to edited, and returns queries about the edited records: their
// names before and after, their officers, with a typo.
func writeEditedSample(t *testing.T, sample, edited string) []resolver.Request {
	t.Helper()
	raw, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(data.Sample)))
	if err != nil {
		t.Fatal(err)
	}
	// The first records of the sample: the two builds need only the same
	// files, and fewer records keep the test's three ingests short.
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	lines = lines[:min(len(lines), answersSampleRecords)]
	if err := os.WriteFile(sample, append(bytes.Join(lines, []byte("\n")), '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var queries []resolver.Request
	for i, line := range lines {
		if !editedAt(i) {
			out.Write(append(line, '\n'))
			continue
		}
		rec := map[string]any{}
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		asked := i%200 < 100 // queries about half the edited records
		if asked {
			queries = append(queries, recordQueries(rec)...)
		}
		kept, added := editRecord(i, rec, lines[(i+1)%len(lines)])
		for _, r := range append(kept, added...) {
			if asked {
				queries = append(queries, recordQueries(r)...)
			}
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(append(b, '\n'))
		}
	}
	if err := os.WriteFile(edited, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return queries
}

// answersSampleRecords is how many records of the sample the answers
// test builds its two generations of.
const answersSampleRecords = 20000

// editedAt reports whether record i of the sample is edited.
func editedAt(i int) bool { return i%100 < 7 && i%100 > 0 }

// editRecord applies the edit of record i, as the register's records
// change between two dumps: about one in a hundred renamed, one with new
// officers, one struck off, one gone, one moved to the court of the next
// record, and one new record beside one in a hundred.
func editRecord(i int, rec map[string]any, next []byte) (kept, added []map[string]any) {
	name, _ := rec["name"].(string)
	switch i % 100 {
	case 1:
		rec["previous_names"] = []any{map[string]any{"company_name": name}}
		rec["name"] = "Neue " + name
	case 2:
		rec["officers"] = []any{map[string]any{"name": fmt.Sprintf("Petra Neumann%d", i), "position": "Geschäftsführer", "type": "person"}}
	case 3:
		rec["current_status"] = "removed"
	case 4:
		return nil, nil
	case 5:
		var n map[string]any
		if json.Unmarshal(next, &n) == nil {
			court, _, _ := strings.Cut(n["company_number"].(string), "_")
			_, number, _ := strings.Cut(rec["company_number"].(string), "_")
			rec["company_number"] = court + "_" + number
		}
	case 6:
		copied := map[string]any{}
		for k, v := range rec {
			copied[k] = v
		}
		court, number, _ := strings.Cut(rec["company_number"].(string), "_")
		copied["company_number"] = court + "_" + number + "77"
		copied["name"] = fmt.Sprintf("Gründung %d %s", i, name)
		return []map[string]any{rec}, []map[string]any{copied}
	}
	return []map[string]any{rec}, nil
}

// recordQueries returns the queries about an edited record: its name, with
// a typo, and its first officer in deep mode.
func recordQueries(rec map[string]any) []resolver.Request {
	name, _ := rec["name"].(string)
	if strings.TrimSpace(name) == "" {
		return nil
	}
	out := []resolver.Request{{Query: name}, {Query: typo(name)}}
	if officers, _ := rec["officers"].([]any); len(officers) > 0 {
		if o, _ := officers[0].(map[string]any); o != nil {
			out = append(out, resolver.Request{Query: fmt.Sprint(o["name"]), Mode: "deep"})
		}
	}
	return out
}

// typo drops the second letter of the longest word of s.
func typo(s string) string {
	words := strings.Fields(s)
	longest := 0
	for i, w := range words {
		if len(w) > len(words[longest]) {
			longest = i
		}
	}
	if w := []rune(words[longest]); len(w) > 3 {
		words[longest] = string(w[:1]) + string(w[2:])
	}
	return strings.Join(words, " ")
}
