package publish

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"
	"companydocs/internal/objectstoretest"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"

	"github.com/jackc/pgx/v5"
)

// rawBucket is a test's hand on the whole bucket behind a setup's
// --index-source, around the store: keys are the bucket's, not the
// prefix's.
type rawBucket interface {
	put(t *testing.T, key string)
	keys(t *testing.T) []string
	beginUpload(t *testing.T, key string)
	uploads(t *testing.T) []string
}

// prefixSetup is an e2e.FollowSetup whose --index-source names the prefix
// objectstoretest.Prefix of a bucket the test also reaches whole.
type prefixSetup struct {
	e2e.FollowSetup
	bucket rawBucket
}

// newPrefixS3Setup publishes to SeaweedFS, under objectstoretest.Prefix.
func newPrefixS3Setup(t *testing.T) prefixSetup {
	_, url := e2e.StartTestCluster(t)
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	return prefixSetup{e2e.FollowSetup{PublisherDir: t.TempDir(), Store: url, Source: srv.URL()}, s3Bucket{srv}}
}

// newPrefixFileSetup publishes to a shared directory, under
// objectstoretest.Prefix of it.
func newPrefixFileSetup(t *testing.T) prefixSetup {
	_, url := e2e.StartTestCluster(t)
	dir := t.TempDir()
	return prefixSetup{e2e.FollowSetup{PublisherDir: t.TempDir(), Store: url,
		Source: "file://" + filepath.ToSlash(dir) + "?prefix=" + objectstoretest.Prefix}, fileBucket(dir)}
}

// forEachPrefixStore runs fn on a shared directory and on S3.
func forEachPrefixStore(t *testing.T, fn func(t *testing.T, f prefixSetup)) {
	t.Run("shared directory", func(t *testing.T) { fn(t, newPrefixFileSetup(t)) })
	t.Run("S3", func(t *testing.T) { fn(t, newPrefixS3Setup(t)) })
}

type s3Bucket struct{ srv *objectstoretest.Server }

func (b s3Bucket) put(t *testing.T, key string) { b.srv.Put(t, key, []byte("not an index")) }

func (b s3Bucket) keys(t *testing.T) []string { return b.srv.Keys(t) }

func (b s3Bucket) beginUpload(t *testing.T, key string) {
	b.srv.BeginUpload(t, key, 1<<20)
}

func (b s3Bucket) uploads(t *testing.T) []string { return b.srv.Uploads(t) }

// fileBucket is a shared directory: a key is a file, its metadata beside
// it in "<file>.attrs"; it has no multipart uploads.
type fileBucket string

func (b fileBucket) put(t *testing.T, key string) {
	p := filepath.Join(string(b), filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("not an index"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b fileBucket) keys(t *testing.T) []string {
	var keys []string
	err := filepath.WalkDir(string(b), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".attrs") {
			return err
		}
		rel, err := filepath.Rel(string(b), p)
		keys = append(keys, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func (b fileBucket) beginUpload(t *testing.T, key string) {
	t.Fatal("a shared directory has no multipart uploads")
}

func (b fileBucket) uploads(t *testing.T) []string { return nil }

// under returns the keys of keys that start with prefix.
func under(keys []string, prefix string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

// mustHave fails unless every key of want is in have.
func mustHave(t *testing.T, what string, have, want []string) {
	t.Helper()
	for _, k := range want {
		if !slices.Contains(have, k) {
			t.Errorf("%s: %s is gone (left: %q)", what, k, have)
		}
	}
}

// leftAloneLines returns the "left alone: ..." lines of a publish's
// output.
func leftAloneLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "left alone: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// TestPublishOwnsItsPrefix, on a shared directory and on S3: objects that
// are not the index's lie under its prefix (backups/db.dump, a README at
// the top) and beside it (backups/db.dump of the bucket). Two publishes
// later every one of them is still there; each publish names the two
// under the prefix, one line each, and never the one beside it, nor a
// generation it recorded.
func TestPublishOwnsItsPrefix(t *testing.T) {
	forEachPrefixStore(t, testPublishOwnsItsPrefix)
}

func testPublishOwnsItsPrefix(t *testing.T, f prefixSetup) {
	p := objectstoretest.Prefix
	foreign := []string{"backups/db.dump", p + "README", p + "backups/db.dump"}
	for _, k := range foreign {
		f.bucket.put(t, k)
	}
	want := []string{
		"left alone: " + p + "README is not a generation this metastore records (1 object)",
		"left alone: " + p + "backups/ is not a generation this metastore records (1 object)",
	}
	var gens []string
	for i, records := range []int{1000, 2000} {
		gen, out := f.PublishSaying(t, records)
		gens = append(gens, gen)
		if got := leftAloneLines(out); !slices.Equal(got, want) {
			t.Errorf("publish %d says\n%s\nwant the lines %q", i+1, out, want)
		}
		mustHave(t, fmt.Sprintf("after publish %d", i+1), f.bucket.keys(t), foreign)
	}
	for _, g := range gens {
		if len(under(f.bucket.keys(t), p+g+"/")) == 0 {
			t.Errorf("no object under %s%s/", p, g)
		}
	}
	if beside := slices.DeleteFunc(f.bucket.keys(t), func(k string) bool { return strings.HasPrefix(k, p) }); !slices.Equal(beside, []string{"backups/db.dump"}) {
		t.Errorf("beside the prefix: %q, want only backups/db.dump", beside)
	}
}

// TestPublishAbortsItsIncompleteUploads, on S3: before a publish lie
// incomplete multipart uploads (one part of 1 MiB each, never completed):
// two of the generation being published, left by its killed runs; one of
// a publication a killed publish left uploading two hours ago (with an
// object); one of a publication another publish began a minute ago; one
// of the live generation before; and two that are not the index's, one
// under the prefix and one beside it. The publish aborts its own two and
// the old publication's one (deleting its object and record), and says
// so; the young publication, the live generation's upload and the
// foreign ones are left, the one under the prefix named. Two publishes
// later, with a node serving the third, the first generation is retired
// and its upload aborted with it.
func TestPublishAbortsItsIncompleteUploads(t *testing.T) {
	f := newPrefixS3Setup(t)
	ctx := context.Background()
	p := objectstoretest.Prefix
	db := mustMetastore(t, f.Store)
	first := f.Publish(t, 1000)
	second := e2e.MustBuild(t, f.PublisherDir, 2000, e2e.SampleFile(t)).ID
	const orphan, young = "gen-20000101T000000.000Z-0000aaaa", "gen-20000101T000000.000Z-0000bbbb"
	for _, g := range []struct {
		name string
		age  time.Duration
	}{{orphan, 2 * time.Hour}, {young, time.Minute}} {
		if err := metastore.New(db).BeginPublication(ctx, publication.Publication{Name: g.name, Manifest: []byte("[]")}); err != nil {
			t.Fatal(err)
		}
		mustExec(t, f.Store, `UPDATE published_generations SET created_at = now() - $2::interval WHERE name = $1`, g.name, g.age.String())
		f.bucket.put(t, p+g.name+"/meta.json")
	}
	own := []string{p + second + "/bleve/store/00000001.zap", p + second + "/profiles.db"}
	orphanUpload := p + orphan + "/bleve/store/00000001.zap"
	kept := []string{"backups/big.dump", p + "backups/big.dump", p + first + "/bleve/store/00000009.zap", p + young + "/bleve/store/00000001.zap"}
	for _, k := range slices.Concat(own, []string{orphanUpload}, kept) {
		f.bucket.beginUpload(t, k)
	}
	slices.Sort(kept)

	out, errOut, line, code := e2e.RunCLI(t, "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store)
	if code != 0 {
		t.Fatalf("publish: exit %d %s\n%s%s", code, line, out, errOut)
	}
	t.Logf("publish says:\n%s%s", out, errOut)
	for _, want := range []string{
		"aborted 2 incomplete uploads of " + second + ", left by a killed publish of it\n",
		"deleted " + orphan + " from the object store: a killed publish left it uploading 2h0m0s ago; aborted 1 incomplete upload of it\n",
		"left alone: " + p + "backups/ is not a generation this metastore records (0 objects, 1 incomplete upload)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("publish does not say %q", want)
		}
	}
	if got := leftAloneLines(out); len(got) != 1 {
		t.Errorf("left alone: %q, want only %sbackups/", got, p)
	}
	if ups := f.bucket.uploads(t); !slices.Equal(ups, kept) {
		t.Errorf("incomplete uploads after the publish: %q, want %q", ups, kept)
	}
	keys := f.bucket.keys(t)
	if len(under(keys, p+orphan+"/")) != 0 || len(under(keys, p+young+"/")) != 1 {
		t.Errorf("objects of the killed publications: %q; want %s's gone, %s's kept", keys, orphan, young)
	}
	if names := publicationNames(t, db); slices.Contains(names, orphan) || !slices.Contains(names, young) {
		t.Errorf("publications %q: want %s's record gone, %s's kept", names, orphan, young)
	}

	// retention: with a node on the third, the fourth retires the first
	third := f.Publish(t, 2500)
	if err := metastore.New(db).Heartbeat(ctx, publication.Node{Node: "a", Generation: third, StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	_, out = f.PublishSaying(t, 3000)
	if want := "deleted " + first + " from the object store: every node serves two newer generations; aborted 1 incomplete upload of it\n"; !strings.Contains(out, want) {
		t.Errorf("the fourth publish says\n%s\nwant %q", out, want)
	}
	kept = slices.DeleteFunc(kept, func(k string) bool { return strings.HasPrefix(k, p+first+"/") })
	if ups := f.bucket.uploads(t); !slices.Equal(ups, kept) {
		t.Errorf("incomplete uploads after the first was retired: %q, want %q", ups, kept)
	}
}

// TestRetentionWaitsForAnInstallingNode, on a shared directory: four
// generations live, node a serves the third, node b reported 10 minutes
// ago that it installs the first (a slow download). The publish of the
// fourth deletes nothing; once b serves the fourth, publishing again
// deletes the first.
func TestRetentionWaitsForAnInstallingNode(t *testing.T) {
	f := newPrefixFileSetup(t)
	ctx := context.Background()
	db := mustMetastore(t, f.Store)
	first := f.Publish(t, 1000)
	f.Publish(t, 1500)
	third := f.Publish(t, 2000)
	for _, n := range []publication.Node{{Node: "a", Generation: third}, {Node: "b", Installing: first}} {
		if err := metastore.New(db).Heartbeat(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, f.Store, `UPDATE index_nodes SET heartbeat_at = now() - interval '10 minutes' WHERE node = 'b'`)
	fourth, out := f.PublishSaying(t, 2500)
	if strings.Contains(out, "deleted") {
		t.Errorf("the fourth publish, node b installing %s:\n%s\nwant nothing deleted", first, out)
	}
	if len(under(f.bucket.keys(t), objectstoretest.Prefix+first+"/")) == 0 {
		t.Errorf("%s is gone from the store while node b installs it", first)
	}
	if err := metastore.New(db).Heartbeat(ctx, publication.Node{Node: "b", Generation: fourth}); err != nil {
		t.Fatal(err)
	}
	out, errOut, line, code := e2e.RunCLI(t, "publish", "--data-dir", f.PublisherDir, "--index-source", f.Source, "--store", f.Store)
	if code != 0 || !strings.Contains(out, "deleted "+first+" ") {
		t.Errorf("publishing again, every node on the third or newer: exit %d %s\n%s%s\nwant %s deleted", code, line, out, errOut, first)
	}
}

// mustMetastore opens the metastore at url until t ends.
func mustMetastore(t *testing.T, url string) *postgres.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// mustExec runs one SQL statement on the metastore, for what no method
// does (a record made older).
func mustExec(t *testing.T, url, sql string, args ...any) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

// publicationNames lists the recorded publications.
func publicationNames(t *testing.T, db *postgres.DB) []string {
	t.Helper()
	pubs, err := metastore.New(db).Publications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pubs {
		names = append(names, p.Name)
	}
	return names
}
