package index

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"companydocs"
)

// openTimeout bounds the wait for the profile store's file lock, so that
// opening never hangs on a store another process holds for writing.
const openTimeout = 2 * time.Second

// Generation is one published, read-only index: the bleve index and the
// profile store. It is safe for concurrent use until Close.
type Generation struct {
	dir  string
	meta Meta
	idx  bleve.Index
	db   *bolt.DB
	// lock is a shared flock on meta.json that keeps pruning from deleting
	// the generation while it is open.
	lock *os.File
}

// Open opens the generation in dir read-only. A generation built with a
// version Open cannot read (see oldestReadableVersion) gives ErrVersion.
func Open(dir string) (*Generation, error) {
	g, err := open(dir)
	if err != nil {
		return nil, fmt.Errorf("open index generation %q: %w", dir, err)
	}
	return g, nil
}

func open(dir string) (*Generation, error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	if meta.Version < oldestReadableVersion || meta.Version > IndexVersion {
		return nil, fmt.Errorf("%w (generation has version %d, this program reads versions %d to %d)", ErrVersion, meta.Version, oldestReadableVersion, IndexVersion)
	}
	g := &Generation{dir: dir, meta: meta}
	lock, ok, err := lockFile(filepath.Join(dir, metaName), syscall.LOCK_SH)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, errors.New("generation is being removed")
	}
	g.lock = lock
	if err := g.openStores(); err != nil {
		return nil, errors.Join(err, g.Close())
	}
	return g, nil
}

func (g *Generation) openStores() error {
	var err error
	g.db, err = bolt.Open(filepath.Join(g.dir, profilesName), 0o444,
		&bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return fmt.Errorf("open profile store: %w", err)
	}
	err = g.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketProfiles, bucketNumbers, bucketLEIs} {
			if tx.Bucket(name) == nil {
				return fmt.Errorf("profile store lacks bucket %q", name)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.idx, err = bleve.OpenUsing(filepath.Join(g.dir, bleveDirName), map[string]interface{}{"read_only": true})
	if err != nil {
		return fmt.Errorf("open bleve index: %w", err)
	}
	return nil
}

// ID returns the generation's name, e.g. "gen-20240102T030405.000Z-1a2b3c".
func (g *Generation) ID() string { return g.meta.ID }

// Dir returns the generation's directory.
func (g *Generation) Dir() string { return g.dir }

// Meta returns the generation's meta.json.
func (g *Generation) Meta() Meta { return g.meta }

// Count returns the number of profiles in the generation.
func (g *Generation) Count() int { return g.meta.Profiles }

// Profile returns the profile with the given id; nil, nil when absent.
func (g *Generation) Profile(id string) (*companydocs.Profile, error) {
	var p *companydocs.Profile
	err := g.db.View(func(tx *bolt.Tx) error {
		var err error
		p, err = getProfile(tx, id)
		return err
	})
	return p, err
}

// ByNumber returns every profile with register type t and number, whatever
// its court, former court or suffix.
func (g *Generation) ByNumber(t companydocs.RegisterType, number string) ([]*companydocs.Profile, error) {
	return g.byKey(bucketNumbers, numberKey(t, number))
}

// ByLEI returns the profiles linked to lei.
func (g *Generation) ByLEI(lei companydocs.LEI) ([]*companydocs.Profile, error) {
	return g.byKey(bucketLEIs, string(lei))
}

func (g *Generation) byKey(bucket []byte, key string) ([]*companydocs.Profile, error) {
	var out []*companydocs.Profile
	err := g.db.View(func(tx *bolt.Tx) error {
		var err error
		out, err = profilesByKey(tx, bucket, key)
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
	if g.idx != nil {
		errs = append(errs, g.idx.Close())
	}
	if g.db != nil {
		errs = append(errs, g.db.Close())
	}
	if g.lock != nil {
		errs = append(errs, g.lock.Close())
	}
	return errors.Join(errs...)
}
