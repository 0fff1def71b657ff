package index

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// An incremental build stores only what differs from its base: the
// profile store it writes while the ingest puts (the delta) holds the
// changed and new profiles, and a digest of the base's profiles (a hash
// of each id and of its value) tells a put that changed nothing, nearly
// every put of a dump where a hundredth of the records changed, without
// reading the base. What the ingest reads back (Get, ByNumber) is what a
// whole store would answer: the delta's profiles, and the base's that
// were put unchanged in this build. At commit the base's profiles not
// put are the removed ones. Where the store is to be written whole (a
// full build after all, or a profile store at its layers' limit), the
// delta and the base's profiles put unchanged are merged into one
// (materialize). See DESIGN.md, "Incremental builds".

// deltaBase is the base of an incremental build as the puts read it: its
// profile store, open for the whole build, and the digest.
type deltaBase struct {
	store  *layeredStore
	close  func()
	tx     storeTx
	digest *profileDigest
	// pages releases what the look-ups of the base's profiles read: the
	// changed profiles of a dump lie all over its file
	pages pageRelease
}

// openDeltaBase opens the profile store of the base generation in dir
// (checked as the change record checks it) and digests its profiles,
// about as many as its meta.json counts.
func openDeltaBase(dir string, profiles int) (_ *deltaBase, err error) {
	store, closeStore, err := openPreviousStore(dir)
	if err != nil {
		return nil, err
	}
	d := &deltaBase{store: store, close: closeStore}
	defer func() {
		if err != nil {
			d.release()
		}
	}()
	if d.tx, err = store.begin(); err != nil {
		return nil, err
	}
	d.pages.release = d.tx.release
	if d.digest, err = digestStore(d.tx, profiles); err != nil {
		return nil, err
	}
	return d, nil
}

// release ends the read transaction and closes the base's store.
func (d *deltaBase) release() {
	d.tx.rollback()
	d.close()
}

// profileDigest is a hash of the id and of the value of each profile of
// a store, ordered by the id's hash, and which of them a build put.
// 16 bytes a profile, where the ids alone would take 40.
type profileDigest struct {
	seed    maphash.Seed
	entries []digestEntry
	put     []uint64 // a bit per entry
}

type digestEntry struct{ id, value uint64 }

// digestStore digests every profile of tx, releasing the pages it read
// as it goes. Two ids with the same hash are an error: the digest could
// not tell them apart.
func digestStore(tx storeTx, profiles int) (*profileDigest, error) {
	d := &profileDigest{seed: maphash.MakeSeed()}
	d.entries = make([]digestEntry, 0, profiles)
	c, pages := tx.cursor(), pageRelease{release: tx.release}
	for k, v := c.first(); k != nil; k, v = c.next() {
		d.entries = append(d.entries, digestEntry{id: maphash.Bytes(d.seed, k), value: maphash.Bytes(d.seed, v)})
		if err := pages.walked(len(k) + len(v)); err != nil {
			return nil, err
		}
	}
	if err := tx.release(); err != nil {
		return nil, err
	}
	slices.SortFunc(d.entries, func(a, b digestEntry) int { return cmp.Compare(a.id, b.id) })
	for i := 1; i < len(d.entries); i++ {
		if d.entries[i].id == d.entries[i-1].id {
			return nil, errors.New("two of its profile ids share a hash")
		}
	}
	d.put = make([]uint64, (len(d.entries)+63)/64)
	return d, nil
}

// find returns the entry of id, and whether the digest holds one.
func (d *profileDigest) find(id string) (int, bool) {
	h := maphash.String(d.seed, id)
	i, ok := slices.BinarySearchFunc(d.entries, h, func(e digestEntry, h uint64) int { return cmp.Compare(e.id, h) })
	return i, ok
}

func (d *profileDigest) valueIs(i int, v []byte) bool {
	return d.entries[i].value == maphash.Bytes(d.seed, v)
}

func (d *profileDigest) wasPut(i int) bool { return d.put[i/64]&(1<<(i%64)) != 0 }
func (d *profileDigest) markPut(i int)     { d.put[i/64] |= 1 << (i % 64) }

// baseProfile returns the base's profile id if this build put it
// unchanged, nil otherwise.
func (d *deltaBase) baseProfile(id string) (*companydocs.Profile, error) {
	if i, ok := d.digest.find(id); !ok || !d.digest.wasPut(i) {
		return nil, nil
	}
	if err := d.pages.lookedUp(); err != nil {
		return nil, err
	}
	return d.tx.profile(id)
}

// getOnBase is Get of an incremental build: the delta's profile, else
// the base's if put unchanged.
func (b *Builder) getOnBase(id string) (*companydocs.Profile, error) {
	p, err := getProfile(b.tx, id)
	if p != nil || err != nil {
		return p, err
	}
	return b.delta.baseProfile(id)
}

// byNumberOnBase is ByNumber of an incremental build: the delta's
// profiles with the number, and the base's put unchanged, in id order
// as a whole store lists them.
func (b *Builder) byNumberOnBase(t register.Type, number string) ([]*companydocs.Profile, error) {
	key := numberKey(t, number)
	out, err := profilesByKey(b.tx, bucketNumbers, key)
	if err != nil {
		return nil, err
	}
	base, err := b.delta.tx.byKey(bucketNumbers, key)
	if err != nil {
		return nil, err
	}
	if err := b.delta.pages.lookedUpMany(1 + len(base)); err != nil {
		return nil, err
	}
	profiles := b.tx.Bucket(bucketProfiles)
	for _, p := range base {
		if i, ok := b.delta.digest.find(p.ID); ok && b.delta.digest.wasPut(i) && profiles.Get([]byte(p.ID)) == nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(x, y *companydocs.Profile) int { return strings.Compare(x.ID, y.ID) })
	return out, nil
}

// putOnBase is Put of an incremental build, v being p encoded: a
// profile the delta holds is replaced there; one the base holds with
// the same value is only marked put; any other goes into the delta.
func (b *Builder) putOnBase(p *companydocs.Profile, v []byte) (stored bool, err error) {
	old, err := getProfile(b.tx, p.ID)
	if err != nil {
		return false, err
	}
	if old != nil {
		b.count(old, -1)
		b.count(p, +1)
		return true, putProfile(b.tx, p, v, old)
	}
	digest := b.delta.digest
	i, inBase := digest.find(p.ID)
	if inBase && digest.valueIs(i, v) {
		if !digest.wasPut(i) {
			digest.markPut(i)
			b.count(p, +1)
		}
		return false, nil
	}
	if err := b.delta.pages.lookedUp(); err != nil {
		return false, err
	}
	if inBase && b.delta.tx.value([]byte(p.ID)) != nil { // not another id's hash
		if digest.wasPut(i) {
			// put unchanged before in this build: the base's is replaced
			if old, err = b.delta.tx.profile(p.ID); err != nil {
				return false, err
			}
		}
		digest.markPut(i)
	}
	b.count(old, -1)
	b.count(p, +1)
	return true, putProfile(b.tx, p, v, nil)
}

// planDelta lists what the delta changes on the base, up to limit
// profiles: the delta's profiles whose value differs from the base's
// (new ones included), and the base's profiles the build did not put.
func (d *deltaBase) planDelta(dir string, limit int) (*changedIDs, error) {
	delta, err := openReadOnly(filepath.Join(dir, profilesName))
	if err != nil {
		return nil, fmt.Errorf("open the new profile store: %w", err)
	}
	defer delta.Close()
	c := &changedIDs{}
	err = delta.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketProfiles).ForEach(func(k, v []byte) error {
			if err := d.pages.lookedUp(); err != nil {
				return err
			}
			switch pv := d.tx.value(k); {
			case pv == nil:
				c.added++
			case bytes.Equal(pv, v):
				return nil
			default:
				c.changed++
			}
			c.index = append(c.index, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return c, d.collectRemoved(c, limit)
}

// collectRemoved adds to c the base's profiles the build did not put,
// walking the base's ids.
func (d *deltaBase) collectRemoved(c *changedIDs, limit int) error {
	cur, pages := d.tx.cursor(), pageRelease{release: d.tx.release}
	for k, v := cur.first(); k != nil; k, v = cur.next() {
		if c.changed+c.added+c.removed > limit {
			c.overLimit = true
			return nil
		}
		if i, ok := d.digest.find(string(k)); !ok || !d.digest.wasPut(i) {
			c.removed++
			c.remove = append(c.remove, string(k))
		}
		if err := pages.walked(len(k) + len(v)); err != nil {
			return err
		}
	}
	return nil
}
