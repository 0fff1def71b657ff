package index

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// materialize makes the delta a whole profile store: the base's
// profiles put unchanged and the delta's, in id order, and their
// secondary entries, as a full build's store holds them after its
// compaction, which it therefore skips. Every bucket is written in key order
// from cursors: the profiles merged with the base's, the entries with
// the base's and its layers' still true. Putting each profile's entries
// as it came, all over the numbers bucket, took 5 m 29 s and 3.4 GB at
// 5M.
func (b *Builder) materialize() error {
	start, d := time.Now(), b.delta
	path := filepath.Join(b.dir, profilesName)
	delta, err := openReadOnly(path)
	if err != nil {
		return fmt.Errorf("open the new profile store: %w", err)
	}
	defer delta.Close()
	wholePath := path + ".whole"
	whole, err := bolt.Open(wholePath, 0o644, &bolt.Options{Timeout: openTimeout, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return err
	}
	err = whole.Update(createBuckets)
	if err == nil {
		err = delta.View(func(dtx *bolt.Tx) error { return d.mergeInto(whole, dtx) })
	}
	if err = errors.Join(err, whole.Sync(), whole.Close()); err != nil {
		return fmt.Errorf("write the whole profile store: %w", err)
	}
	if err := os.Rename(wholePath, path); err != nil {
		return err
	}
	b.opts.Logger.Info("profile store written whole from its base and the changes", "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// mergeInto writes into whole every profile the build put, the delta's
// (dtx) and the base's put unchanged, and their secondary entries.
func (d *deltaBase) mergeInto(whole *bolt.DB, dtx *bolt.Tx) error {
	if err := appendSorted(whole, bucketProfiles, d.mergedProfiles(dtx), d.tx.release); err != nil {
		return err
	}
	for _, bucket := range [][]byte{bucketNumbers, bucketLEIs} {
		if err := appendSorted(whole, bucket, d.mergedEntries(dtx, bucket), d.tx.release); err != nil {
			return err
		}
	}
	return nil
}

// mergedProfiles returns the profiles of mergeInto one by one in id
// order, then nil.
func (d *deltaBase) mergedProfiles(dtx *bolt.Tx) func() ([]byte, []byte, error) {
	bc, dc := d.tx.cursor(), dtx.Bucket(bucketProfiles).Cursor()
	bk, bv := bc.first()
	dk, dv := dc.First()
	return func() ([]byte, []byte, error) {
		for bk != nil || dk != nil {
			var k, v []byte
			switch c := compareKeys(bk, dk); {
			case c < 0:
				k, v = bk, bv
				bk, bv = bc.next()
				if !d.putUnchanged(dtx, k) {
					continue // removed
				}
			case c > 0:
				k, v = dk, dv
				dk, dv = dc.Next()
			default: // the delta's replaces the base's
				k, v = dk, dv
				bk, bv = bc.next()
				dk, dv = dc.Next()
			}
			return k, v, nil
		}
		return nil, nil, nil
	}
}

// mergedEntries returns the entries of the secondary bucket of mergeInto
// one by one in key order, then nil: the delta's, and those of the base
// and its layers whose profile was put unchanged and still carries the
// key.
func (d *deltaBase) mergedEntries(dtx *bolt.Tx, bucket []byte) func() ([]byte, []byte, error) {
	var cs []*bolt.Cursor
	for _, tx := range d.tx.txs {
		cs = append(cs, tx.Bucket(bucket).Cursor())
	}
	fromDelta := len(cs)
	m := keyMerge{cs: append(cs, dtx.Bucket(bucket).Cursor())}
	var last []byte
	return func() ([]byte, []byte, error) {
		for k, from := m.next(); k != nil; k, from = m.next() {
			if bytes.Equal(k, last) {
				continue
			}
			keep := from == fromDelta
			if !keep {
				var err error
				if keep, err = d.keepsEntry(dtx, bucket, k); err != nil {
					return nil, nil, err
				}
			}
			if keep {
				last = k
				return k, nil, nil
			}
		}
		return nil, nil, nil
	}
}

// putUnchanged reports whether the build put the base's profile id
// unchanged: marked put, and not in the delta.
func (d *deltaBase) putUnchanged(dtx *bolt.Tx, id []byte) bool {
	i, ok := d.digest.find(string(id))
	return ok && d.digest.wasPut(i) && dtx.Bucket(bucketProfiles).Get(id) == nil
}

// keepsEntry reports whether the whole store holds the base's secondary
// entry: its profile put unchanged and, where a layer holds or removes
// it, still carrying the key (an older layer's or the base's entry of a
// profile changed since is stale).
func (d *deltaBase) keepsEntry(dtx *bolt.Tx, bucket, entry []byte) (bool, error) {
	key, id, ok := bytes.Cut(entry, []byte{keySep})
	if !ok || !d.putUnchanged(dtx, id) {
		return false, nil
	}
	if len(d.tx.txs) == 1 || !d.tx.layered.holdsID(id) {
		return true, nil
	}
	p, err := d.tx.profile(string(id))
	return p != nil && carries(p, bucket, string(key)), err
}

// keyMerge walks the keys of several cursors as one, in key order; equal
// keys come one after the other.
type keyMerge struct {
	cs            []*bolt.Cursor
	keys          [][]byte
	last          int // the cursor whose key was returned last
	started, done bool
}

// next returns the next key and the index of its cursor; nil when every
// cursor is done.
func (m *keyMerge) next() ([]byte, int) {
	switch {
	case m.done:
		return nil, -1
	case !m.started:
		m.started, m.keys = true, make([][]byte, len(m.cs))
		for i, c := range m.cs {
			m.keys[i], _ = c.First()
		}
	default:
		m.keys[m.last], _ = m.cs[m.last].Next()
	}
	m.last = -1
	for i, k := range m.keys {
		if k != nil && (m.last < 0 || bytes.Compare(k, m.keys[m.last]) < 0) {
			m.last = i
		}
	}
	if m.last < 0 {
		m.done = true
		return nil, -1
	}
	return m.keys[m.last], m.last
}

// appendSorted puts the pairs next returns, in key order until it
// returns a nil key, into bucket of db with full pages, in write
// transactions of at most compactTxBytes; release drops the pages read
// after each.
func appendSorted(db *bolt.DB, bucket []byte, next func() ([]byte, []byte, error), release func() error) error {
	k, v, err := next()
	for err == nil && k != nil {
		err = db.Update(func(tx *bolt.Tx) error {
			b := tx.Bucket(bucket)
			b.FillPercent = 1
			for size := 0; k != nil && size < compactTxBytes; {
				if err := b.Put(k, v); err != nil {
					return fmt.Errorf("put %q in %s: %w", k, bucket, err)
				}
				size += putSize(k, v)
				var err error
				if k, v, err = next(); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil {
			err = release()
		}
	}
	return err
}
