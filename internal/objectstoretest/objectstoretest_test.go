package objectstoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"
)

// TestMissingBinarySaysHowToBuild: without the weed binary the error
// names the script that builds it (the tests fail on it, never skip).
func TestMissingBinarySaysHowToBuild(t *testing.T) {
	t.Setenv("COMPANYDOCS_CACHE", t.TempDir())
	_, err := Run(context.Background(), t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "scripts/objectstore.sh") {
		t.Fatalf("Run without a build: %v; want an error naming scripts/objectstore.sh", err)
	}
}

// TestBlobRoundTrip: through gocloud.dev/blob and s3blob, with the URL
// and credentials the server hands out, an object of a few MiB is listed,
// read back byte-identical, read in a range and deleted; while the store
// is down a write fails, and after Stop and Start, and after Crash and
// Start, the bucket holds what it held and takes writes again.
func TestBlobRoundTrip(t *testing.T) {
	began := time.Now()
	srv := Start(t)
	t.Logf("started in %v", time.Since(began).Round(time.Millisecond))
	srv.Setenv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	want := make([]byte, 5<<20+123)
	_, _ = rand.Read(want)

	bucket := mustOpen(t, ctx, srv.URL())
	defer func() { bucket.Close() }()
	mustWrite(t, ctx, bucket, "gen-1/segment.zap", want)
	mustWrite(t, ctx, bucket, "gen-1/meta.json", []byte(`{"files":[]}`))
	if got := mustList(t, ctx, bucket, "gen-1/"); got != "gen-1/meta.json:12 gen-1/segment.zap:5243003" {
		t.Errorf("list: %s", got)
	}
	if got := mustRead(t, ctx, bucket, "gen-1/segment.zap", 0, -1); !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(want))
	}
	if got := mustRead(t, ctx, bucket, "gen-1/segment.zap", 3<<20, 1000); !bytes.Equal(got, want[3<<20:3<<20+1000]) {
		t.Fatalf("range read: %d bytes, not bytes 3 MiB to 3 MiB + 1000", len(got))
	}
	if err := bucket.Delete(ctx, "gen-1/meta.json"); err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.Attributes(ctx, "gen-1/meta.json"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Fatalf("deleted object: %v; want NotFound", err)
	}

	began = time.Now()
	srv.Stop()
	t.Logf("stopped in %v", time.Since(began).Round(time.Millisecond))
	if err := bucket.WriteAll(ctx, "gen-2/meta.json", []byte("{}"), nil); err == nil {
		t.Fatal("wrote to a stopped object store")
	}
	mustRestart(t, ctx, srv)
	if got := mustRead(t, ctx, bucket, "gen-1/segment.zap", 0, -1); !bytes.Equal(got, want) {
		t.Fatalf("after Stop and Start: read back %d bytes, not the %d written", len(got), len(want))
	}
	mustWrite(t, ctx, bucket, "gen-2/meta.json", []byte("{}"))
	if got := mustList(t, ctx, bucket, ""); got != "gen-1/segment.zap:5243003 gen-2/meta.json:2" {
		t.Errorf("list after Stop and Start: %s", got)
	}

	srv.Crash()
	mustRestart(t, ctx, srv)
	if got := mustList(t, ctx, bucket, ""); got != "gen-1/segment.zap:5243003 gen-2/meta.json:2" {
		t.Errorf("list after Crash and Start: %s", got)
	}
	if got := mustRead(t, ctx, bucket, "gen-1/segment.zap", 0, -1); !bytes.Equal(got, want) {
		t.Fatalf("after Crash and Start: read back %d bytes, not the %d written", len(got), len(want))
	}
	mustWrite(t, ctx, bucket, "gen-3/meta.json", []byte("{}"))
}

func mustRestart(tb testing.TB, ctx context.Context, srv *Server) {
	tb.Helper()
	began := time.Now()
	if err := srv.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("started again in %v", time.Since(began).Round(time.Millisecond))
}

func mustOpen(tb testing.TB, ctx context.Context, url string) *blob.Bucket {
	tb.Helper()
	b, err := blob.OpenBucket(ctx, url)
	if err != nil {
		tb.Fatalf("open %s: %v", url, err)
	}
	return b
}

func mustWrite(tb testing.TB, ctx context.Context, b *blob.Bucket, key string, data []byte) {
	tb.Helper()
	if err := b.WriteAll(ctx, key, data, nil); err != nil {
		tb.Fatalf("write %s: %v", key, err)
	}
}

// mustRead reads length bytes of key from offset (length -1: to the end).
func mustRead(tb testing.TB, ctx context.Context, b *blob.Bucket, key string, offset, length int64) []byte {
	tb.Helper()
	r, err := b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		tb.Fatalf("read %s: %v", key, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("read %s: %v", key, err)
	}
	return data
}

// mustList lists the objects under prefix as "key:size" separated by
// spaces.
func mustList(tb testing.TB, ctx context.Context, b *blob.Bucket, prefix string) string {
	tb.Helper()
	var out []string
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return strings.Join(out, " ")
		}
		if err != nil {
			tb.Fatalf("list %q: %v", prefix, err)
		}
		out = append(out, obj.Key+":"+strconv.FormatInt(obj.Size, 10))
	}
}
