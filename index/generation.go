package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"

	"companydocs"
	"companydocs/register"
)

// openTimeout bounds the wait for the profile store's file lock, so that
// opening never hangs on a store another process holds for writing.
const openTimeout = 2 * time.Second

// Generation is one published, read-only index: the bleve index and the
// profile store. It is safe for concurrent use until Close.
type Generation struct {
	dir   string
	meta  Meta
	idx   bleve.Index
	store *layeredStore // the profile store, its layers read as one
	// lock is a shared flock on meta.json that keeps pruning from deleting
	// the generation while it is open.
	lock *os.File
	// faulted is set by the first call that faulted (see recoverFault).
	faulted atomic.Bool
	// changes is the change record, opened by the first Changes.
	changesOnce sync.Once
	changes     *ChangeSet
	changesErr  error
	// ranks orders the documents by id (readIDRanks)
	ranks atomic.Pointer[[]uint32]
	// deadCounts holds the deleted documents' counts by term (segments)
	deadCounts *deadCounts
	// novel holds the terms its largest segment lacks (segments.fuzzy)
	novel *novelTerms
}

// Open verifies the generation in dir and opens it read-only. With the
// checksums of meta.json, every file must have its recorded size and
// SHA-256 (but the change record, which Changes checks, so that a damaged
// one never keeps the generation from serving); a generation written
// before checksums existed gets structural
// checks only (see Checksummed). Both bbolt files must hold every page
// their meta page counts (checkBoltFile; a downloaded generation's are
// checked whole, see openWith), and the index must hold as many documents as
// meta.json counts profiles. A refused generation gives a RejectError
// saying why; a version Open cannot read (see oldestReadableVersion) gives
// one that wraps ErrVersion.
func Open(dir string) (*Generation, error) {
	return openWith(dir, false)
}

// openWith is Open, or for a generation this node downloaded: every file
// checked against meta.json, the change record too, and every bbolt file
// checked whole before it is read (openChecked).
func openWith(dir string, downloaded bool) (*Generation, error) {
	g, err := open(dir, downloaded)
	if err != nil {
		return nil, fmt.Errorf("open index generation %q: %w", dir, err)
	}
	return g, nil
}

func open(dir string, downloaded bool) (*Generation, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		var syntax *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syntax) || errors.As(err, &typ) {
			return nil, &RejectError{Reason: RejectMeta, Err: err}
		}
		return nil, &RejectError{Reason: ioReason(err, RejectMeta), Err: err}
	}
	if meta.Version < oldestReadableVersion || meta.Version > IndexVersion {
		return nil, reject(RejectVersion, "%w (generation has version %d, this program reads versions %d to %d)", ErrVersion, meta.Version, oldestReadableVersion, IndexVersion)
	}
	if err := checkLayers(meta); err != nil {
		return nil, err
	}
	// The generation's name is its directory's, which CURRENT names; a
	// copy keeps the id of the meta.json it was copied with.
	meta.ID = filepath.Base(dir)
	g := &Generation{dir: dir, meta: meta, deadCounts: newDeadCounts(), novel: newNovelTerms()}
	lock, ok, err := lockFile(filepath.Join(dir, metaName), syscall.LOCK_SH)
	if err != nil {
		return nil, &RejectError{Reason: RejectOpen, Err: err}
	} else if !ok {
		return nil, reject(RejectOpen, "generation is being removed")
	}
	g.lock = lock
	if err := g.verifyAndOpen(downloaded); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

// Checksummed reports whether meta.json records the files' checksums, which
// Open checked; generations written before this existed have none.
func (g *Generation) Checksummed() bool { return len(g.meta.Files) > 0 }

// verifyAndOpen checks the files, opens the stores and checks the counts.
// A downloaded generation's files are checked as openWith says.
func (g *Generation) verifyAndOpen(downloaded bool) error {
	files, check := withoutChanges(g.meta.Files), checkBoltFile
	if downloaded {
		files, check = g.meta.Files, checkWholeBoltFile
	}
	if g.Checksummed() {
		if err := verifyFiles(g.dir, files); err != nil {
			return err
		}
	}
	for _, path := range g.boltFiles(downloaded) {
		if err := check(path); err != nil {
			return err
		}
	}
	err := g.openStores()
	if err == nil {
		depth := countDocuments
		if !g.Checksummed() {
			depth = countHeld
		}
		err = g.checkCounts(depth)
	}
	if err != nil && g.Checksummed() {
		// The files are as published, so the failure is the process's:
		// short of file descriptors, bleve skips the segments it cannot
		// open and then counts too few documents. Retried.
		return &RejectError{Reason: RejectOpen, Err: err}
	}
	return err
}

// boltFiles returns the paths of the generation's bbolt files: the
// profile store's base and layers, bleve's root, and with changes the
// change record when meta.json lists it.
func (g *Generation) boltFiles(changes bool) []string {
	var paths []string
	for _, name := range profileFiles(g.meta) {
		paths = append(paths, filepath.Join(g.dir, name))
	}
	paths = append(paths, filepath.Join(g.dir, bleveDirName, "store", "root.bolt"))
	if _, listed := changesSum(g.meta.Files); changes && listed {
		paths = append(paths, filepath.Join(g.dir, changesName))
	}
	return paths
}

// openStores opens both stores. A panic of bbolt or bleve on a file the
// checks above let through (a generation without checksums) is an error.
func (g *Generation) openStores() (err error) {
	defer recoverOpen(&err)
	g.store, err = openLayers(g.dir, profileFiles(g.meta), openReadOnly)
	if err != nil {
		return reject(RejectOpen, "open profile store: %w", err)
	}
	if err := g.store.checkBuckets(); err != nil {
		return err
	}
	// bleve returns a typed nil on error: keep it out of g.idx, whose
	// Close would call it.
	idx, err := bleve.OpenUsing(filepath.Join(g.dir, bleveDirName), map[string]interface{}{"read_only": true})
	if err != nil {
		return reject(RejectOpen, "open bleve index: %w", err)
	}
	g.idx = idx
	return nil
}

// recoverOpen turns a panic while opening into a RejectStructure error.
func recoverOpen(err *error) {
	if r := recover(); r != nil {
		*err = reject(RejectStructure, "opening the stores failed: %v", r)
	}
}

// countDepth says what checkCounts counts.
type countDepth int

const (
	// countDocuments counts the index's documents alone.
	countDocuments countDepth = iota
	// countRecorded counts the stored profiles too, each layer of the
	// profile store by the net its build recorded: the files' checksums
	// vouch for bytes that build counted by what they hold.
	countRecorded
	// countHeld counts the stored profiles by what every file holds.
	countHeld
)

// checkCounts checks that the index holds as many documents as meta.json
// counts profiles, and from countRecorded on that the profile store holds
// as many, which reads every page of the base once a process.
func (g *Generation) checkCounts(depth countDepth) (err error) {
	defer recoverOpen(&err)
	docs, err := g.idx.DocCount()
	if err != nil {
		return reject(RejectStructure, "count documents: %w", err)
	}
	if int(docs) != g.meta.Profiles {
		return reject(RejectStructure, "the index holds %d documents, meta.json counts %d profiles", docs, g.meta.Profiles)
	}
	if depth == countDocuments {
		return nil
	}
	stored, err := g.storedProfiles(depth == countRecorded)
	if err != nil {
		return err
	}
	if stored != g.meta.Profiles {
		return reject(RejectStructure, "the profile store holds %d profiles, meta.json counts %d", stored, g.meta.Profiles)
	}
	return nil
}

// storedProfiles counts the profiles of the store (storeTx.count).
func (g *Generation) storedProfiles(recorded bool) (int, error) {
	return g.store.count(recorded)
}

// ID returns the generation's name, e.g. "gen-20240102T030405.000Z-1a2b3c":
// its directory's name.
func (g *Generation) ID() string { return g.meta.ID }

// Dir returns the generation's directory.
func (g *Generation) Dir() string { return g.dir }

// Meta returns the generation's meta.json, with ID set to the directory's
// name.
func (g *Generation) Meta() Meta { return g.meta }

// Count returns the number of profiles in the generation.
func (g *Generation) Count() int { return g.meta.Profiles }

// Profile returns the profile with the given id; nil, nil when absent.
func (g *Generation) Profile(id string) (p *companydocs.Profile, err error) {
	if err := g.usable(); err != nil {
		return nil, err
	}
	defer recoverFault(&err, g, debug.SetPanicOnFault(true))
	err = g.store.lookup(func(t storeTx) error {
		var err error
		p, err = t.profile(id)
		return err
	})
	return p, err
}

// ByNumber returns every profile with register type t and number, whatever
// its court, former court or suffix.
func (g *Generation) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	return g.byKey(bucketNumbers, numberKey(t, number))
}

// ByLEI returns the profiles linked to lei.
func (g *Generation) ByLEI(lei register.LEI) ([]*companydocs.Profile, error) {
	return g.byKey(bucketLEIs, string(lei))
}

func (g *Generation) byKey(bucket []byte, key string) (out []*companydocs.Profile, err error) {
	if err := g.usable(); err != nil {
		return nil, err
	}
	defer recoverFault(&err, g, debug.SetPanicOnFault(true))
	err = g.store.lookup(func(t storeTx) error {
		var err error
		out, err = t.byKey(bucket, key)
		return err
	})
	return out, err
}

// hasDocument reports whether the bleve index holds a document with id.
func (g *Generation) hasDocument(id string) (bool, error) {
	req := bleve.NewSearchRequestOptions(query.NewDocIDQuery([]string{id}), 1, 0, false)
	res, err := g.idx.Search(req)
	if err != nil {
		return false, fmt.Errorf("look up document %q: %w", id, err)
	}
	return res.Total == 1, nil
}

// Close closes the generation; no method may be called afterwards.
func (g *Generation) Close() error {
	var errs []error
	if g.faulted.Load() {
		// The stores may hold locks the fault left taken: closing them
		// could block for ever. Their mappings stay until the process ends.
		errs = append(errs, fmt.Errorf("index generation %s faulted: its stores are left open", g.ID()))
		g.idx, g.store = nil, nil
	}
	if g.idx != nil {
		errs = append(errs, g.idx.Close())
	}
	if g.changes != nil {
		errs = append(errs, g.changes.close())
	}
	if g.store != nil {
		errs = append(errs, g.store.close())
	}
	if g.lock != nil {
		errs = append(errs, g.lock.Close())
	}
	return errors.Join(errs...)
}
