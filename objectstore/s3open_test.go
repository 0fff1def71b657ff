package objectstore

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs/internal/objectstoretest"

	"github.com/aws/smithy-go/logging"
)

// TestSDKLogsGoToTheServiceLog, on SeaweedFS: a round trip through an
// s3:// store writes nothing to stderr (the AWS SDK's default logger
// wrote a plain-text "SDK ... WARN Response has no supported checksum"
// line there for every object downloaded, into the JSON log), and what
// the SDK logs reaches the logger WithLogger set, as JSON, its warnings
// at level Warn.
func TestSDKLogsGoToTheServiceLog(t *testing.T) {
	ctx := context.Background()
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	stderr := captureStderr(t)
	var logged bytes.Buffer
	s, err := Open(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.WithLogger(slog.New(slog.NewJSONHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	src, files := mustGeneration(t, 1<<20)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	if err := s.Download(ctx, "gen-1", filepath.Join(t.TempDir(), "gen-1"), files, 0, nil); err != nil {
		t.Fatal(err)
	}
	if out := stderr(); out != "" {
		t.Errorf("a round trip wrote to stderr:\n%s", out)
	}

	if got := s.client.Options().Logger; got != logging.Logger(s.sdk) {
		t.Fatalf("the S3 client logs to %T, not to the store's logger", got)
	}
	s.sdk.Logf(logging.Warn, "retrying request %s, attempt %d", "GetObject", 2)
	line := strings.TrimSpace(logged.String())
	for _, want := range []string{`"level":"WARN"`, `"msg":"retrying request GetObject, attempt 2"`, `"source":"aws-sdk"`} {
		if !strings.Contains(line, want) {
			t.Errorf("the SDK's warning was logged as %s; it lacks %s", line, want)
		}
	}
}

// captureStderr points os.Stderr at a pipe until the test ends; the
// function it returns closes the pipe and returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	restore := func() string {
		if os.Stderr == w {
			os.Stderr = saved
			w.Close()
			return <-done
		}
		return ""
	}
	t.Cleanup(func() { restore() })
	return restore
}
