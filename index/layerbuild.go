package index

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// deleted. Otherwise that store is written whole (materialize).

// layerLimitReason says why an incremental build on the generation base
// writes a whole profile store ("" when it may add a layer): its store has
// maxProfileLayers layers already, or their bytes are more than
// maxLayerShare of the base's.
func layerLimitReason(base Meta) string {
	if len(base.ProfileLayers) >= maxProfileLayers {
		return fmt.Sprintf("the previous profile store has %d layers, the most", len(base.ProfileLayers))
	}
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
}

// layerProfiles replaces the profile store the build wrote by the base's
// files, shared, and a layer of the changes d: the profiles of d.index
// read from the build's store, tombstones for d.remove.
func (b *Builder) layerProfiles(d *changedIDs) error {
	start := time.Now()
	whole := filepath.Join(b.dir, profilesName)
	name := layerName(len(b.base.meta.ProfileLayers) + 1)
	src, err := openReadOnly(whole)
	if err != nil {
		return fmt.Errorf("open the new profile store: %w", err)
	}
	err = writeLayer(filepath.Join(b.dir, name), src, d.index, d.remove)
	if cerr := src.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write profile layer %s: %w", name, err)
	}
	if err := os.Remove(whole); err != nil {
		return err
	}
	shared := profileFiles(b.base.meta)
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
	b.layers = append(slices.Clone(b.base.meta.ProfileLayers), name)
	st, err := os.Stat(filepath.Join(b.dir, name))
	if err != nil {
		return err
	}
	b.opts.Logger.Info("profile layer written", "layer", name, "bytes", st.Size(), "profiles", len(d.index),
		"removed", len(d.remove), "layers", len(b.layers), "duration", time.Since(start).Round(time.Millisecond))
	return nil
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

// writeLayer writes the layer file path from the whole store src: the
// profiles ids (in id order) with their secondary entries, and a
// tombstone for each id of removed. Every bucket is written in key
// order with full pages, in write transactions of at most
// compactTxBytes.
func writeLayer(path string, src *bolt.DB, ids, removed []string) error {
	dst, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: openTimeout, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return err
	}
	err = src.View(func(stx *bolt.Tx) error {
		entries, err := copyProfiles(dst, stx, ids)
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
		return nil
	})
	if err == nil {
		err = dst.Sync()
	}
	return errors.Join(err, dst.Close())
}

// copyProfiles puts the values of ids (in id order) from stx into the
// profiles bucket of dst and returns the secondary entries of their
// profiles, by bucket name.
func copyProfiles(dst *bolt.DB, stx *bolt.Tx, ids []string) (map[string][]string, error) {
	entries := map[string][]string{}
	profiles := stx.Bucket(bucketProfiles)
	for {
		err := dst.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketProfiles)
			if err != nil {
				return err
			}
			b.FillPercent = 1 // ids arrive in order: fill every page
			for size := 0; len(ids) > 0 && size < compactTxBytes; ids = ids[1:] {
				v := profiles.Get([]byte(ids[0]))
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
