package index

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"companydocs/internal/atomicfile"
)

// An incremental build (BuilderOptions.Incremental) writes only the
// profiles that differ from the previous generation's into its profile
// store (delta.go) and indexes no document while the profiles are put.
// At commit it lists the changed, new and removed profiles, shares the
// previous generation's segment files (hard links: zap segments are
// never written again) and writes only the documents of changed and new
// profiles and the deletions of removed ones. It falls back to writing
// the whole store and indexing every document from it when the previous
// generation does not qualify or too much changed. See DESIGN.md,
// "Incremental builds".

// Kinds of BuildInfo.
const (
	BuildFull        = "full"
	BuildIncremental = "incremental"
)

// The shares past which an incremental build indexes every document anew.
// A deleted document stays in its segment until a full build: its terms
// stay in the dictionaries (the typo and completion walks read past them)
// and its bytes on disk and in the page cache. A tenth bounds what a
// search pays for them; at the 1% of records a dump changes, every fifteenth
// build or so is a full one. A change of more than a tenth of the
// profiles costs a sizeable share of a full build anyway, and would make
// the second segment a large one.
const (
	maxChangedShare = 0.10
	maxDeletedShare = 0.10
)

// Reasons of a full build, in BuildInfo.Reason.
const (
	ReasonAsked      = "a full build was asked for"
	ReasonNoPrevious = "no previous generation"
)

// BuildInfo says how a generation's search index was built; meta.json
// carries it as "build".
type BuildInfo struct {
	Kind string `json:"kind"` // BuildFull or BuildIncremental
	// Base is the generation whose segments an incremental build shares.
	Base string `json:"base,omitempty"`
	// Reason says why a build was full.
	Reason string `json:"reason,omitempty"`
	// Indexed and Deleted count the documents an incremental build wrote
	// (changed and new profiles) and deleted (removed ones).
	Indexed int `json:"indexed,omitempty"`
	Deleted int `json:"deleted,omitempty"`
	// DeadDocuments counts the deleted documents the segments still hold:
	// those of changed and removed profiles since the last full build.
	DeadDocuments int `json:"dead_documents,omitempty"`
	// Segments is the number of segment files of the index.
	Segments int `json:"segments"`
}

// baseGeneration is the generation an incremental build shares segments
// with. lock, a shared flock on its meta.json, keeps it from being pruned
// while its files are read and linked.
type baseGeneration struct {
	dir  string
	meta Meta
	lock *os.File
}

// chooseBase decides at the start of a build whether it builds on the
// previous generation, and records in b.build why not.
func (b *Builder) chooseBase() {
	switch {
	case !b.opts.Incremental:
		b.build = BuildInfo{Kind: BuildFull, Reason: ReasonAsked}
		return
	case b.previous == "":
		b.build = BuildInfo{Kind: BuildFull, Reason: ReasonNoPrevious}
		return
	}
	base, err := openBase(filepath.Join(indexDir(b.dataDir), b.previous))
	if err != nil {
		b.fullBecause(fmt.Sprintf("previous generation %s does not qualify: %v", b.previous, err))
		return
	}
	b.base = base
	b.build = BuildInfo{Kind: BuildIncremental, Base: b.previous}
}

// openBase reads the meta.json of the generation in dir and locks it;
// only a generation of this IndexVersion with checksums qualifies.
func openBase(dir string) (*baseGeneration, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case meta.Version != IndexVersion:
		return nil, fmt.Errorf("it has index version %d, this build writes %d", meta.Version, IndexVersion)
	case len(bleveSums(meta.Files)) == 0:
		return nil, errors.New("its meta.json records no checksums of its search index")
	}
	lock, ok, err := lockFile(filepath.Join(dir, metaName), syscall.LOCK_SH)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, errors.New("it is being removed")
	}
	return &baseGeneration{dir: dir, meta: meta, lock: lock}, nil
}

// fullBecause makes the build a full one and says why.
func (b *Builder) fullBecause(reason string) {
	b.build = BuildInfo{Kind: BuildFull, Reason: reason}
	b.opts.Logger.Info("building the search index anew", "reason", reason)
}

// openDelta opens the base's profile store for the puts of an
// incremental build; a store that cannot be read makes the build a full
// one.
func (b *Builder) openDelta() {
	if b.base == nil {
		return
	}
	start := time.Now()
	delta, err := openDeltaBase(b.base.dir, b.base.meta.Profiles)
	if err != nil {
		b.fullBecause(fmt.Sprintf("previous generation %s could not be read: %v", b.previous, err))
		b.releaseBase()
		b.base = nil
		return
	}
	b.delta = delta
	b.opts.Logger.Info("profiles of the previous generation digested", "previous", b.build.Base,
		"profiles", len(delta.digest.entries), "duration", time.Since(start).Round(time.Millisecond))
}

// releaseBase unlocks the base generation; its files are no longer read.
func (b *Builder) releaseBase() {
	if b.delta != nil {
		b.delta.release()
		b.delta = nil
	}
	if b.base != nil && b.base.lock != nil {
		b.base.lock.Close()
		b.base.lock = nil
	}
}

// bleveSums returns the checksums of the search index's files among sums.
func bleveSums(sums []FileSum) []FileSum {
	var out []FileSum
	for _, s := range sums {
		if strings.HasPrefix(s.Path, bleveDirName+"/") {
			out = append(out, s)
		}
	}
	return out
}

// finishOnBase writes the search index of a build that indexed nothing
// while the profiles were put: on the base's segments, or every document
// anew. The change record is written meanwhile, as in a full build. With
// the index on the base's segments, the delta becomes a layer on the
// base's profile store (layerProfiles) when its limits allow; otherwise
// the store is written whole and compacted.
func (b *Builder) finishOnBase() error {
	defer b.releaseBase()
	changes, err := b.planOnBase()
	if err != nil {
		return err
	}
	if changes == nil || !b.layer {
		if err := b.materialize(); err != nil {
			return err
		}
	}
	b.changed = changes
	// a layer is written from the store, which is then deleted; a store
	// written whole is as compact as a compaction makes it (11 s at 5M)
	compacted := b.compactAndRecord(false)
	if changes != nil {
		err = b.updateBase(changes)
	} else {
		err = b.indexAll()
	}
	if err = errors.Join(err, <-compacted); err != nil || !b.layer {
		return err
	}
	return b.layerProfiles(changes)
}

// planOnBase compares what the build put with the base's profiles and
// returns the documents to write; nil, with b.build saying why, when the
// index is to be built anew.
func (b *Builder) planOnBase() (*changedIDs, error) {
	start := time.Now()
	base := b.base.meta
	limit := int(maxChangedShare * float64(base.Profiles))
	d, err := b.delta.planDelta(b.dir, limit)
	if err != nil {
		return nil, err
	}
	if reason := fullBuildReason(base, d); reason != "" {
		b.fullBecause(reason)
		return nil, nil
	}
	// The new generation's checksums are computed from the files it
	// shares: a damaged file of the base must not be vouched for anew.
	if err := verifyFiles(b.base.dir, bleveSums(base.Files)); err != nil {
		b.fullBecause(fmt.Sprintf("previous generation %s is damaged: %v", b.build.Base, err))
		return nil, nil
	}
	b.opts.Logger.Info("profiles compared with the previous generation", "previous", b.build.Base,
		"changed", d.changed, "added", d.added, "removed", d.removed, "duration", time.Since(start).Round(time.Millisecond))
	b.chooseLayer()
	return d, nil
}

// fullBuildReason says why the changes d against base call for a full
// build ("" when they do not): too many changed profiles, or too many
// deleted documents once these are deleted too.
func fullBuildReason(base Meta, d *changedIDs) string {
	if d.overLimit {
		return fmt.Sprintf("more than %.0f%% of the %d profiles changed", 100*maxChangedShare, base.Profiles)
	}
	dead := d.changed + d.removed
	if base.Build != nil {
		dead += base.Build.DeadDocuments
	}
	live := base.Profiles - d.removed + d.added
	if share := float64(dead) / float64(max(1, live+dead)); share > maxDeletedShare {
		return fmt.Sprintf("%d deleted documents would make %.1f%% of the index, more than %.0f%%", dead, 100*share, 100*maxDeletedShare)
	}
	return ""
}

// changedIDs are the profiles whose documents an incremental build writes
// or deletes, in id order.
type changedIDs struct {
	index  []string // changed and new profiles
	remove []string // profiles no longer held
	// changed, added and removed count them
	changed, added, removed int
	// overLimit is set when more changed than the limit given; the lists
	// are then incomplete
	overLimit bool
}

// shareSegments makes dst a copy of the bleve index in src in which the
// segment files are hard links to src's, where the file system allows
// (copies otherwise), and every other file (scorch's root.bolt, which the
// update writes, the index's meta) is copied. src is only read.
func shareSegments(src, dst string) (linked int, err error) {
	err = filepath.WalkDir(src, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(target, 0o755)
		case !e.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", path)
		case filepath.Ext(path) == ".zap" && os.Link(path, target) == nil:
			linked++
			return nil
		}
		return copyFileSynced(path, target)
	})
	if err == nil {
		err = syncTree(dst)
	}
	if err != nil {
		return linked, fmt.Errorf("share the segments of %s: %w", src, err)
	}
	return linked, nil
}

// copyFileSynced copies src to a new file dst and syncs it.
func copyFileSynced(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

// syncTree syncs every directory under dir, dir included, so that the
// links and copies in them are durable.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		return atomicfile.SyncDir(path)
	})
}

// countSegments records the number of segment files of the finished
// search index.
func (b *Builder) countSegments() error {
	used, err := snapshotFiles(filepath.Join(b.dir, bleveDirName))
	if err != nil {
		return err
	}
	b.build.Segments = len(used)
	return nil
}
