package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs/internal/syncbuf"
)

// Bounds of the search load that runs during a re-ingest.
const (
	loadWorkers     = 3
	loadMaxRequests = 4000 // per worker
	loadPause       = 2 * time.Millisecond
)

// LoadResult counts the answers of a search load.
type LoadResult struct {
	Ok, Failed atomic.Int64
	mu         sync.Mutex
	Failures   []string
}

func (r *LoadResult) fail(msg string) {
	r.Failed.Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Failures) < 5 {
		r.Failures = append(r.Failures, msg)
	}
}

// SearchLoad sends searches for queries from a few workers until ctx ends
// or each worker has sent loadMaxRequests. Every answer must be 200 with a
// candidates list.
func SearchLoad(ctx context.Context, base string, queries []string) (*LoadResult, func()) {
	res := &LoadResult{}
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for w := 0; w < loadWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < loadMaxRequests && ctx.Err() == nil; i++ {
				q := queries[(w*7+i)%len(queries)]
				SearchOnce(client, base, q, res)
				time.Sleep(loadPause)
			}
		}()
	}
	return res, wg.Wait
}

// SearchOnce sends one search for query to base and records its outcome
// in res.
func SearchOnce(client *http.Client, base, query string, res *LoadResult) {
	body, _ := json.Marshal(map[string]string{"query": query})
	resp, err := client.Post(base+"/api/v1/documents/companies/search/", "application/json", bytes.NewReader(body))
	if err != nil {
		res.fail(err.Error())
		return
	}
	defer resp.Body.Close()
	var out struct {
		Candidates []json.RawMessage `json:"candidates"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || out.Candidates == nil {
		res.fail(resp.Status)
		return
	}
	res.Ok.Add(1)
}

// WaitFor polls cond every 50 ms, at most 20 s.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	tb.Fatalf("gave up waiting for %s", what)
}

// IngestCommand runs "companydocs ingest" as a separate process (this test
// binary, acting as the companydocs binary through TestMain).
func IngestCommand(t *testing.T, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"ingest", "--data-dir", dir, "--log-format", "json"}, args...)...)
	cmd.Env = append(os.Environ(), RunMainEnv+"=1")
	stdout, stderr := &bytes.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd, stdout, stderr
}

// LeftoverBuilds returns the build directories left in dir's index.
func LeftoverBuilds(t *testing.T, dir string) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "index", ".building-*"))
	if err != nil {
		t.Fatal(err)
	}
	return matches
}
