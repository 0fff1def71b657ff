package publish

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"companydocs/internal/e2e"
)

// TestDamagedGenerationIsRefusedWhileServing publishes a copy of the live
// generation with bytes flipped in its search segment to a running server:
// the server refuses it, counts the refusal, stays ready and answers every
// search from the old generation.
func TestDamagedGenerationIsRefusedWhileServing(t *testing.T) {
	sample := e2e.SampleFile(t)
	dir := t.TempDir()
	recs := e2e.ReadRecords(t, sample, 500)
	first := e2e.MustBuild(t, dir, len(recs), sample)
	s := e2e.StartServer(t, dir)

	damaged := "gen-29990101T000000.000Z-damage"
	copyDir(t, filepath.Join(dir, "index", first.ID), filepath.Join(dir, "index", damaged))
	segments, err := filepath.Glob(filepath.Join(dir, "index", damaged, "bleve", "store", "*.zap"))
	if err != nil || len(segments) == 0 {
		t.Fatalf("no segment file in the copy: %v", err)
	}
	flipBytes(t, segments[0])
	publish(t, dir, damaged)

	e2e.WaitFor(t, "the damaged generation to be refused", func() bool {
		v, _ := s.Metric(t, "companydocs_index_generations_rejected_total", "reason", "files")
		return v == 1
	})
	res := &e2e.LoadResult{}
	client := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < 200; i++ {
		r := recs[i%len(recs)]
		e2e.SearchOnce(client, s.Base, r.Name, res)
	}
	if res.Failed.Load() != 0 || res.Ok.Load() != 200 {
		t.Fatalf("%d of 200 searches failed after the damaged publish: %v", res.Failed.Load(), res.Failures)
	}
	s.MustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")
	if id, _, _ := s.Live.Current(); id != first.ID {
		t.Errorf("serving %s, want %s", id, first.ID)
	}
	if v, _ := s.Metric(t, "companydocs_index_generations_rejected_total"); v != 1 {
		t.Errorf("refusals counted %v after more polls, want 1 (a refused generation is not read again)", v)
	}
	if v, _ := s.Metric(t, "companydocs_index_swaps_total"); v != 0 {
		t.Errorf("swaps counted %v, want 0", v)
	}
}

// publish points CURRENT of dataDir at name, by rename like an ingest.
func publish(t *testing.T, dataDir, name string) {
	t.Helper()
	tmp := filepath.Join(dataDir, "index", ".CURRENT-test")
	if err := os.WriteFile(tmp, []byte(name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dataDir, "index", "CURRENT")); err != nil {
		t.Fatal(err)
	}
}

// flipBytes inverts 16 bytes spread evenly over the file.
func flipBytes(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		b[len(b)*(2*i+1)/32] ^= 0xff
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
