package index

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"time"

	"companydocs/internal/atomicfile"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bolt "go.etcd.io/bbolt"
)

// Commit finishes the generation: it flushes the last batch, merges the
// bleve segments, writes meta.json, re-opens the generation read-only to
// check it (document count equals profile count, a sample lookup works),
// renames it to its final gen-... name, points CURRENT at it and prunes old
// generations. meta supplies Sources and Summary; the counts, version, id
// and creation time are filled in. On error the build is discarded and the
// live generation stays untouched.
func (b *Builder) Commit(meta Meta) (Meta, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return Meta{}, err
	}
	b.done = true
	m, err := b.commit(meta)
	if err != nil {
		return Meta{}, errors.Join(err, b.cleanup())
	}
	return m, nil
}

func (b *Builder) commit(meta Meta) (Meta, error) {
	start := time.Now()
	if err := b.finishStores(); err != nil {
		return Meta{}, err
	}
	if err := b.countSegments(); err != nil {
		return Meta{}, err
	}
	name, err := newGenerationName(time.Now())
	if err != nil {
		return Meta{}, err
	}
	m := b.counts
	m.Version, m.ID, m.CreatedAt = IndexVersion, name, time.Now().UTC()
	m.Sources, m.Summary, m.Changes = meta.Sources, meta.Summary, b.changes
	m.Build, m.ProfileLayers = &b.build, b.layers
	hashStart := time.Now()
	if m.Files, err = checksumFiles(b.dir); err != nil {
		return Meta{}, err
	}
	if err := b.checkShared(m.Files); err != nil {
		return Meta{}, err
	}
	b.opts.Logger.Info("generation files checksummed", "files", len(m.Files), "duration", time.Since(hashStart).Round(time.Millisecond))
	if err := writeMeta(b.dir, m); err != nil {
		return Meta{}, err
	}
	if err := verifyGeneration(b.dir, m, false); err != nil {
		return Meta{}, err
	}
	if err := b.publish(name); err != nil {
		return Meta{}, err
	}
	b.opts.Logger.Info("index generation published", "generation", name,
		"profiles", m.Profiles, "commit_duration", time.Since(start).Round(time.Millisecond))
	removed, err := prune(b.dataDir, b.opts.Keep)
	if err != nil {
		b.opts.Logger.Warn("pruning old index generations failed", "error", err)
	} else if len(removed) > 0 {
		b.opts.Logger.Info("old index generations removed", "generations", removed)
	}
	err = b.lock.Close()
	b.lock = nil
	return m, err
}

// finishStores writes the last batch, merges segments, closes both stores
// and compacts the profile store.
func (b *Builder) finishStores() error {
	if err := b.tx.Commit(); err != nil {
		b.tx = nil
		return fmt.Errorf("commit profile batch: %w", err)
	}
	b.tx = nil
	if err := b.flushIndex(); err != nil {
		return err
	}
	// The profile store is complete: closing it before the merge unmaps its
	// pages, which the build has read and which would otherwise count in the
	// process's resident memory on top of the merge's.
	db := b.db
	b.db = nil
	if err := db.Close(); err != nil {
		return fmt.Errorf("close profile store: %w", err)
	}
	// The build leaves garbage behind (the ingest raises the GC target);
	// returning it to the system before the merge keeps it from counting in
	// the resident memory on top of the mapped segments.
	debug.FreeOSMemory()
	if b.base != nil {
		return b.finishOnBase()
	}
	// bleve merges on one goroutine: the compaction takes the other core.
	compacted := b.compactAndRecord(true)
	err := b.finishIndex()
	return errors.Join(err, <-compacted)
}

// compactAndRecord compacts the profile store (when compact) and then
// writes the change record, which reads the store, on a goroutine of
// their own; the channel gives their error.
func (b *Builder) compactAndRecord(compact bool) <-chan error {
	compacted := make(chan error, 1)
	go func() {
		var err error
		if compact {
			start := time.Now()
			err = compactProfiles(b.dir, compactTxBytes)
			if err == nil {
				b.opts.Logger.Info("profile store compacted", "duration", time.Since(start).Round(time.Millisecond))
			}
		}
		if err == nil {
			err = b.recordChanges()
		}
		compacted <- err
	}()
	return compacted
}

// flushIndex hands the last batch to the flusher and waits for it; a
// build that indexes at commit has neither.
func (b *Builder) flushIndex() error {
	if b.flusher == nil {
		return nil
	}
	if b.batch.Size() > 0 {
		if err := b.flusher.send(b.batch); err != nil {
			return err
		}
	}
	flusher := b.flusher
	b.flusher = nil
	return flusher.close()
}

// recordChanges writes the change record unless BuilderOptions.NoChanges.
func (b *Builder) recordChanges() error {
	if b.opts.NoChanges {
		return nil
	}
	start := time.Now()
	sum, err := writeChanges(b.dir, b.dataDir, b.previous, b.previousNote, b.changed)
	if err != nil {
		return err
	}
	b.changes = &sum
	log := b.opts.Logger.Info
	if sum.Note != "" && sum.Note != NoteNoPrevious {
		log = b.opts.Logger.Warn
	}
	log("changes recorded", "previous", sum.Previous, "note", sum.Note, "profiles", sum.Profiles,
		"by_field", sum.ByField, "added", sum.Added, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// finishIndex merges the bleve segments, closes the index and removes the
// segment files it no longer uses.
func (b *Builder) finishIndex() error {
	if !b.opts.SkipMerge {
		start := time.Now()
		if err := b.mergeSegments(); err != nil {
			return err
		}
		b.opts.Logger.Info("index segments merged", "duration", time.Since(start).Round(time.Millisecond))
	}
	if err := b.closeStores(); err != nil {
		return err
	}
	return removeObsoleteSegments(filepath.Join(b.dir, bleveDirName))
}

// removeObsoleteSegments deletes the segment files of the bleve index in
// dir that its current snapshot does not use. scorch deletes merged-away
// segments in the background and may not have done so by Close (more than
// a gigabyte of them at national scale); a published generation is never written again, so
// they would only take disk space. Nothing is deleted unless every
// segment of the snapshot is a file.
func removeObsoleteSegments(dir string) error {
	used, err := snapshotFiles(dir)
	if err != nil || len(used) == 0 {
		return err
	}
	var store string
	for path := range used {
		store = filepath.Dir(path)
	}
	entries, err := os.ReadDir(store)
	if err != nil {
		return fmt.Errorf("remove obsolete segments: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(store, e.Name())
		if filepath.Ext(e.Name()) == ".zap" && !used[path] {
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("remove obsolete segments: %w", err)
			}
		}
	}
	return nil
}

// snapshotFiles returns the segment files of the current snapshot of the
// bleve index in dir; none if a segment is not a file.
func snapshotFiles(dir string) (map[string]bool, error) {
	idx, err := bleve.OpenUsing(dir, map[string]interface{}{"read_only": true})
	if err != nil {
		return nil, fmt.Errorf("open index for cleanup: %w", err)
	}
	defer idx.Close()
	adv, err := idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("open index for cleanup: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("open index for cleanup: %w", err)
	}
	defer r.Close()
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("open index for cleanup: reader is %T, not a scorch snapshot", r)
	}
	used := map[string]bool{}
	for _, s := range snap.Segments() {
		file, ok := s.Segment().(interface{ Path() string })
		if !ok {
			return nil, nil
		}
		used[file.Path()] = true
	}
	return used, nil
}

// compactTxBytes bounds the write transactions of the compaction: the
// source pages they read are released after each.
const compactTxBytes = 64 << 20

// putSize is what a put holds in the heap until its write transaction
// commits: its key and value, the key's copy, and the node's element
// (bbolt's inode, slices and flags). A register number's entry is a key
// of about 30 bytes and no value: counted by its bytes alone, a
// transaction of compactTxBytes held two million of them, and the tenth
// generation of make bench-generations at 5M, which wrote its store
// whole, peaked at 942 MB of anonymous memory.
func putSize(k, v []byte) int { return 2*len(k) + len(v) + 64 }

// compactProfiles rewrites the profile store of the generation in dir in
// key order with full pages. The build inserts profiles in the order of
// their hashed ids, which leaves leaf pages about a third empty (and the
// store twice as large as its data); searches read the copy.
func compactProfiles(dir string, txBytes int) error {
	path := filepath.Join(dir, profilesName)
	tmp := path + ".compact"
	src, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("compact profile store: %w", err)
	}
	defer src.Close()
	dst, err := bolt.Open(tmp, 0o644, &bolt.Options{Timeout: openTimeout, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return fmt.Errorf("compact profile store: %w", err)
	}
	err = copyStore(dst, src, txBytes)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = atomicfile.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("compact profile store: %w", err)
	}
	return nil
}

// copyStore copies the buckets of src into dst in key order, like
// bolt.Compact, and drops the pages of src it has read from the resident
// memory after every write transaction: the compaction runs while the
// index segments merge, and the whole source (gigabytes at national
// scale) would otherwise become resident on top of the merge.
func copyStore(dst, src *bolt.DB, txBytes int) error {
	return src.View(func(stx *bolt.Tx) error {
		for _, name := range storeBuckets {
			if err := copyBucket(dst, stx, name, txBytes); err != nil {
				return err
			}
		}
		return nil
	})
}

func copyBucket(dst *bolt.DB, stx *bolt.Tx, name []byte, txBytes int) error {
	c := stx.Bucket(name).Cursor()
	k, v := c.First()
	for {
		err := dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(name)
			if err != nil {
				return err
			}
			b.FillPercent = 1 // keys arrive in order: fill every page
			for size := 0; k != nil && size < txBytes; k, v = c.Next() {
				if err := b.Put(k, v); err != nil {
					return err
				}
				size += putSize(k, v)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("copy bucket %s: %w", name, err)
		}
		if err := releaseResident(stx.DB(), stx.Size()); err != nil {
			return err
		}
		if k == nil {
			return nil
		}
	}
}

// mergeSegments merges the bleve index into one segment: a search then
// walks one term dictionary instead of many. One forced merge of all
// segments in one task does it; it is repeated, a bounded number of
// times, if more than one segment is still left.
func (b *Builder) mergeSegments() error {
	s, err := scorchOf(b.idx)
	if err != nil {
		return fmt.Errorf("merge segments: %w", err)
	}
	if err := waitPersisted(s); err != nil {
		return err
	}
	for range maxForcedMerges {
		if n, err := fileSegments(s); err != nil || n <= 1 {
			return err
		}
		opts := mergeplan.SingleSegmentMergePlanOptions
		// One task over every segment: bleve's default merges 10 at a
		// time and then merges the results again, which writes every
		// document twice (BENCHMARKS.md, "Figures behind code comments").
		opts.SegmentsPerMergeTask = math.MaxInt32
		if err := s.ForceMerge(context.Background(), &opts); err != nil {
			return fmt.Errorf("merge segments: %w", err)
		}
		if err := waitPersisted(s); err != nil {
			return err
		}
	}
	return nil
}

// maxForcedMerges bounds the forced merges of a commit.
const maxForcedMerges = 3

// scorchOf returns the scorch index under idx. The merge and the wait for
// persistence work on scorch itself; an index that is not scorch (after
// an upgrade of bleve, say) is an error, never a commit that skips them.
func scorchOf(idx bleve.Index) (*scorch.Scorch, error) {
	adv, err := idx.Advanced()
	if err != nil {
		return nil, err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil, fmt.Errorf("bleve index is %T, not scorch", adv)
	}
	return s, nil
}

// scorchStats returns the statistics of s, whose counters say how many
// segments there are and which epoch is persisted.
func scorchStats(s *scorch.Scorch) (*scorch.Stats, error) {
	st, ok := s.Stats().(*scorch.Stats)
	if !ok {
		return nil, fmt.Errorf("scorch statistics are %T, not *scorch.Stats", s.Stats())
	}
	return st, nil
}

// fileSegments returns the number of persisted segments of the index.
func fileSegments(s *scorch.Scorch) (uint64, error) {
	st, err := scorchStats(s)
	if err != nil {
		return 0, err
	}
	return atomic.LoadUint64(&st.TotFileSegmentsAtRoot), nil
}

// persistTimeout bounds the wait for scorch's background persister.
const persistTimeout = 10 * time.Minute

// waitPersisted waits until scorch has written its current root (segments
// in memory and the result of a merge) to disk: Close does not wait for it.
func waitPersisted(s *scorch.Scorch) error {
	st, err := scorchStats(s)
	if err != nil {
		return fmt.Errorf("wait for persistence: %w", err)
	}
	deadline := time.Now().Add(persistTimeout)
	for {
		root := atomic.LoadUint64(&st.CurRootEpoch)
		persisted := atomic.LoadUint64(&st.LastPersistedEpoch)
		inMemory := atomic.LoadUint64(&st.TotMemorySegmentsAtRoot)
		if persisted >= root && inMemory == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bleve index not persisted after %s (epoch %d of %d)", persistTimeout, persisted, root)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// publish renames the build directory to its final name and points CURRENT
// at it (publishDir).
func (b *Builder) publish(name string) error {
	err := publishDir(b.dataDir, b.dir, name)
	if err == nil || !errors.Is(err, errNotRenamed) {
		b.dir = ""
	}
	return err
}

// errNotRenamed marks a publishDir that failed before the directory was
// renamed: it is still where it was.
var errNotRenamed = errors.New("generation not renamed")

// publishDir renames the finished generation in dir to index/name and
// points CURRENT at it, with PUBLISHING naming it meanwhile (see
// sweepOrphan). The caller holds the build lock.
func publishDir(dataDir, dir, name string) error {
	final := filepath.Join(indexDir(dataDir), name)
	if err := writeNameFile(dataDir, publishingName, name); err != nil {
		return errors.Join(errNotRenamed, err)
	}
	if err := os.Rename(dir, final); err != nil {
		return errors.Join(errNotRenamed, fmt.Errorf("rename generation: %w", err), removePublishing(dataDir))
	}
	if err := atomicfile.SyncDir(indexDir(dataDir)); err != nil {
		os.RemoveAll(final)
		return err
	}
	if err := writeCurrent(dataDir, name); err != nil {
		os.RemoveAll(final)
		return err
	}
	return removePublishing(dataDir)
}

// verifyGeneration opens the finished generation as a server would (Open:
// sizes and checksums, bbolt page counts, document count) and checks
// further that the profile store holds meta.Profiles profiles and that a
// sample profile reads back from both stores. A downloaded generation is
// opened with every bbolt file checked whole first (openWith).
func verifyGeneration(dir string, m Meta, downloaded bool) error {
	g, err := openWith(dir, downloaded)
	if err != nil {
		return fmt.Errorf("verify generation: %w", err)
	}
	defer g.Close()
	// A build counts what its layer holds, against what it recorded; a
	// node that installs the bytes it built, checksummed, reads the record.
	depth := countHeld
	if downloaded && g.Checksummed() {
		depth = countRecorded
	}
	if err := g.checkCounts(depth); err != nil {
		return fmt.Errorf("verify generation: %w", err)
	}
	if _, err := g.Changes(); errors.Is(err, ErrChangesDamaged) {
		// The bytes are damaged, not the process short of something: a
		// node that downloaded them fetches them anew, not again and again.
		return reject(RejectStructure, "verify generation: %w", err)
	} else if err != nil && (m.Changes != nil || !errors.Is(err, ErrNoChanges)) {
		return fmt.Errorf("verify generation: %w", err)
	}
	if g.meta.Profiles != m.Profiles {
		return fmt.Errorf("verify generation: meta.json counts %d profiles, %d were put", g.meta.Profiles, m.Profiles)
	}
	var sample string
	err = g.store.view(func(t storeTx) error {
		if k, _ := t.cursor().first(); k != nil {
			sample = string(k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("verify generation: %w", err)
	}
	return verifySample(g, sample)
}

func verifySample(g *Generation, id string) error {
	if id == "" {
		return nil
	}
	p, err := g.Profile(id)
	if err != nil || p == nil || p.ID != id {
		return fmt.Errorf("verify generation: sample profile %q unreadable: %v", id, err)
	}
	found, err := g.hasDocument(id)
	if err != nil {
		return fmt.Errorf("verify generation: %w", err)
	} else if !found {
		return fmt.Errorf("verify generation: sample profile %q not in the search index", id)
	}
	return nil
}
