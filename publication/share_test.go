package publication

import (
	"bytes"
	"compress/bzip2"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/data"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/objectstoretest"
	"companydocs/metrics"
	"companydocs/objectstore"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPublishMovesOnlyWhatIsNew, on SeaweedFS: generation A of 4,000
// records of the embedded sample is published whole; B, an incremental
// ingest of the records one in a hundred of them renamed, built on A,
// uploads only the files whose content the store does not hold (its
// manifest names A's objects for the rest: the large segment, and the
// profile store's base, on which B's profile store is a layer).
// A node serving A downloads only B's new files and takes the rest from
// A; a node on an empty data directory downloads all of B. A damaged
// shared object is found by a node that reads it, as any damaged object
// is. C, built on B, names A's objects too; retiring A keeps the objects
// they name (B still installs and opens on a fresh node); once two full
// generations have replaced B and C, retiring them deletes A's last
// objects with them.
func TestPublishMovesOnlyWhatIsNew(t *testing.T) {
	ctx := context.Background()
	srv := objectstoretest.Start(t)
	srv.Setenv(t)
	pub, meta, objects, out, warn := newPublisher(t, srv.URL())
	src := t.TempDir()
	records := sampleProfiles(t, 4000)

	a := mustPublish(t, pub, src, records, false)
	if a.Shared != 0 || a.Uploaded != a.Bytes {
		t.Fatalf("the first generation uploaded %d of %d bytes, shared %d; want all uploaded", a.Uploaded, a.Bytes, a.Shared)
	}
	serving := newNode(t, meta, objects)
	mustFollow(t, serving, a.Name, a.Bytes)

	b := mustPublish(t, pub, src, renamed(records, 1), true)
	newInB := bytesNotIn(b.Files, a.Files, minShared)
	t.Logf("incremental generation: %d bytes, %d uploaded (%.1f%%), %d shared", b.Bytes, b.Uploaded, 100*float64(b.Uploaded)/float64(b.Bytes), b.Shared)
	if b.Uploaded != newInB || b.Shared != b.Bytes-newInB {
		t.Errorf("the incremental generation uploaded %d bytes and shared %d, want %d and %d", b.Uploaded, b.Shared, newInB, b.Bytes-newInB)
	}
	zap := largestSegment(t, b.Files)
	for _, f := range []objectstore.File{zap, fileOf(t, b.Files, index.ProfilesFile)} {
		if f.Object != a.Name+"/"+f.Path {
			t.Errorf("the incremental generation's %s names object %q, want A's", f.Path, f.Object)
		}
	}
	mustFollow(t, serving, b.Name, bytesNotIn(b.Files, a.Files, 0))
	mustFollow(t, newNode(t, meta, objects), b.Name, b.Bytes)

	t.Run("a damaged shared object", func(t *testing.T) {
		key := objectstoretest.Prefix + zap.Object
		good := srv.Get(t, key)
		bad := bytes.Clone(good)
		bad[len(bad)/2] ^= 0xff
		putWithSum(t, srv, key, bad, zap.SHA256)
		defer putWithSum(t, srv, key, good, zap.SHA256)
		onlyB := newMemMetastore()
		onlyB.pubs[b.Name] = meta.pubs[b.Name]
		_, err := newNode(t, onlyB, objects).f.Sync(ctx)
		if !IsDamage(err) || !strings.Contains(err.Error(), zap.Object) {
			t.Errorf("following B with A's segment damaged: %v; want damage naming %s", err, zap.Object)
		}
	})

	c := mustPublish(t, pub, src, renamed(records, 2), true)
	if largestSegment(t, c.Files).Object != zap.Object {
		t.Errorf("C's segment names %q, want A's object %s", largestSegment(t, c.Files).Object, zap.Object)
	}
	meta.serveAll(c.Name)
	out.Reset()
	pub.Retire(ctx)
	if want := "deleted " + a.Name + " from the object store: every node serves two newer generations; kept "; !strings.Contains(out.String(), want) {
		t.Errorf("retiring A says %q, want %q", out.String(), want)
	}
	kept := under(srv.Keys(t), objectstoretest.Prefix+a.Name+"/")
	t.Logf("retiring A (%d files) kept %d of its objects: %s", len(a.Files), len(kept), strings.TrimSpace(out.String()))
	if want := sharedKeys(a.Name, b.Files, c.Files); !slices.Equal(kept, want) {
		t.Errorf("A's objects after its retirement: %q, want those B and C name: %q", kept, want)
	}
	onlyB := newMemMetastore()
	onlyB.pubs[b.Name] = meta.pubs[b.Name]
	mustFollow(t, newNode(t, onlyB, objects), b.Name, b.Bytes)
	mustFollow(t, newNode(t, meta, objects), c.Name, c.Bytes)

	d := mustPublish(t, pub, src, renamed(records, 3), false)
	e := mustPublish(t, pub, src, renamed(records, 4), false)
	if d.Shared+e.Shared != 0 {
		t.Errorf("full builds shared %d and %d bytes, want none", d.Shared, e.Shared)
	}
	meta.serveAll(e.Name)
	out.Reset()
	pub.Retire(ctx)
	t.Logf("retiring B and C: %s", out.String())
	if !strings.Contains(out.String(), "of retired generations it was the last to share") {
		t.Errorf("retiring B and C says %q, want A's objects deleted", out.String())
	}
	for _, name := range []string{a.Name, b.Name, c.Name} {
		if left := under(srv.Keys(t), objectstoretest.Prefix+name+"/"); len(left) > 0 {
			t.Errorf("objects of %s left once no publication names them: %q", name, left)
		}
	}
	if warn.Len() > 0 {
		t.Errorf("warnings: %s", warn.String())
	}
}

// sampleProfiles decodes the first n records of the embedded sample.
func sampleProfiles(t *testing.T, n int) []*companydocs.Profile {
	t.Helper()
	raw, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(data.Sample)))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*companydocs.Profile{}
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		if len(byID) == n {
			break
		}
		if p, err := ingest.DecodeOffeneRegisterLine(line); err == nil {
			byID[p.ID] = p
		}
	}
	return slices.SortedFunc(maps.Values(byID), func(a, b *companydocs.Profile) int { return strings.Compare(a.ID, b.ID) })
}

// renamed returns ps with one profile in a hundred renamed, a different
// hundredth for each round: what changes between two dumps.
func renamed(ps []*companydocs.Profile, round int) []*companydocs.Profile {
	out := slices.Clone(ps)
	for i := round; i < len(out); i += 100 {
		p := *out[i]
		p.Name += " Neu"
		out[i] = &p
	}
	return out
}

// newPublisher returns a Publisher on the object store at url and a
// metastore in memory, with what it prints and warns of.
func newPublisher(t *testing.T, url string) (*Publisher, *memMetastore, *objectstore.Store, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	objects, err := objectstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { objects.Close() })
	meta, out, warn := newMemMetastore(), &bytes.Buffer{}, &bytes.Buffer{}
	return NewPublisher(meta, objects, out, warn), meta, objects, out, warn
}

// mustPublish builds a generation of ps in dataDir (on the one before when
// incremental) and publishes it.
func mustPublish(t *testing.T, pub *Publisher, dataDir string, ps []*companydocs.Profile, incremental bool) *Published {
	t.Helper()
	p, err := pub.Publish(context.Background(), mustBuild(t, dataDir, ps, incremental))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustBuild builds a generation of ps in dataDir (on the one before when
// incremental) and returns its directory.
func mustBuild(t *testing.T, dataDir string, ps []*companydocs.Profile, incremental bool) string {
	t.Helper()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := index.NewBuilder(dataDir, index.BuilderOptions{Incremental: incremental, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := b.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	m, err := b.Commit(index.Meta{Sources: []string{"sample"}, Summary: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if incremental && (m.Build == nil || m.Build.Kind != index.BuildIncremental) {
		t.Fatalf("built %+v, want an incremental build", m.Build)
	}
	return filepath.Join(dataDir, "index", m.ID)
}

// bytesNotIn sums the files of files at least min bytes long whose
// content (size and SHA-256) no file of earlier has; the smaller ones it
// counts whole.
func bytesNotIn(files, earlier []objectstore.File, min int64) int64 {
	held := map[content]bool{}
	for _, f := range earlier {
		held[contentOf(f)] = true
	}
	var n int64
	for _, f := range files {
		if f.Size < min || !held[contentOf(f)] {
			n += f.Size
		}
	}
	return n
}

// fileOf is the file of files at path.
func fileOf(t *testing.T, files []objectstore.File, path string) objectstore.File {
	t.Helper()
	i := slices.IndexFunc(files, func(f objectstore.File) bool { return f.Path == path })
	if i < 0 {
		t.Fatalf("no %s in the manifest", path)
	}
	return files[i]
}

// largestSegment is the largest segment file of files.
func largestSegment(t *testing.T, files []objectstore.File) objectstore.File {
	t.Helper()
	var zap objectstore.File
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".zap") && f.Size > zap.Size {
			zap = f
		}
	}
	if zap.Path == "" {
		t.Fatal("no segment file in the manifest")
	}
	return zap
}

// sharedKeys are the keys (under the test's prefix) of the objects of
// name the manifests lists name, sorted.
func sharedKeys(name string, lists ...[]objectstore.File) []string {
	var keys []string
	for _, files := range lists {
		for _, f := range files {
			if objectstore.KeyGeneration(f.Object) == name && !slices.Contains(keys, objectstoretest.Prefix+f.Object) {
				keys = append(keys, objectstoretest.Prefix+f.Object)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func under(keys []string, prefix string) []string {
	return slices.DeleteFunc(slices.Clone(keys), func(k string) bool { return !strings.HasPrefix(k, prefix) })
}

// putWithSum writes data as the object key with sum as its SHA-256
// metadata: an object damaged in the store, whose attributes still match
// its manifest.
func putWithSum(t *testing.T, srv *objectstoretest.Server, key string, data []byte, sum string) {
	t.Helper()
	_, err := srv.Client().PutObject(context.Background(), &s3.PutObjectInput{Bucket: &srv.Bucket, Key: &key,
		Body: bytes.NewReader(data), Metadata: map[string]string{"sha256": sum}})
	if err != nil {
		t.Fatal(err)
	}
}

// testNode is a follower on a data directory of its own that counts the
// bytes it downloads.
type testNode struct {
	f       *Follower
	dataDir string
	read    *int64
}

// newNode's follower reports itself every 10 ms, so that its heartbeats
// during an install land in the metastore as a real node's do (and
// retention sees them).
func newNode(t *testing.T, meta Metastore, objects Blobs) testNode {
	t.Helper()
	n := testNode{dataDir: t.TempDir(), read: new(int64)}
	n.f = NewFollower(FollowerConfig{Meta: meta, Objects: countingBlobs{objects, n.read}, DataDir: n.dataDir, Node: t.Name() + "/" + filepath.Base(n.dataDir),
		Interval: 10 * time.Millisecond, Keep: 2, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: metrics.New(),
		Serving: func() string { name, _ := index.ReadCurrent(n.dataDir); return name }})
	return n
}

// mustFollow syncs n, which must then serve name, opened as a server
// opens it, having downloaded want bytes.
func mustFollow(t *testing.T, n testNode, name string, want int64) {
	t.Helper()
	before := *n.read
	got, err := n.f.Sync(context.Background())
	if err != nil || got != name {
		t.Fatalf("follow: %q, %v; want %s", got, err, name)
	}
	if read := *n.read - before; read != want {
		t.Errorf("following %s downloaded %d bytes, want %d", name, read, want)
	}
	g, err := index.Open(filepath.Join(n.dataDir, "index", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// countingBlobs counts the bytes its downloads read.
type countingBlobs struct {
	Blobs
	read *int64
}

func (c countingBlobs) Download(ctx context.Context, name, dir string, files []objectstore.File, rate int64, progress func(done, total int64)) error {
	var done int64
	err := c.Blobs.Download(ctx, name, dir, files, rate, func(d, total int64) {
		*c.read += d - done
		done = d
		if progress != nil {
			progress(d, total)
		}
	})
	return err
}

// memMetastore is a Metastore in memory: what publishing and following
// need of it, without PostgreSQL (postgres/metastore has its own tests).
type memMetastore struct {
	mu         sync.Mutex
	pubs       map[string]Publication
	nodes      map[string]Node
	publishing bool // the publishing lock is held
}

func newMemMetastore() *memMetastore {
	return &memMetastore{pubs: map[string]Publication{}, nodes: map[string]Node{}}
}

// serveAll records every node that reported (the test's followers, which
// report while they install) and one more as serving gen, now.
func (m *memMetastore) serveAll(gen string) {
	nodes, _ := m.IndexNodes(context.Background())
	for _, n := range append(nodes, Node{Node: "node"}) {
		m.Heartbeat(context.Background(), Node{Node: n.Node, Generation: gen})
	}
}

func (m *memMetastore) BeginPublication(_ context.Context, p Publication) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.pubs[p.Name]; ok && old.State == StateLive {
		return nil
	}
	p.State, p.CreatedAt = StateUploading, time.Now()
	m.pubs[p.Name] = p
	return nil
}

func (m *memMetastore) CompletePublication(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pubs[name]
	if !ok || p.State != StateUploading {
		return ErrNotUploading
	}
	p.State, p.PublishedAt = StateLive, time.Now()
	m.pubs[name] = p
	return nil
}

func (m *memMetastore) Publications(context.Context) ([]Publication, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.SortedFunc(maps.Values(m.pubs), func(a, b Publication) int { return strings.Compare(b.Name, a.Name) }), nil
}

func (m *memMetastore) NewestLive(ctx context.Context) (*Publication, error) {
	pubs, _ := m.Publications(ctx)
	for _, p := range pubs {
		if p.State == StateLive {
			return &p, nil
		}
	}
	return nil, nil
}

func (m *memMetastore) LiveNewerThan(ctx context.Context, name string) (int, error) {
	pubs, _ := m.Publications(ctx)
	return len(liveNewerThan(pubs, name)), nil
}

func (m *memMetastore) DeletePublication(_ context.Context, name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pubs, name)
	return nil
}

func (m *memMetastore) Heartbeat(_ context.Context, n Node) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n.HeartbeatAt = time.Now()
	m.nodes[n.Node] = n
	return nil
}

func (m *memMetastore) IndexNodes(context.Context) ([]Node, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.SortedFunc(maps.Values(m.nodes), func(a, b Node) int { return strings.Compare(a.Node, b.Node) }), nil
}

func (m *memMetastore) LockPublishing(context.Context) (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.publishing {
		return nil, errors.New("another publish is running")
	}
	m.publishing = true
	return func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.publishing = false
	}, nil
}

func (m *memMetastore) LiveNodes(_ context.Context, within time.Duration) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, node := range m.nodes {
		if time.Since(node.HeartbeatAt) <= within {
			n++
		}
	}
	return n, nil
}
