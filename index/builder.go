package index

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// Defaults of BuilderOptions.
const (
	DefaultKeep       = 2
	DefaultBatchSize  = 5000
	DefaultBatchBytes = 64 << 20
)

// BuilderOptions configure a Builder. The zero value is usable.
type BuilderOptions struct {
	// Keep is the number of published generations kept after a commit (the
	// new one and its predecessors); default DefaultKeep.
	Keep int
	// BatchSize is the number of profiles per bleve batch and bbolt write
	// transaction; default DefaultBatchSize.
	BatchSize int
	// BatchBytes ends a batch early once its bleve documents take this much
	// memory (document.Size); default DefaultBatchBytes. Real profiles are
	// a few kilobytes and never reach it before BatchSize; it keeps a dump
	// of huge records from holding thousands of them at once.
	BatchBytes int
	// SkipMerge leaves the bleve segments unmerged at commit (faster build,
	// slower searches); meant for tests.
	SkipMerge bool
	// NoChanges leaves the change record (changes.db) out: the commit then
	// does not compare the new profiles with the previous generation's.
	NoChanges bool
	// Incremental builds the search index on the previous generation's
	// when it can: its segments are shared and only the documents of
	// changed, new and removed profiles are written (incremental.go).
	// Without it, or when the previous generation does not qualify, every
	// document is indexed anew.
	Incremental bool
	// Logger receives progress; default slog.Default().
	Logger *slog.Logger
	// withoutStoredProfiles leaves the profiles out of the bleve
	// documents, as generations before IndexVersion 9 do: for the tests
	// that read such a generation.
	withoutStoredProfiles bool
}

func (o BuilderOptions) withDefaults() BuilderOptions {
	if o.Keep < 1 {
		o.Keep = DefaultKeep
	}
	if o.BatchSize < 1 {
		o.BatchSize = DefaultBatchSize
	}
	if o.BatchBytes < 1 {
		o.BatchBytes = DefaultBatchBytes
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Builder writes a new generation into a temporary directory next to the
// live one. It is the profile sink of the ingest: Put, Get and ByNumber see
// every profile put so far, flushed or not. Commit publishes the generation,
// Abort discards it. A Builder is safe for concurrent use, though puts are
// serialised.
type Builder struct {
	mu           sync.Mutex
	opts         BuilderOptions
	dataDir      string
	dir          string
	lock         *os.File
	db           *bolt.DB
	tx           *bolt.Tx // open write transaction of the current batch
	idx          bleve.Index
	batch        *bleve.Batch
	pending      int // profiles in the current batch
	pendingBytes int // memory of its bleve documents
	flusher      *batchFlusher
	counts       Meta
	done         bool
	// previous is the generation CURRENT named when the build started,
	// which the change record compares with; previousNote says why there
	// is none.
	previous     string
	previousNote string
	changes      *ChangeSummary
	// base is the generation an incremental build shares segments with;
	// nil for a full build, which indexes every document as it is put.
	base  *baseGeneration
	build BuildInfo
	// delta is the base's profile store as an incremental build's puts
	// read it (delta.go); nil for a full build
	delta *deltaBase
	// changed lists what an incremental build changed on its base, for
	// the change record; nil when it compares the whole stores
	changed *changedIDs
	// layer is set when an incremental build publishes its profile store
	// as a layer on the base's (layerbuild.go); layers are then the new
	// generation's layers and sharedSums the base's checksums of the
	// files it shares. mergeLayers is set when the base's layers are at
	// their most: the new layer holds theirs and the build's changes, on
	// the base's profiles.db alone.
	layer, mergeLayers bool
	layers             []string
	sharedSums         []FileSum
}

// NewBuilder takes the build lock of dataDir (ErrBuildInProgress if another
// build holds it), removes leftovers of killed builds and starts a new
// generation in index/.building-<...>.
func NewBuilder(dataDir string, opts BuilderOptions) (*Builder, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(indexDir(dataDir), 0o755); err != nil {
		return nil, fmt.Errorf("create index dir: %w", err)
	}
	lock, ok, err := lockFile(filepath.Join(indexDir(dataDir), lockName), syscall.LOCK_EX)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, ErrBuildInProgress
	}
	b := &Builder{opts: opts, dataDir: dataDir, lock: lock}
	if err := b.start(); err != nil {
		b.cleanup()
		return nil, err
	}
	return b, nil
}

func (b *Builder) start() error {
	if err := removeLeftovers(b.dataDir); err != nil {
		return err
	}
	orphan, err := sweepOrphan(b.dataDir)
	if err != nil {
		return err
	}
	if orphan != "" {
		b.opts.Logger.Warn("removed a generation a killed ingest renamed but never published", "generation", orphan)
	}
	b.notePrevious()
	b.chooseBase()
	b.openDelta()
	dir, err := os.MkdirTemp(indexDir(b.dataDir), buildingPrefix)
	if err != nil {
		return fmt.Errorf("create build dir: %w", err)
	}
	b.dir = dir
	// The build is thrown away if the process dies, so the profile store
	// skips fsync per transaction; Commit syncs once at the end.
	b.db, err = bolt.Open(filepath.Join(dir, profilesName), 0o644,
		&bolt.Options{Timeout: time.Second, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return fmt.Errorf("create profile store: %w", err)
	}
	if err := b.db.Update(createBuckets); err != nil {
		return err
	}
	if b.tx, err = b.db.Begin(true); err != nil {
		return fmt.Errorf("begin profile batch: %w", err)
	}
	if b.base != nil {
		// the documents are written at commit, once the changes are known
		return nil
	}
	return b.startIndex()
}

// startIndex creates the bleve index of a build that indexes every
// document as it is put.
func (b *Builder) startIndex() error {
	m, err := newMapping()
	if err != nil {
		return err
	}
	idx, err := bleve.NewUsing(filepath.Join(b.dir, bleveDirName), m, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, nil)
	if err != nil {
		// idx is a nil *indexImpl: stored in b.idx, cleanup would call its Close
		return fmt.Errorf("create bleve index: %w", err)
	}
	b.idx = idx
	b.batch = b.idx.NewBatch()
	b.flusher = newBatchFlusher(b.idx)
	return nil
}

// notePrevious records the generation the change record will compare with:
// the one CURRENT names now.
func (b *Builder) notePrevious() {
	name, err := readCurrent(b.dataDir)
	switch {
	case errors.Is(err, ErrNoGeneration):
		b.previousNote = NoteNoPrevious
	case err != nil:
		b.previousNote = err.Error()
	default:
		b.previous = name
	}
}

// Previous returns the generation the change record compares with, the one
// CURRENT named when the build started; "" when there was none.
func (b *Builder) Previous() string { return b.previous }

// Dir returns the temporary directory the generation is built in.
func (b *Builder) Dir() string { return b.dir }

// Get returns the profile stored under id, nil, nil when absent.
func (b *Builder) Get(id string) (*companydocs.Profile, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return nil, err
	}
	if b.delta != nil {
		return b.getOnBase(id)
	}
	return getProfile(b.tx, id)
}

// ByNumber returns every stored profile with register type t and number,
// whatever its court, former court or suffix.
func (b *Builder) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return nil, err
	}
	if b.delta != nil {
		return b.byNumberOnBase(t, number)
	}
	return profilesByKey(b.tx, bucketNumbers, numberKey(t, number))
}

// Put inserts p or replaces the profile stored under p.ID.
func (b *Builder) Put(p *companydocs.Profile) error {
	if p == nil || p.ID == "" {
		return errors.New("put profile: empty id")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return err
	}
	v, err := encodeProfile(p)
	if err != nil {
		return err
	}
	if b.delta != nil {
		if stored, err := b.putOnBase(p, v); err != nil || !stored {
			return err
		}
	} else if err := b.putWhole(p, v); err != nil {
		return err
	}
	b.pending++
	if b.pending >= b.opts.BatchSize || b.pendingBytes >= b.opts.BatchBytes {
		return b.flush()
	}
	return nil
}

// putWhole is Put of a build that writes the whole store: p replaces
// the profile stored under its id, and its document is indexed.
func (b *Builder) putWhole(p *companydocs.Profile, v []byte) error {
	old, err := getProfile(b.tx, p.ID)
	if err != nil {
		return err
	}
	if err := putProfile(b.tx, p, v, old); err != nil {
		return err
	}
	if b.idx != nil {
		if err := b.index(p, v); err != nil {
			return err
		}
	}
	b.count(old, -1)
	b.count(p, +1)
	return nil
}

// index adds the document of p, whose stored value is v, to the batch.
func (b *Builder) index(p *companydocs.Profile, v []byte) error {
	if b.opts.withoutStoredProfiles {
		v = nil
	}
	doc := newDocument(p).bleveDocument(p.ID, v)
	if err := b.batch.IndexAdvanced(doc); err != nil {
		return fmt.Errorf("index profile %q: %w", p.ID, err)
	}
	b.pendingBytes += doc.Size()
	return nil
}

// Count returns the number of profiles stored so far.
func (b *Builder) Count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts.Profiles
}

func (b *Builder) usable() error {
	if b.done {
		return errors.New("index builder already committed or aborted")
	}
	return b.flusher.err()
}

func (b *Builder) count(p *companydocs.Profile, n int) {
	if p == nil {
		return
	}
	m := &b.counts
	m.Profiles += n
	if p.Source == companydocs.SourceDiscovery {
		m.Discovery += n
	} else {
		m.RegistryCache += n
	}
	if p.Removed {
		m.Removed += n
	}
	if p.Verified {
		m.Verified += n
	}
	if len(p.LEIs) > 0 {
		m.WithLEI += n
	}
}

// flush commits the profile transaction and hands the bleve batch to the
// flusher, which indexes it while the next batch fills.
func (b *Builder) flush() error {
	if err := b.tx.Commit(); err != nil {
		b.tx = nil
		return fmt.Errorf("commit profile batch: %w", err)
	}
	var err error
	if b.tx, err = b.db.Begin(true); err != nil {
		return fmt.Errorf("begin profile batch: %w", err)
	}
	// Profile ids are hashes, so a batch of puts reads leaves all over the
	// file; released less often, the file was mostly resident again in
	// between (BENCHMARKS.md, "Figures behind code comments").
	if err := releaseResident(b.db, b.tx.Size()); err != nil {
		return fmt.Errorf("release profile store pages: %w", err)
	}
	if b.delta != nil {
		if err := b.delta.tx.release(); err != nil {
			return fmt.Errorf("release the previous profile store's pages: %w", err)
		}
	}
	if b.batch != nil && b.batch.Size() > 0 {
		if err := b.flusher.send(b.batch); err != nil {
			return err
		}
		b.batch = b.idx.NewBatch()
	}
	b.pending, b.pendingBytes = 0, 0
	return nil
}

// Abort discards the generation under construction and releases the lock.
func (b *Builder) Abort() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	b.done = true
	return b.cleanup()
}

// cleanup closes everything, removes the build directory and unlocks.
func (b *Builder) cleanup() error {
	b.releaseBase()
	errs := []error{b.closeStores()}
	if b.dir != "" {
		errs = append(errs, os.RemoveAll(b.dir))
	}
	if b.lock != nil {
		errs = append(errs, b.lock.Close())
		b.lock = nil
	}
	return errors.Join(errs...)
}

func (b *Builder) closeStores() error {
	var errs []error
	if b.flusher != nil {
		errs = append(errs, b.flusher.close())
		b.flusher = nil
	}
	if b.tx != nil {
		errs = append(errs, b.tx.Rollback())
		b.tx = nil
	}
	if b.db != nil {
		errs = append(errs, b.db.Close())
		b.db = nil
	}
	if b.idx != nil {
		errs = append(errs, b.idx.Close())
		b.idx = nil
	}
	return errors.Join(errs...)
}

// batchFlusher indexes bleve batches on its own goroutine so that parsing
// and indexing overlap; it holds at most one batch in flight, which keeps
// memory flat.
type batchFlusher struct {
	idx     bleve.Index
	ch      chan *bleve.Batch
	done    chan struct{}
	mu      sync.Mutex
	failure error
}

func newBatchFlusher(idx bleve.Index) *batchFlusher {
	f := &batchFlusher{idx: idx, ch: make(chan *bleve.Batch), done: make(chan struct{})}
	go f.run()
	return f
}

func (f *batchFlusher) run() {
	defer close(f.done)
	for batch := range f.ch {
		if f.err() != nil {
			continue
		}
		if err := f.idx.Batch(batch); err != nil {
			f.mu.Lock()
			f.failure = fmt.Errorf("index batch: %w", err)
			f.mu.Unlock()
		}
	}
}

func (f *batchFlusher) send(b *bleve.Batch) error {
	if err := f.err(); err != nil {
		return err
	}
	f.ch <- b
	return nil
}

func (f *batchFlusher) err() error {
	if f == nil { // a build that indexes at commit
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failure
}

// close waits for the batch in flight and returns the first error.
func (f *batchFlusher) close() error {
	close(f.ch)
	<-f.done
	return f.err()
}
