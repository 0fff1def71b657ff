package objectstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs/internal/objectstoretest"

	"gocloud.dev/blob"
)

// TestPrefixRequiredAndChecked: an s3:// URL must name its prefix, and a
// prefix anywhere is a path of names each ending in "/".
func TestPrefixRequiredAndChecked(t *testing.T) {
	dir := t.TempDir()
	const s3 = "s3://bucket?endpoint=http://127.0.0.1:9&region=eu-central-1&use_path_style=true"
	for _, c := range []struct {
		name, url, prefix string // prefix "-": refused
	}{
		{"s3 with a prefix", s3 + "&prefix=companydocs/", "companydocs/"},
		{"s3 with a nested prefix", s3 + "&prefix=indexes/prod/", "indexes/prod/"},
		{"s3 without a prefix", s3, "-"},
		{"s3 with an empty prefix", s3 + "&prefix=", "-"},
		{"prefix without a slash", s3 + "&prefix=companydocs", "-"},
		{"absolute prefix", s3 + "&prefix=/companydocs/", "-"},
		{"prefix with ..", s3 + "&prefix=companydocs/../", "-"},
		{"prefix with .", s3 + "&prefix=./", "-"},
		{"prefix with an empty element", s3 + "&prefix=a//", "-"},
		{"prefix with a backslash", s3 + `&prefix=a\b/`, "-"},
		{"prefix with a control character", s3 + "&prefix=a%01/", "-"},
		{"directory", "file://" + dir, ""},
		{"directory with a prefix", "file://" + dir + "?prefix=published/", "published/"},
		{"directory with a bad prefix", "file://" + dir + "?prefix=../", "-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(context.Background(), c.url)
			if c.prefix == "-" {
				if err == nil {
					s.Close()
					t.Fatal("opened")
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Prefix() != c.prefix {
				t.Fatalf("prefix %q, want %q", s.Prefix(), c.prefix)
			}
		})
	}
}

// TestPrefixBoundsAFileStore: on a shared directory with a prefix, the
// store lists, uploads and deletes only under it; Contents names what else
// lies under it (an object of its own top-level name, a top-level
// object). A write that never finishes (a killed publish) leaves its
// temporary file in TMPDIR, outside the prefix, where Contents does not
// see it.
func TestPrefixBoundsAFileStore(t *testing.T) {
	ctx := context.Background()
	dir, tmp := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s, err := Open(ctx, "file://"+dir+"?prefix=companydocs/")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, files := mustGeneration(t, 1<<20)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(dir, "backups", "db.dump")
	under := filepath.Join(dir, "companydocs", "backups", "db.dump")
	top := filepath.Join(dir, "companydocs", "README")
	for _, p := range []string{beside, under, top} {
		mustWrite(t, p, strings.NewReader("not an index"))
	}
	w, err := s.bucket.NewWriter(ctx, "gen-1/killed.zap", &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("half of a file")); err != nil {
		t.Fatal(err)
	}
	temps, _ := filepath.Glob(filepath.Join(tmp, "killed.zap.*.tmp"))
	if len(temps) != 1 {
		t.Fatalf("the unfinished write's temporary file in TMPDIR: %v, want one", temps)
	}

	got, err := s.Contents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Name: "README", Objects: 1}, {Name: "backups/", Objects: 1}, {Name: "gen-1/", Objects: len(files)}}
	if !slices.Equal(got, want) {
		t.Fatalf("Contents = %+v, want %+v", got, want)
	}
	if aborted, err := s.AbortUploads(ctx, "gen-1"); err != nil || len(aborted) != 0 {
		t.Fatalf("AbortUploads on a directory: %v, %v; want none", aborted, err)
	}
	if err := s.Delete(ctx, "gen-1"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{beside, under, top} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s after Delete: %v", p, err)
		}
	}
	w.Close() // ctx is alive: it lands; removed with the test's directory
}

// TestPrefixBoundsAnS3Store, on SeaweedFS: beside the prefix and under it
// lie an object and an incomplete multipart upload that are not the
// store's, and an incomplete upload of a generation's (a killed
// publish's). Contents lists only what lies under the prefix, uploads
// counted; AbortUploads aborts only the generation's upload; Delete of the
// generation leaves every other object.
func TestPrefixBoundsAnS3Store(t *testing.T) {
	ctx := context.Background()
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	s, err := Open(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src, files := mustGeneration(t, 1<<20)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	p := objectstoretest.Prefix
	for _, key := range []string{"backups/db.dump", p + "backups/db.dump", "companydocs-old/gen-1/meta.json"} {
		srv.Put(t, key, []byte("not an index"))
	}
	for _, key := range []string{"backups/big.dump", p + "backups/big.dump", p + "gen-1/" + bigPath, "companydocs-old/gen-1/" + bigPath} {
		srv.BeginUpload(t, key, 1<<20)
	}

	got, err := s.Contents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{Name: "backups/", Objects: 1, Uploads: 1}, {Name: "gen-1/", Objects: len(files), Uploads: 1}}
	if !slices.Equal(got, want) {
		t.Fatalf("Contents = %+v, want %+v", got, want)
	}
	aborted, err := s.AbortUploads(ctx, "gen-1")
	if err != nil || !slices.Equal(aborted, []string{"gen-1/" + bigPath}) {
		t.Fatalf("AbortUploads(gen-1) = %v, %v; want the one under gen-1/", aborted, err)
	}
	if err := s.Delete(ctx, "gen-1"); err != nil {
		t.Fatal(err)
	}
	if keys, want := srv.Keys(t), []string{"backups/db.dump", "companydocs-old/gen-1/meta.json", p + "backups/db.dump"}; !slices.Equal(keys, want) {
		t.Errorf("objects after Delete(gen-1): %q, want %q", keys, want)
	}
	if ups, want := srv.Uploads(t), []string{"backups/big.dump", "companydocs-old/gen-1/" + bigPath, p + "backups/big.dump"}; !slices.Equal(ups, want) {
		t.Errorf("incomplete uploads after AbortUploads(gen-1): %q, want %q", ups, want)
	}
}

// TestPublishAndFetchFailWithinIdleOnAHungStore: against an S3 endpoint
// that accepts connections and never answers, every call of a store whose
// idle bound is 1 s fails within a few seconds, naming what it waited
// for, instead of hanging (a node sets its follow interval as the bound).
func TestPublishAndFetchFailWithinIdleOnAHungStore(t *testing.T) {
	const idle = time.Second
	endpoint := objectstoretest.HungEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "companydocs")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s, err := Open(context.Background(), "s3://generations?prefix=companydocs/&endpoint="+endpoint+"&region=us-east-1&use_path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.WithIdle(idle) != s {
		t.Fatal("WithIdle returns another store")
	}
	src, files := mustGeneration(t, 1<<10)
	for _, c := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"upload", func(ctx context.Context) error { _, err := s.Upload(ctx, "gen-1", src, files); return err }},
		{"download", func(ctx context.Context) error { return s.Download(ctx, "gen-1", t.TempDir(), files, 0, nil) }},
		{"contents", func(ctx context.Context) error { _, err := s.Contents(ctx); return err }},
		{"abort uploads", func(ctx context.Context) error { _, err := s.AbortUploads(ctx, "gen-1"); return err }},
		{"delete", func(ctx context.Context) error { return s.Delete(ctx, "gen-1") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			began := time.Now()
			err := c.call(ctx)
			took := time.Since(began)
			t.Logf("%s after %s: %v", c.name, took.Round(time.Millisecond), err)
			if err == nil {
				t.Fatal("a store that never answers answered")
			}
			if took > 3*idle {
				t.Errorf("failed after %s, want within 3 × the idle bound of %s", took, idle)
			}
		})
	}
}
