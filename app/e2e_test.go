package app

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/syncbuf"
)

// sampleFile writes the embedded real sample to a file.
func sampleFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "sample.jsonl.bz2")
	if err := os.WriteFile(path, data.Sample, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// mustBuild ingests inputs (at most maxRecords of each) into a new
// generation of dataDir and publishes it.
func mustBuild(tb testing.TB, dataDir string, maxRecords int, inputs ...string) index.Meta {
	tb.Helper()
	var in []ingest.Input
	for _, p := range inputs {
		in = append(in, ingest.Input{Path: p})
	}
	meta, _, err := BuildGeneration(context.Background(), dataDir, in, BuildOptions{Keep: index.DefaultKeep, MaxRecords: maxRecords, AllowShrink: true}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatalf("build generation: %v", err)
	}
	return meta
}

// exchange is one request and its response, kept to check them against
// the OpenAPI document.
type exchange struct {
	method, path string
	reqHeader    http.Header
	reqBody      []byte
	status       int
	respHeader   http.Header
	respBody     []byte
}

// testServer is the real Main serving on a loopback port.
type testServer struct {
	*Main
	base   string
	client *http.Client
	stdout *syncbuf.Buffer
	logs   *syncbuf.Buffer

	mu        sync.Mutex
	exchanges []exchange

	closeOnce sync.Once
	closeErr  error
}

// shutdown closes the Main once; later calls return the first result.
func (s *testServer) shutdown() error {
	s.closeOnce.Do(func() { s.closeErr = s.Close() })
	return s.closeErr
}

// do sends a request, records it for the OpenAPI check and returns the
// status and body. headers are name, value pairs.
func (s *testServer) do(tb testing.TB, method, path, body string, headers ...string) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	s.mu.Lock()
	s.exchanges = append(s.exchanges, exchange{method, path, req.Header.Clone(), []byte(body), resp.StatusCode, resp.Header.Clone(), respBody})
	s.mu.Unlock()
	return resp.StatusCode, respBody, resp.Header
}
