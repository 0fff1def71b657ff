package index

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bolt "go.etcd.io/bbolt"
)

// updateBase writes the search index of an incremental build: the base's
// segments shared, the documents of d written into new segments, which
// are then merged into one beside the base's largest.
func (b *Builder) updateBase(d *changedIDs) error {
	start := time.Now()
	dst := filepath.Join(b.dir, bleveDirName)
	linked, err := shareSegments(filepath.Join(b.base.dir, bleveDirName), dst)
	if err != nil {
		return err
	}
	// The background merges of the update leave the base's large segment
	// alone: a segment is merged only while its live documents are under
	// half MaxSegmentSize (mergeplan), and the large one holds more than
	// half the base's profiles, since the changes are a tenth at most.
	config := map[string]interface{}{"scorchMergePlanOptions": map[string]interface{}{"MaxSegmentSize": b.base.meta.Profiles}}
	idx, err := bleve.OpenUsing(dst, config)
	if err != nil {
		// bleve returns a typed nil on error: keep it out of b.idx
		return fmt.Errorf("open the shared search index: %w", err)
	}
	b.idx = idx
	b.opts.Logger.Info("segments of the previous generation shared", "previous", b.build.Base, "linked", linked)
	if err := b.applyChanges(d); err != nil {
		return err
	}
	if err := b.mergeNewSegments(); err != nil {
		return err
	}
	if err := b.countDead(); err != nil {
		return err
	}
	b.build.Indexed, b.build.Deleted = len(d.index), len(d.remove)
	if err := b.closeStores(); err != nil {
		return err
	}
	b.opts.Logger.Info("search index updated", "indexed", b.build.Indexed, "deleted", b.build.Deleted,
		"dead_documents", b.build.DeadDocuments, "duration", time.Since(start).Round(time.Millisecond))
	return removeObsoleteSegments(dst)
}

// applyChanges deletes the documents of removed profiles and writes those
// of changed and new ones, read from the new profile store, in batches
// as the build's.
func (b *Builder) applyChanges(d *changedIDs) error {
	db, err := bolt.Open(filepath.Join(b.dir, profilesName), 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("open new profile store: %w", err)
	}
	defer db.Close()
	batch := b.idx.NewBatch()
	for _, id := range d.remove {
		batch.Delete(id)
	}
	size := 0
	err = db.View(func(tx *bolt.Tx) error {
		profiles := tx.Bucket(bucketProfiles)
		// a store written whole is the size of a full build's, and its
		// look-ups lie all over it
		pages := pageRelease{release: func() error { return releaseResident(db, tx.Size()) }}
		for _, id := range d.index {
			if err := pages.lookedUp(); err != nil {
				return err
			}
			n, err := addDocument(batch, id, profiles.Get([]byte(id)), b.opts.withoutStoredProfiles)
			if err != nil {
				return err
			}
			if size += n; batch.Size() >= b.opts.BatchSize || size >= b.opts.BatchBytes {
				if err := b.idx.Batch(batch); err != nil {
					return fmt.Errorf("index batch: %w", err)
				}
				batch, size = b.idx.NewBatch(), 0
			}
		}
		return nil
	})
	if err == nil && batch.Size() > 0 {
		err = b.idx.Batch(batch)
	}
	if err != nil {
		return fmt.Errorf("update the search index: %w", err)
	}
	return nil
}

// addDocument adds the document of the profile stored under id with value
// v to batch (a copy of v: the batch outlives the transaction it was read
// in) and returns its size.
func addDocument(batch *bleve.Batch, id string, v []byte, withoutStored bool) (int, error) {
	if v == nil {
		return 0, fmt.Errorf("profile %q missing from the new profile store", id)
	}
	p, err := decodeProfile(id, v)
	if err != nil {
		return 0, err
	}
	v = bytes.Clone(v)
	if withoutStored {
		v = nil
	}
	doc := newDocument(p).bleveDocument(id, v)
	if err := batch.IndexAdvanced(doc); err != nil {
		return 0, fmt.Errorf("index profile %q: %w", id, err)
	}
	return doc.Size(), nil
}

// mergeNewSegments merges every segment but the base's large one into
// one, in one task, as the full build's commit merges all of them: a
// search then walks two term dictionaries, and the large segment, with
// most of the documents, is not written again.
func (b *Builder) mergeNewSegments() error {
	s, err := scorchOf(b.idx)
	if err != nil {
		return fmt.Errorf("merge segments: %w", err)
	}
	if err := waitPersisted(s); err != nil {
		return err
	}
	for range maxForcedMerges {
		if n, err := fileSegments(s); err != nil || n <= 2 {
			return err
		}
		opts := mergeplan.SingleSegmentMergePlanOptions
		opts.MaxSegmentSize = int64(b.base.meta.Profiles)
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

// countDead records how many deleted documents the index's segments hold.
func (b *Builder) countDead() error {
	adv, err := b.idx.Advanced()
	if err != nil {
		return fmt.Errorf("count deleted documents: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return fmt.Errorf("count deleted documents: %w", err)
	}
	defer r.Close()
	segs, err := segmentsOf(r)
	if err != nil {
		return err
	}
	live, err := r.DocCount()
	if err != nil {
		return fmt.Errorf("count deleted documents: %w", err)
	}
	b.build.DeadDocuments = int(segs.numbers() - live)
	return nil
}

// indexAll indexes the document of every profile of the new store, as a
// full build indexes them while they are put, and merges the segments
// into one.
func (b *Builder) indexAll() error {
	start := time.Now()
	if err := b.startIndex(); err != nil {
		return err
	}
	db, err := bolt.Open(filepath.Join(b.dir, profilesName), 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("open new profile store: %w", err)
	}
	defer db.Close()
	b.pending, b.pendingBytes = 0, 0
	err = db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketProfiles).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			n, err := addDocument(b.batch, string(k), v, b.opts.withoutStoredProfiles)
			if err != nil {
				return err
			}
			if b.pending, b.pendingBytes = b.pending+1, b.pendingBytes+n; b.pending >= b.opts.BatchSize || b.pendingBytes >= b.opts.BatchBytes {
				if err := b.sendBatch(tx); err != nil {
					return err
				}
			}
		}
		return b.flushIndex()
	})
	if err != nil {
		return err
	}
	b.opts.Logger.Info("search index built from the profile store", "duration", time.Since(start).Round(time.Millisecond))
	return b.finishIndex()
}

// sendBatch hands the batch to the flusher and releases the pages of the
// profile store read so far from the resident memory, as the compaction
// does: the whole store would otherwise become resident while the
// segments are built.
func (b *Builder) sendBatch(tx *bolt.Tx) error {
	if err := b.flusher.send(b.batch); err != nil {
		return err
	}
	b.batch, b.pending, b.pendingBytes = b.idx.NewBatch(), 0, 0
	return releaseResident(tx.DB(), tx.Size())
}
