package index

import (
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/internal/filesum"
)

// The profile store in layers. A generation's profile store is
// profiles.db, the base, and in a generation an incremental build wrote,
// the layers above it (Meta.ProfileLayers, oldest first): each a bbolt
// file holding the profiles that changed or came new against the store
// below it, their secondary entries, and a tombstone for each profile it
// removes. An incremental build shares the previous generation's base and
// layers (hard links, as it shares its segments) and adds one small layer
// of its own, so that a generation that changed 1% of its profiles ships
// a file of about 1% of the store instead of a copy of the whole (see
// DESIGN.md, "The profile store in layers").
//
// The layers are read as one store (storeTx): a profile is the newest
// layer's value or tombstone, else the base's; a lookup by register
// number or LEI collects the ids every layer lists under the key and
// keeps those whose profile, read through the layers, still carries it;
// a walk in id order merges the layers' cursors. Every reader of
// profiles goes through it: the generation's lookups and checks, the
// change record's and the incremental build's comparison with the
// previous generation, and the store a following node opens for the
// ordering gate.

// The limits of a profile store's layers. A build on maxProfileLayers
// layers merges them into one with its changes, on the base alone. Each
// layer a look-up reads costs a read transaction and a bbolt descent,
// which showed in the p99 of register look-ups over HTTP more than in
// their CPU: after ten builds of 1% of the records at 5M, 1.19 times a
// full build's with ten layers (interval 1.11 to 1.28), 1.17 with five
// (1.03 to 1.30), 1.03 with one (0.94 to 1.10). So a store has one layer,
// every change since its base, which each build merges with its own: 100
// MB after ten builds, 7 s to write, and 6.6% of the generation new to
// publish with the second segment. The tests set more.
//
// The layers' bytes stay on disk beside the base's stale values until a
// whole store is written: a build on layers holding more than
// maxLayerShare of the base's bytes writes it whole. The index's
// deleted-document share (maxDeletedShare) brings a full build, which
// writes the store anew, before that where a dump changes about 1% of the
// records: at 5M each such build added 1.2% of the base's bytes in layers
// and 0.66% of the index in deleted documents, so a tenth of the bytes
// came first, at the tenth build (1 m 24 s and 1,368 MiB, and 42% of the
// generation new to publish), and a full build about seven builds later. A
// quarter leaves the rewrite to that full build, with room for dumps
// whose changes are larger profiles (officers). Variables for the tests.
var (
	maxProfileLayers = 1
	maxLayerShare    = 0.25
)

// bucketRemoved holds a layer's tombstones: id -> tombstone.
var bucketRemoved = []byte("removed")

// bucketLayer holds what the build that wrote a layer knew of it: under
// layerNetKey, in decimal, how many profiles more the store holds with
// the layer than the store below it does (fewer where negative). Counting
// that from what the layer holds looks every id of it up in the store
// below: after ten builds of 1% of the records at 5M, 398,242 look-ups
// all over the 1.4 GB base, 20 s for an install on a cold page cache. The
// build checks the record against what the layer holds (storeTx.count);
// a node that installs the published bytes, checksummed, reads it. A
// layer without it is counted from what it holds.
var (
	bucketLayer = []byte("layer")
	layerNetKey = []byte("net")
)

// tombstone is the value of a tombstone; not empty, so that Get tells it
// from an absent key on every bbolt version.
var tombstone = []byte{1}

// layerPattern is the name of a layer file: "profiles.<n>.db", n from 1.
var layerPattern = regexp.MustCompile(`^profiles\.[1-9][0-9]{0,3}\.db$`)

// layerName is the file name of the n-th layer (from 1).
func layerName(n int) string { return fmt.Sprintf("profiles.%d.db", n) }

// IsProfileFile reports whether path, a file of a generation, belongs to
// its profile store: profiles.db or a layer above it. A node downloads
// them first, with meta.json, so that the ordering gate can read the
// generation's profiles early in a rollout (OpenProfileStore).
func IsProfileFile(path string) bool {
	return path == profilesName || layerPattern.MatchString(path)
}

// profileFiles are the files of the profile store of the generation m
// describes, the base first.
func profileFiles(m Meta) []string {
	return append([]string{profilesName}, m.ProfileLayers...)
}

// checkLayers refuses a meta.json whose layers are not files named as
// layers, in order (profiles.1.db, profiles.2.db, ...), or, in a
// generation with checksums, not checksummed: their bytes would be read
// unchecked.
func checkLayers(m Meta) error {
	if len(m.ProfileLayers) > 0 && m.Version < layeredVersion {
		return reject(RejectMeta, "meta.json of version %d names profile layers, which only version %d and later have", m.Version, layeredVersion)
	}
	for i, name := range m.ProfileLayers {
		if name != layerName(i+1) {
			return reject(RejectMeta, "meta.json names profile layer %q where %s belongs", name, layerName(i+1))
		}
		if len(m.Files) > 0 && !slices.ContainsFunc(m.Files, func(s FileSum) bool { return s.Path == name }) {
			return reject(RejectMeta, "meta.json names profile layer %s without its checksum", name)
		}
	}
	return nil
}

// layeredStore is a generation's profile store open for reading: the
// base and its layers, each a read-only bbolt file.
type layeredStore struct {
	dbs []*bolt.DB // the base first
	// layered says what the layers hold, read once: a look-up of any
	// other id or key goes to the base alone, where it descended into
	// each layer first (21 descents on 10 layers for an id, 10 seeks for
	// a register number; the register look-ups of the tenth incremental
	// generation at 5M took twice a full build's at p99). The layers
	// hold a hundredth of the profiles each.
	layeredOnce sync.Once
	layered     *layerIndex
}

// openLayers opens the files (base first) of the store in dir with open;
// on an error it closes what it opened.
func openLayers(dir string, files []string, open func(path string) (*bolt.DB, error)) (*layeredStore, error) {
	s := &layeredStore{}
	for _, name := range files {
		db, err := open(filepath.Join(dir, name))
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		s.dbs = append(s.dbs, db)
	}
	return s, nil
}

// openReadOnly opens a bbolt file of a published generation read-only.
func openReadOnly(path string) (*bolt.DB, error) {
	return bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
}

// checkBuckets checks that the base holds the store's buckets and every
// layer its tombstones too.
func (s *layeredStore) checkBuckets() error {
	return s.view(func(t storeTx) error {
		for i, tx := range t.txs {
			names := storeBuckets
			if i > 0 {
				names = append(slices.Clone(storeBuckets), bucketRemoved)
			}
			for _, name := range names {
				if tx.Bucket(name) == nil {
					return reject(RejectStructure, "%s lacks bucket %q", filepath.Base(tx.DB().Path()), name)
				}
			}
		}
		return nil
	})
}

// count counts the profiles of the store (storeTx.count) in one read
// transaction.
func (s *layeredStore) count(recorded bool) (n int, err error) {
	err = s.view(func(t storeTx) error {
		n, err = t.count(recorded)
		return err
	})
	return n, err
}

// view runs fn in one read transaction on every file of the store.
func (s *layeredStore) view(fn func(t storeTx) error) error {
	t, err := s.begin()
	if err != nil {
		return err
	}
	defer t.rollback()
	return fn(t)
}

// lookup runs fn, which looks up profiles (storeTx.profile, byKey), in a
// read transaction on the base that begins the layers' only when a
// look-up reads a layer. The layers hold a hundredth of the profiles
// each: most look-ups read the base alone, and a transaction begun on
// each of ten layers made a register number's look-up on the tenth
// incremental generation at 5M cost 1.2 times a full build's in CPU
// (bbolt checks both meta pages' checksums for each).
func (s *layeredStore) lookup(fn func(t storeTx) error) error {
	t, err := s.beginBase()
	if err != nil {
		return err
	}
	defer t.rollback()
	return fn(t)
}

// begin starts a read transaction on every file of the store, to be
// ended by rollback.
func (s *layeredStore) begin() (storeTx, error) {
	t, err := s.beginBase()
	if err != nil {
		return storeTx{}, err
	}
	if err := t.readLayers(); err != nil {
		t.rollback()
		return storeTx{}, err
	}
	return t, nil
}

// beginBase starts a read transaction on the base, leaving the layers'
// to readLayers, to be ended by rollback.
func (s *layeredStore) beginBase() (storeTx, error) {
	t := storeTx{txs: make([]*bolt.Tx, len(s.dbs)), dbs: s.dbs}
	tx, err := s.dbs[0].Begin(false)
	if err != nil {
		return storeTx{}, fmt.Errorf("read %s: %w", filepath.Base(s.dbs[0].Path()), err)
	}
	t.txs[0] = tx
	if len(s.dbs) == 1 {
		return t, nil
	}
	s.layeredOnce.Do(func() {
		if err = t.readLayers(); err == nil {
			s.layered = readLayerIndex(t.txs[1:])
		}
	})
	if t.layered = s.layered; t.layered == nil && err == nil {
		// the index failed in an earlier transaction: every look-up
		// reads every layer
		err = t.readLayers()
	}
	if err != nil {
		t.rollback()
		return storeTx{}, err
	}
	return t, nil
}

// readLayers begins the read transactions of the layers, unless they
// are begun.
func (t storeTx) readLayers() error {
	if len(t.txs) == 1 || t.txs[1] != nil {
		return nil
	}
	txs := make([]*bolt.Tx, 0, len(t.dbs)-1)
	for _, db := range t.dbs[1:] {
		tx, err := db.Begin(false)
		if err != nil {
			storeTx{txs: txs}.rollback()
			return fmt.Errorf("read %s: %w", filepath.Base(db.Path()), err)
		}
		txs = append(txs, tx)
	}
	copy(t.txs[1:], txs)
	return nil
}

// layerIndex holds what the layers of a store hold, as 64-bit hashes: the
// ids of their profiles and tombstones, and the keys their secondary
// buckets list. A hash another id or key shares only sends its look-up
// through the layers, which answer it right; and a set of hashes holds no
// pointers for the garbage collector to follow, where the strings of the
// ids (100,000 of them on the tenth incremental generation at 5M) made
// its marking take 3.5 times as long in every query's share.
type layerIndex struct {
	seed maphash.Seed
	// ids holds, by id, the newest layer that holds or removes it, by its
	// place in the store's files (1 the oldest layer): a look-up reads
	// that layer alone, where reading each from the newest took 20 of
	// bbolt's searches for a profile of the oldest layer
	ids  map[uint64]uint16
	keys map[string]map[uint64]struct{} // by secondary bucket
}

// readLayerIndex reads the ids and secondary keys the layers of txs hold.
func readLayerIndex(txs []*bolt.Tx) *layerIndex {
	x := &layerIndex{seed: maphash.MakeSeed(), ids: map[uint64]uint16{}, keys: map[string]map[uint64]struct{}{}}
	forEachLayerID(txs, func(layer int, id []byte) { x.ids[maphash.Bytes(x.seed, id)] = uint16(layer + 1) })
	for _, tx := range txs {
		for _, name := range [][]byte{bucketNumbers, bucketLEIs} {
			keys := x.keys[string(name)]
			if keys == nil {
				keys = map[uint64]struct{}{}
				x.keys[string(name)] = keys
			}
			forEachKey(tx, name, func(k []byte) {
				if key, _, ok := bytes.Cut(k, []byte{keySep}); ok {
					keys[maphash.Bytes(x.seed, key)] = struct{}{}
				}
			})
		}
	}
	return x
}

// forEachLayerID calls fn with each id the layers of txs hold or remove,
// and the layer's place in txs, once for each layer that does, the
// oldest layer first.
func forEachLayerID(txs []*bolt.Tx, fn func(layer int, id []byte)) {
	for layer, tx := range txs {
		for _, name := range [][]byte{bucketProfiles, bucketRemoved} {
			forEachKey(tx, name, func(id []byte) { fn(layer, id) })
		}
	}
}

// forEachKey calls fn with each key of the bucket name of tx, if it has
// one (checkBuckets says what is missing).
func forEachKey(tx *bolt.Tx, name []byte, fn func(k []byte)) {
	if b := tx.Bucket(name); b != nil {
		b.ForEach(func(k, _ []byte) error {
			fn(k)
			return nil
		})
	}
}

// holdsID reports whether a layer may hold or remove id; true where the
// layers were not read.
func (x *layerIndex) holdsID(id []byte) bool {
	return x.layerOf(id) != 0
}

// layerOf returns the place of the newest layer that may hold or remove
// id among the store's files, 0 for none, -1 where the layers were not
// read. Another id sharing id's hash may have put it there.
func (x *layerIndex) layerOf(id []byte) int {
	if x == nil {
		return -1
	}
	return int(x.ids[maphash.Bytes(x.seed, id)])
}

// listsKey reports whether a layer may list key in the secondary bucket;
// true where the layers were not read.
func (x *layerIndex) listsKey(bucket []byte, key string) bool {
	if x == nil {
		return true
	}
	_, ok := x.keys[string(bucket)][maphash.String(x.seed, key)]
	return ok
}

// rollback ends the transactions of begin or beginBase.
func (t storeTx) rollback() {
	for _, tx := range t.txs {
		if tx != nil {
			tx.Rollback()
		}
	}
}

// close closes every file of the store.
func (s *layeredStore) close() error {
	var errs []error
	for _, db := range s.dbs {
		errs = append(errs, db.Close())
	}
	s.dbs = nil
	return errors.Join(errs...)
}

// storeTx reads a profile store, its base and layers, as one store:
// what a whole profiles.db of the same profiles would answer. Values it
// returns are valid only inside the transaction.
type storeTx struct {
	// txs are the transactions of the store's files, the base first; the
	// layers' are nil until readLayers begins them (lookup)
	txs []*bolt.Tx
	dbs []*bolt.DB // the files of txs
	// layered is the store's layeredStore.layered; nil where the look-ups
	// read every layer
	layered *layerIndex
}

// value returns the stored value of id, from the newest layer that holds
// or removes it, else the base; nil when no profile has id.
func (t storeTx) value(id []byte) []byte {
	return t.valueIn(id, t.layered.layerOf(id))
}

// valueIn is value with the layer the layer index names for id
// (layerIndex.layerOf), whose layers' transactions are begun.
func (t storeTx) valueIn(id []byte, layer int) []byte {
	switch {
	case layer == 0:
		return t.txs[0].Bucket(bucketProfiles).Get(id)
	case layer > 0:
		if v := t.txs[layer].Bucket(bucketProfiles).Get(id); v != nil {
			return v
		}
		if t.txs[layer].Bucket(bucketRemoved).Get(id) != nil {
			return nil
		}
		// another id put the layer there: read every layer
	}
	for i := len(t.txs) - 1; i > 0; i-- {
		if v := t.txs[i].Bucket(bucketProfiles).Get(id); v != nil {
			return v
		}
		if t.txs[i].Bucket(bucketRemoved).Get(id) != nil {
			return nil
		}
	}
	return t.txs[0].Bucket(bucketProfiles).Get(id)
}

// profile returns the profile id, nil when there is none.
func (t storeTx) profile(id string) (*companydocs.Profile, error) {
	p, _, err := t.profileIn(id)
	return p, err
}

// profileIn returns the profile id, nil when there is none, and the
// layer the layer index names for it: 0 for the base alone.
func (t storeTx) profileIn(id string) (*companydocs.Profile, int, error) {
	key := []byte(id)
	layer := t.layered.layerOf(key)
	if layer != 0 {
		if err := t.readLayers(); err != nil {
			return nil, layer, err
		}
	}
	v := t.valueIn(key, layer)
	if v == nil {
		return nil, layer, nil
	}
	p, err := decodeProfile(id, v)
	if err != nil {
		return nil, layer, fmt.Errorf("profile %q: %w", id, err)
	}
	return p, layer, nil
}

// byKey returns the profiles listed under key in a secondary bucket, in
// id order. A layer lists the keys of the profiles it holds; an older
// layer's entry of a profile changed or removed since is stale, and so is
// the base's: an id a layer holds or removes is read through the layers
// and kept only if its profile still carries key. The base's entries come
// in id order, and the few the layers add are merged in: a register
// number the courts share lists a hundred profiles and more (HRB 421 at
// 5M: 148), where sorting every entry cost as much as reading them.
func (t storeTx) byKey(bucket []byte, key string) ([]*companydocs.Profile, error) {
	if len(t.txs) == 1 {
		return profilesByKey(t.txs[0], bucket, key)
	}
	prefix := indexEntry(key, "")
	var layered []string
	if t.layered.listsKey(bucket, key) {
		if err := t.readLayers(); err != nil {
			return nil, err
		}
		layered = t.layerEntries(bucket, prefix)
	}
	var out []*companydocs.Profile
	add := func(id string) error {
		p, layer, err := t.profileIn(id)
		if err != nil {
			return err
		}
		if p != nil && (layer == 0 || carries(p, bucket, key)) {
			out = append(out, p)
		}
		return nil
	}
	c := t.txs[0].Bucket(bucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := string(k[len(prefix):])
		for ; len(layered) > 0 && layered[0] < id; layered = layered[1:] {
			if err := add(layered[0]); err != nil {
				return nil, err
			}
		}
		if len(layered) > 0 && layered[0] == id {
			layered = layered[1:]
		}
		if err := add(id); err != nil {
			return nil, err
		}
	}
	for _, id := range layered {
		if err := add(id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// layerEntries returns the ids the layers list under prefix (a key's
// entries) in a secondary bucket, in id order, each once.
func (t storeTx) layerEntries(bucket, prefix []byte) []string {
	var ids []string
	for _, tx := range t.txs[1:] {
		c := tx.Bucket(bucket).Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			ids = append(ids, string(k[len(prefix):]))
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// carries reports whether p is listed under key in the secondary bucket
// (secondaryKeys, without making the lists: it runs for each id a layer
// touches that a look-up meets).
func carries(p *companydocs.Profile, bucket []byte, key string) bool {
	if bytes.Equal(bucket, bucketNumbers) {
		return p.Ref.Type != "" && p.Ref.Number != "" && numberKey(p.Ref.Type, p.Ref.Number) == key
	}
	return key != "" && slices.ContainsFunc(p.LEIs, func(l companydocs.LEILink) bool { return string(l.LEI) == key })
}

// count returns the number of profiles: the base's key count
// (baseCount), changed by each layer in turn by the net its build
// recorded (bucketLayer) where recorded is true, else by what the layer
// holds: a profile the store below it lacks is one more, and one it
// removes that the store below holds one fewer. A layer whose record
// differs from what it holds is refused.
func (t storeTx) count(recorded bool) (int, error) {
	n := baseCount(t.txs[0])
	// the look-ups below lie all over the base's file
	pages := pageRelease{release: t.release}
	defer t.release()
	for i := 1; i < len(t.txs); i++ {
		net, ok, err := recordedNet(t.txs[i])
		if err != nil {
			return 0, err
		}
		if !ok || !recorded {
			held := storeTx{txs: t.txs[:i]}.heldNet(t.txs[i], &pages)
			if ok && held != net {
				return 0, reject(RejectStructure, "%s records %+d profiles against the store below it and holds %+d", filepath.Base(t.txs[i].DB().Path()), net, held)
			}
			net = held
		}
		n += net
	}
	return n, nil
}

// heldNet returns how many profiles more the store t holds with layer on
// it: the profiles of layer t lacks, less those t holds that layer
// removes.
func (t storeTx) heldNet(layer *bolt.Tx, pages *pageRelease) int {
	net := 0
	profiles := layer.Bucket(bucketProfiles)
	profiles.ForEach(func(id, _ []byte) error {
		if pages.lookedUp(); t.value(id) == nil {
			net++
		}
		return nil
	})
	layer.Bucket(bucketRemoved).ForEach(func(id, _ []byte) error {
		if pages.lookedUp(); profiles.Get(id) == nil && t.value(id) != nil {
			net--
		}
		return nil
	})
	return net
}

// recordedNet returns the net the build of layer recorded (bucketLayer);
// ok is false where it recorded none.
func recordedNet(layer *bolt.Tx) (net int, ok bool, err error) {
	var v []byte
	if b := layer.Bucket(bucketLayer); b != nil {
		v = b.Get(layerNetKey)
	}
	if v == nil {
		return 0, false, nil
	}
	net, err = strconv.Atoi(string(v))
	if err != nil {
		return 0, false, reject(RejectStructure, "%s records no number of profiles: %q", filepath.Base(layer.DB().Path()), v)
	}
	return net, true, nil
}

// baseCounts holds the key counts of profile stores this process
// counted, by file identity (internal/filesum): an incremental
// generation shares its base with the one before, and bbolt counts keys
// by reading every page.
var baseCounts = filesum.NewMemo[int]()

// baseCount returns the number of profiles the store of tx holds.
func baseCount(tx *bolt.Tx) int {
	if tx.Writable() {
		return tx.Bucket(bucketProfiles).Stats().KeyN
	}
	n, _ := baseCounts.Do(tx.DB().Path(), func() (int, error) { return countKeys(tx), nil })
	return n
}

// countKeys counts the profiles of a read transaction's store by walking
// its keys, dropping the pages read from the resident memory as it goes
// (bbolt's Stats reads every page too, and kept the whole file resident:
// 1.3 GB at 5M, on top of a build's heap at its commit).
func countKeys(tx *bolt.Tx) int {
	pages := pageRelease{release: func() error { return releaseResident(tx.DB(), tx.Size()) }}
	n := 0
	c := tx.Bucket(bucketProfiles).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		n++
		pages.walked(len(k) + len(v))
	}
	pages.release()
	return n
}

// release drops the pages read so far from the resident memory, as a
// long walk does (releaseResident).
func (t storeTx) release() error {
	for _, tx := range t.txs {
		if err := releaseResident(tx.DB(), tx.Size()); err != nil {
			return err
		}
	}
	return nil
}

// mergedCursor walks the profiles of a layered store in id order: each
// id once, with the value of the newest layer that holds it, and none
// that a newer layer removes.
type mergedCursor struct {
	t    storeTx
	cs   []*bolt.Cursor // profiles cursors, the base first
	keys [][]byte       // each cursor's current key, nil when done
	vals [][]byte
	// removed are the layers' cursors over their tombstones (none for
	// the base), at the first tombstone not below the ids walked so far:
	// a walk reads each tombstone once, where a look-up per id and
	// layer cost a descent each (10 s and more a walk at 5M)
	removed     []*bolt.Cursor
	removedKeys [][]byte
}

// cursor returns a cursor over the merged profiles of t.
func (t storeTx) cursor() *mergedCursor {
	n := len(t.txs)
	c := &mergedCursor{t: t, keys: make([][]byte, n), vals: make([][]byte, n), removed: make([]*bolt.Cursor, n), removedKeys: make([][]byte, n)}
	for i, tx := range t.txs {
		c.cs = append(c.cs, tx.Bucket(bucketProfiles).Cursor())
		if i > 0 {
			c.removed[i] = tx.Bucket(bucketRemoved).Cursor()
		}
	}
	return c
}

// first moves to the first profile and returns its id and value; nil, nil
// when there is none.
func (c *mergedCursor) first() ([]byte, []byte) {
	for i, cur := range c.cs {
		c.keys[i], c.vals[i] = cur.First()
		if c.removed[i] != nil {
			c.removedKeys[i], _ = c.removed[i].First()
		}
	}
	return c.current()
}

// next moves past the current profile.
func (c *mergedCursor) next() ([]byte, []byte) {
	c.advance(c.smallest())
	return c.current()
}

// current returns the profile at the smallest key, skipping removed ones.
func (c *mergedCursor) current() ([]byte, []byte) {
	for {
		k := c.smallest()
		if k == nil {
			return nil, nil
		}
		newest := 0
		for i := range c.keys {
			if c.keys[i] != nil && bytes.Equal(c.keys[i], k) {
				newest = i
			}
		}
		if !c.removedAbove(k, newest) {
			return k, c.vals[newest]
		}
		c.advance(k)
	}
}

// removedAbove reports whether a layer newer than layer i removes id;
// the ids asked never decrease (the walk's order).
func (c *mergedCursor) removedAbove(id []byte, i int) bool {
	removed := false
	for j := i + 1; j < len(c.removed); j++ {
		for c.removedKeys[j] != nil && bytes.Compare(c.removedKeys[j], id) < 0 {
			c.removedKeys[j], _ = c.removed[j].Next()
		}
		removed = removed || c.removedKeys[j] != nil && bytes.Equal(c.removedKeys[j], id)
	}
	return removed
}

// smallest is the smallest current key of the cursors, nil when all are
// done.
func (c *mergedCursor) smallest() []byte {
	var min []byte
	for _, k := range c.keys {
		if k != nil && (min == nil || bytes.Compare(k, min) < 0) {
			min = k
		}
	}
	return min
}

// advance moves every cursor at key k to its next key.
func (c *mergedCursor) advance(k []byte) {
	if k == nil {
		return
	}
	k = bytes.Clone(k) // the cursors' keys point into their pages
	for i := range c.cs {
		if c.keys[i] != nil && bytes.Equal(c.keys[i], k) {
			c.keys[i], c.vals[i] = c.cs[i].Next()
		}
	}
}
