package index

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"companydocs/internal/atomicfile"
)

// An incremental build writes the profiles that differ from the
// previous generation's (delta.go). When its search index is written on
// the previous generation's segments and the previous store's layers are
// within their limits (layerLimitReason), the generation gets the
// previous one's base and layers, shared as hard links, and one new layer
// holding the changed and new profiles and tombstones for the removed
// ones (writeLayer), read from the store the build wrote, which is then
// deleted. Where the previous store has maxProfileLayers layers, the new
// layer holds theirs merged with the build's changes, on the base alone
// (a second of work at 5M, where writing the store whole took five
// minutes and 3.4 GB). Otherwise that store is written whole
// (materialize).

// layerLimitReason says why an incremental build on the generation base
// writes a whole profile store ("" when it may write a layer): the bytes
// of its store's layers are more than maxLayerShare of the base's.
func layerLimitReason(base Meta) string {
	var baseBytes, layerBytes int64
	for _, s := range base.Files {
		switch {
		case s.Path == profilesName:
			baseBytes = s.Size
		case slices.Contains(base.ProfileLayers, s.Path):
			layerBytes += s.Size
		}
	}
	if share := float64(layerBytes) / float64(max(baseBytes, 1)); share > maxLayerShare {
		return fmt.Sprintf("the previous profile store's layers hold %.1f%% of its base's bytes, more than %.0f%%", 100*share, 100*maxLayerShare)
	}
	return ""
}

// chooseLayer decides, once the search index is to be written on the
// base, whether the profile store gets a layer, and says why not.
func (b *Builder) chooseLayer() {
	if reason := layerLimitReason(b.base.meta); reason != "" {
		b.opts.Logger.Info("writing the profile store whole", "reason", reason)
		return
	}
	b.layer = true
	b.mergeLayers = len(b.base.meta.ProfileLayers) >= maxProfileLayers
}

// layerProfiles replaces the profile store the build wrote by the base's
// files, shared, and a layer of the changes d: the profiles of d.index
// read from the build's store, tombstones for d.remove; where the base's
// layers are merged, theirs too (mergedLayer).
func (b *Builder) layerProfiles(d *changedIDs) error {
	start := time.Now()
	whole := filepath.Join(b.dir, profilesName)
	shared, ids, removed := profileFiles(b.base.meta), d.index, d.remove
	if b.mergeLayers {
		shared = []string{profilesName}
		var err error
		if ids, removed, err = b.delta.mergedLayer(d); err != nil {
			return err
		}
	}
	name := layerName(len(shared))
	src, err := openReadOnly(whole)
	if err != nil {
		return fmt.Errorf("open the new profile store: %w", err)
	}
	err = writeLayer(filepath.Join(b.dir, name), src, b.layerValues(), ids, removed, b.layerNet(d))
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write profile layer %s: %w", name, err)
	}
	if err := os.Remove(whole); err != nil {
		return err
	}
	if err := b.shareProfileFiles(shared); err != nil {
		return err
	}
	b.layers = append(slices.Clone(shared[1:]), name)
	st, err := os.Stat(filepath.Join(b.dir, name))
	if err != nil {
		return err
	}
	b.opts.Logger.Info("profile layer written", "layer", name, "bytes", st.Size(), "profiles", len(ids),
		"removed", len(removed), "layers", len(b.layers), "merged", b.mergeLayers, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// layerNet returns how many profiles more the new generation holds than
// the store below its layer: the previous generation's, or where the
// layers are merged its base alone, counted once a process (baseCount:
// the build's check counts it again).
func (b *Builder) layerNet(d *changedIDs) int {
	below := b.base.meta.Profiles
	if b.mergeLayers {
		below = baseCount(b.delta.tx.txs[0])
	}
	return b.base.meta.Profiles + d.added - d.removed - below
}

// shareProfileFiles links the base's profile files shared into the new
// generation and keeps their checksums for checkShared.
func (b *Builder) shareProfileFiles(shared []string) error {
	for _, f := range shared {
		if err := shareFile(filepath.Join(b.base.dir, f), filepath.Join(b.dir, f)); err != nil {
			return fmt.Errorf("share %s of %s: %w", f, b.build.Base, err)
		}
	}
	if err := atomicfile.SyncDir(b.dir); err != nil {
		return err
	}
	for _, s := range b.base.meta.Files {
		if slices.Contains(shared, s.Path) {
			b.sharedSums = append(b.sharedSums, s)
		}
	}
	return nil
}

// layerValues returns the values a new layer is written from: the
// build's store src, else (a profile the base's layers hold, their layers
// being merged) the base's store read through its layers.
func (b *Builder) layerValues() func(stx *bolt.Tx, id []byte) ([]byte, error) {
	return func(stx *bolt.Tx, id []byte) ([]byte, error) {
		if v := stx.Bucket(bucketProfiles).Get(id); v != nil || !b.mergeLayers {
			return v, nil
		}
		return b.delta.tx.value(id), b.delta.pages.lookedUp()
	}
}

// mergedLayer returns the profiles and tombstones of one layer on the
// base's profiles.db alone that reads as its layers with the changes d
// on them: the ids d indexes and those the layers hold that d leaves
// alone, in id order; the ids d removes and those the layers remove
// that d does not index and the base holds.
func (d *deltaBase) mergedLayer(c *changedIDs) (ids, removed []string, err error) {
	changed := make(map[string]bool, len(c.index)+len(c.remove))
	for _, id := range slices.Concat(c.index, c.remove) {
		changed[id] = true
	}
	ids, removed = slices.Clone(c.index), slices.Clone(c.remove)
	base := d.tx.txs[0].Bucket(bucketProfiles)
	for id := range d.tx.layerIDs() {
		switch {
		case changed[id]:
		case d.tx.value([]byte(id)) != nil:
			ids = append(ids, id)
		case base.Get([]byte(id)) != nil:
			removed = append(removed, id)
		}
		if err := d.pages.lookedUp(); err != nil {
			return nil, nil, err
		}
	}
	slices.Sort(ids)
	slices.Sort(removed)
	return ids, removed, nil
}

// layerIDs returns the ids the layers of t hold or remove.
func (t storeTx) layerIDs() map[string]bool {
	ids := map[string]bool{}
	forEachLayerID(t.txs[1:], func(_ int, id []byte) { ids[string(id)] = true })
	return ids
}

// shareFile makes dst the file src: a hard link where the file system
// allows (a published generation's files are never written again), else a
// copy.
func shareFile(src, dst string) error {
	if os.Link(src, dst) == nil {
		return nil
	}
	return copyFileSynced(src, dst)
}

// checkShared checks the checksums of the new generation (sums) against
// the base's of the files it shares: a base file that changed after the
// comparison checked it must not be vouched for anew.
func (b *Builder) checkShared(sums []FileSum) error {
	for _, want := range b.sharedSums {
		i := slices.IndexFunc(sums, func(s FileSum) bool { return s.Path == want.Path })
		if i < 0 || sums[i] != want {
			return fmt.Errorf("%s of the previous generation %s changed while this build shared it", want.Path, b.build.Base)
		}
	}
	return nil
}

// writeLayer writes the layer file path: the profiles ids (in id order),
// their values read by value in a read transaction of src, with their
// secondary entries, a tombstone for each id of removed, and net, the
// profiles the layer adds to the store below it (bucketLayer). Every
// bucket is written in key order with full pages, in write transactions
// of at most compactTxBytes.
func writeLayer(path string, src *bolt.DB, value func(stx *bolt.Tx, id []byte) ([]byte, error), ids, removed []string, net int) error {
	dst, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: openTimeout, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return err
	}
	err = src.View(func(stx *bolt.Tx) error {
		entries, err := copyProfiles(dst, stx, value, ids)
		if err != nil {
			return err
		}
		for _, bucket := range [][]byte{bucketNumbers, bucketLEIs, bucketRemoved} {
			keys := entries[string(bucket)]
			if bytes.Equal(bucket, bucketRemoved) {
				keys = removed
			}
			if err := putKeys(dst, bucket, keys); err != nil {
				return err
			}
		}
		return dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket(bucketLayer)
			if err != nil {
				return err
			}
			return b.Put(layerNetKey, []byte(strconv.Itoa(net)))
		})
	})
	if err == nil {
		err = dst.Sync()
	}
	return errors.Join(err, dst.Close())
}

// copyProfiles puts the values of ids (in id order), read by value in
// stx, into the profiles bucket of dst and returns the secondary entries
// of their profiles, by bucket name.
func copyProfiles(dst *bolt.DB, stx *bolt.Tx, value func(stx *bolt.Tx, id []byte) ([]byte, error), ids []string) (map[string][]string, error) {
	entries := map[string][]string{}
	for {
		err := dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketProfiles)
			if err != nil {
				return err
			}
			b.FillPercent = 1 // ids arrive in order: fill every page
			for size := 0; len(ids) > 0 && size < compactTxBytes; ids = ids[1:] {
				v, err := value(stx, []byte(ids[0]))
				if err != nil {
					return err
				}
				if v == nil {
					return fmt.Errorf("profile %q missing from the new profile store", ids[0])
				}
				p, err := decodeProfile(ids[0], v)
				if err != nil {
					return err
				}
				numbers, leis := secondaryKeys(p)
				for _, k := range numbers {
					entries[string(bucketNumbers)] = append(entries[string(bucketNumbers)], string(indexEntry(k, p.ID)))
				}
				for _, k := range leis {
					entries[string(bucketLEIs)] = append(entries[string(bucketLEIs)], string(indexEntry(k, p.ID)))
				}
				if err := b.Put([]byte(ids[0]), v); err != nil {
					return err
				}
				size += len(ids[0]) + len(v)
			}
			return nil
		})
		if err != nil || len(ids) == 0 {
			return entries, err
		}
		if err := releaseResident(stx.DB(), stx.Size()); err != nil {
			return nil, err
		}
	}
}

// putKeys creates bucket in dst and puts keys into it, sorted, with the
// value a tombstone has (secondary entries need none, and any does).
func putKeys(dst *bolt.DB, bucket []byte, keys []string) error {
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for {
		err := dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			b.FillPercent = 1
			for size := 0; len(keys) > 0 && size < compactTxBytes; keys = keys[1:] {
				if err := b.Put([]byte(keys[0]), tombstone); err != nil {
					return err
				}
				size += len(keys[0])
			}
			return nil
		})
		if err != nil || len(keys) == 0 {
			return err
		}
	}
}
