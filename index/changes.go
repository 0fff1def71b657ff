package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// A generation records what changed in each profile against the generation
// that was current when its ingest started (the previous generation), so
// that watchers of a profile learn what the new generation changed without
// comparing every watched profile themselves. The record is changes.db, a
// bbolt file written at commit, checksummed in meta.json like every file of
// the generation. It is optional: a generation without it (built before it
// existed, or with BuilderOptions.NoChanges) serves as before, and a damaged
// one fails Changes, never Open or a search. See DESIGN.md, "Change
// records".
const changesName = "changes.db"

// Buckets of changes.db.
var (
	// bucketChanges maps the id of every profile of the previous
	// generation that this one changed or no longer holds to the JSON of
	// its []companydocs.FieldChange; ids in byte order.
	bucketChanges = []byte("changes")
	// bucketChangeInfo holds infoSummary: the JSON of the ChangeSummary.
	bucketChangeInfo = []byte("info")
	infoSummary      = []byte("summary")
)

// Notes of a ChangeSummary without a previous generation.
const (
	NoteNoPrevious = "no previous generation"
)

// Errors of Generation.Changes.
var (
	// ErrNoChanges: the generation has no change record (built before
	// change records existed, or with change records turned off).
	ErrNoChanges = errors.New("this index generation has no change record: it was built without one")
	// ErrChangesDamaged: the change record is missing although meta.json
	// lists it, differs from its checksum, or cannot be read. The
	// generation still serves searches.
	ErrChangesDamaged = errors.New("the change record of this index generation is damaged: compare the watched profiles themselves, or ingest again")
)

// ChangeSummary is what a change record holds, in counts; meta.json
// carries it as "changes". Previous is the generation compared with; when
// it is empty, Note says why (NoteNoPrevious, or why the previous
// generation could not be read) and the record holds no entry.
type ChangeSummary struct {
	Previous string `json:"previous,omitempty"`
	Note     string `json:"note,omitempty"`
	// Profiles counts the entries: profiles of the previous generation
	// changed or no longer held.
	Profiles int `json:"profiles"`
	// ByField counts the entries by changed field (companydocs.Field*,
	// FieldRemoved for profiles no longer held).
	ByField map[string]int `json:"by_field,omitempty"`
	// Added counts the profiles new in this generation, which have no
	// entry.
	Added int `json:"added"`
}

// changeTxBytes bounds the entries of one write transaction of changes.db
// and the bytes read between two releases of the compared stores' pages.
const changeTxBytes = 16 << 20

// writeChanges compares the profile store of the finished generation in
// dir with that of the generation previous of dataDir and writes
// changes.db into dir; without a previous generation, the record holds
// note and no entry. Both stores are read once, side by side in id
// order, so memory stays bounded by changeTxBytes whatever their size. A
// previous generation that cannot be read is no reason to refuse the new
// one: the record then says why it holds nothing.
func writeChanges(dir, dataDir, previous, note string, changed *changedIDs) (ChangeSummary, error) {
	out, err := bolt.Open(filepath.Join(dir, changesName), 0o644, &bolt.Options{Timeout: openTimeout, NoSync: true, NoFreelistSync: true})
	if err != nil {
		return ChangeSummary{}, fmt.Errorf("create change record: %w", err)
	}
	sum, err := fillChanges(out, dir, dataDir, previous, note, changed)
	if err == nil {
		err = out.Update(func(tx *bolt.Tx) error { return putSummary(tx, sum) })
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ChangeSummary{}, fmt.Errorf("write change record: %w", err)
	}
	return sum, nil
}

func putSummary(tx *bolt.Tx, sum ChangeSummary) error {
	b, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketChangeInfo).Put(infoSummary, b)
}

func fillChanges(out *bolt.DB, dir, dataDir, previous, note string, changed *changedIDs) (ChangeSummary, error) {
	err := out.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketChanges, bucketChangeInfo} {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return ChangeSummary{}, err
	}
	if previous == "" {
		return ChangeSummary{Note: note}, nil
	}
	prev, closePrev, err := openPreviousStore(filepath.Join(indexDir(dataDir), previous))
	if err != nil {
		return ChangeSummary{Note: fmt.Sprintf("previous generation %s could not be read: %v", previous, err)}, nil
	}
	defer closePrev()
	next, err := bolt.Open(filepath.Join(dir, profilesName), 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		return ChangeSummary{}, fmt.Errorf("open new profile store: %w", err)
	}
	defer next.Close()
	w := &changeWriter{out: out, sum: ChangeSummary{Previous: previous, ByField: map[string]int{}}}
	if err := compareStores(prev, next, changed, w); err != nil {
		if errors.Is(err, errPreviousDamaged) {
			return ChangeSummary{Note: fmt.Sprintf("previous generation %s could not be read: %v", previous, err)}, emptyChanges(out)
		}
		return ChangeSummary{}, err
	}
	return w.sum, nil
}

// emptyChanges drops the entries a comparison cut short wrote.
func emptyChanges(out *bolt.DB) error {
	return out.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketChanges); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bucketChanges)
		return err
	})
}

var errPreviousDamaged = errors.New("previous profile store damaged")

// openPreviousStore opens the profile store of the generation in dir,
// its base and layers, read-only after checking it as Open would (each
// file's size and SHA-256 in meta.json, bbolt's page count), holding a
// shared lock on its meta.json so that it is not removed meanwhile.
func openPreviousStore(dir string) (*layeredStore, func(), error) {
	meta, err := ReadMeta(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := checkLayers(meta); err != nil {
		return nil, nil, err
	}
	lock, ok, err := lockFile(filepath.Join(dir, metaName), syscall.LOCK_SH)
	if err != nil {
		return nil, nil, err
	} else if !ok {
		return nil, nil, errors.New("generation is being removed")
	}
	files := profileFiles(meta)
	for _, s := range meta.Files {
		if slices.Contains(files, s.Path) {
			if err := verifyFiles(dir, []FileSum{s}); err != nil {
				lock.Close()
				return nil, nil, err
			}
		}
	}
	store, err := openLayers(dir, files, func(path string) (*bolt.DB, error) {
		if err := checkBoltFile(path); err != nil {
			return nil, err
		}
		return openReadOnly(path)
	})
	if err == nil {
		err = store.checkBuckets()
		if err != nil {
			store.close()
		}
	}
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	return store, func() { store.close(); lock.Close() }, nil
}

// changeWriter buffers the entries of one write transaction of changes.db.
type changeWriter struct {
	out     *bolt.DB
	sum     ChangeSummary
	pending [][2][]byte
	bytes   int
}

func (w *changeWriter) add(id []byte, changes []companydocs.FieldChange) error {
	v, err := json.Marshal(changes)
	if err != nil {
		return fmt.Errorf("encode changes of %q: %w", id, err)
	}
	w.sum.Profiles++
	for _, c := range changes {
		w.sum.ByField[c.Field]++
	}
	w.pending = append(w.pending, [2][]byte{bytes.Clone(id), v})
	w.bytes += len(id) + len(v)
	if w.bytes >= changeTxBytes {
		return w.flush()
	}
	return nil
}

func (w *changeWriter) flush() error {
	if len(w.pending) == 0 {
		return nil
	}
	err := w.out.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketChanges)
		b.FillPercent = 1 // ids arrive in order: fill every page
		for _, kv := range w.pending {
			if err := b.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	w.pending, w.bytes = w.pending[:0], 0
	return err
}

// compareStores walks the profiles of both stores in id order, like a merge
// join, and hands w the changes of every profile of prev; only those of
// changed when an incremental build listed them. A value equal byte for
// byte is the same profile and is not decoded. A panic or fault reading
// prev (damage the checks missed) is errPreviousDamaged.
func compareStores(prev *layeredStore, next *bolt.DB, changed *changedIDs, w *changeWriter) (err error) {
	defer func(old bool) {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", errPreviousDamaged, readFailure(r))
		}
	}(debug.SetPanicOnFault(true))
	err = prev.view(func(ptx storeTx) error {
		return next.View(func(ntx *bolt.Tx) error {
			if changed != nil {
				return compareChanged(ptx, ntx, changed, w)
			}
			return mergeProfiles(ptx, ntx, w)
		})
	})
	if err == nil {
		err = w.flush()
	}
	return err
}

func mergeProfiles(ptx storeTx, ntx *bolt.Tx, w *changeWriter) error {
	nb := ntx.Bucket(bucketProfiles)
	if nb == nil {
		return fmt.Errorf("%w: no profiles bucket", errPreviousDamaged)
	}
	pc, nc := ptx.cursor(), nb.Cursor()
	pk, pv := pc.first()
	nk, nv := nc.First()
	pages := pageRelease{release: func() error { return releaseBoth(ptx, ntx) }}
	for pk != nil || nk != nil {
		if err := pages.walked(len(pv) + len(nv)); err != nil {
			return err
		}
		switch c := compareKeys(pk, nk); {
		case c > 0: // new in this generation
			w.sum.Added++
			nk, nv = nc.Next()
		case c < 0: // no longer held under its id
			if err := compareGone(ptx, ntx, pk, pv, w); err != nil {
				return err
			}
			pk, pv = pc.next()
		default:
			if err := compareValues(pk, pv, nv, w); err != nil {
				return err
			}
			pk, pv = pc.next()
			nk, nv = nc.Next()
		}
	}
	return nil
}

// compareChanged hands w the changes of the profiles an incremental
// build listed (changedIDs, both lists in id order), in id order.
func compareChanged(ptx storeTx, ntx *bolt.Tx, d *changedIDs, w *changeWriter) error {
	nb := ntx.Bucket(bucketProfiles)
	index, remove := d.index, d.remove
	pages := pageRelease{release: func() error { return releaseBoth(ptx, ntx) }}
	for len(index) > 0 || len(remove) > 0 {
		if err := pages.lookedUp(); err != nil {
			return err
		}
		var id []byte
		if len(remove) == 0 || len(index) > 0 && index[0] < remove[0] {
			id, index = []byte(index[0]), index[1:]
		} else {
			id, remove = []byte(remove[0]), remove[1:]
		}
		var err error
		switch pv, nv := ptx.value(id), nb.Get(id); {
		case pv == nil:
			w.sum.Added++
		case nv == nil:
			err = compareGone(ptx, ntx, id, pv, w)
		default:
			err = compareValues(id, pv, nv, w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// compareGone records a profile of the previous generation that the new one
// holds no longer under its id: as moved to its successor (see successor),
// or as removed.
func compareGone(ptx storeTx, ntx *bolt.Tx, id, v []byte, w *changeWriter) error {
	before, err := decodeProfile(string(id), v)
	if err != nil {
		return fmt.Errorf("%w: %v", errPreviousDamaged, err)
	}
	after, err := successor(ptx, ntx, before)
	if err != nil {
		return err
	}
	return w.add(id, companydocs.ProfileChanges(before, after))
}

// successor finds the entry a register entry moved to. Profile ids derive
// from the register identity, so an entry moved to another court is
// another profile. Its successor is the one profile new in the new
// generation with the same register type and number that names the old
// court as its former court ("Friedberg früher Aschaffenburg HRB 8959", as
// the register records a move) or has the same name. nil when there is
// none or more than one; a move that changes the number is not found (the
// register dumps do not link the two entries).
func successor(ptx storeTx, ntx *bolt.Tx, before *companydocs.Profile) (*companydocs.Profile, error) {
	if before.Ref.Type == "" || before.Ref.Number == "" {
		return nil, nil
	}
	var found *companydocs.Profile
	for _, id := range newIDs(ptx, ntx, numberKey(before.Ref.Type, before.Ref.Number)) {
		p, err := getProfile(ntx, id)
		if err != nil || p == nil {
			return nil, err
		}
		moved := before.Ref.Court != "" && p.Ref.FormerCourt == before.Ref.Court
		if !moved && register.NameKey(p.Name) != register.NameKey(before.Name) {
			continue
		}
		if found != nil {
			return nil, nil
		}
		found = p
	}
	return found, nil
}

// newIDs lists the ids under number in the new store's numbers bucket that
// the previous store does not hold. Only they are decoded: a small number
// ("HRB 5") is held by an entry at nearly every court.
func newIDs(ptx storeTx, ntx *bolt.Tx, number string) []string {
	prefix := indexEntry(number, "")
	var ids []string
	c := ntx.Bucket(bucketNumbers).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[len(prefix):]
		if ptx.value(id) == nil {
			ids = append(ids, string(id))
		}
	}
	return ids
}

// compareKeys orders cursor keys with nil (an exhausted cursor) last.
func compareKeys(p, n []byte) int {
	switch {
	case p == nil:
		return 1
	case n == nil:
		return -1
	}
	return bytes.Compare(p, n)
}

func compareValues(id, pv, nv []byte, w *changeWriter) error {
	if bytes.Equal(pv, nv) {
		return nil
	}
	before, err := decodeProfile(string(id), pv)
	if err != nil {
		return fmt.Errorf("%w: %v", errPreviousDamaged, err)
	}
	after, err := decodeProfile(string(id), nv)
	if err != nil {
		return err
	}
	if changes := companydocs.ProfileChanges(before, after); len(changes) > 0 {
		return w.add(id, changes)
	}
	return nil
}

func releaseBoth(ptx storeTx, ntx *bolt.Tx) error {
	if err := ptx.release(); err != nil {
		return err
	}
	return releaseResident(ntx.DB(), ntx.Size())
}

// ChangeSet is the change record of a generation, open for reading. It is
// safe for concurrent use while its generation is open.
type ChangeSet struct {
	gen     string
	summary ChangeSummary
	db      *bolt.DB
	faulted atomic.Bool
}

// Previous returns the generation the record compares with; "" when there
// was none to compare with (Summary().Note says why).
func (c *ChangeSet) Previous() string { return c.summary.Previous }

// Summary returns the record's counts.
func (c *ChangeSet) Summary() ChangeSummary { return c.summary }

// Lookup returns the changes of the profile id of the previous generation:
// ok is false when the profile is unchanged (or new in this generation, or
// there was no previous generation). The Before and After of each change
// are json.RawMessage: they marshal to the JSON ProfileChanges gave.
func (c *ChangeSet) Lookup(id string) (changes []companydocs.FieldChange, ok bool, err error) {
	err = c.read(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketChanges).Get([]byte(id))
		if v == nil {
			return nil
		}
		ok = true
		changes, err = decodeChanges(id, v)
		return err
	})
	return changes, ok, err
}

// Changed reports whether the profile id of the previous generation has
// changes recorded; true when the record cannot be read, so that a caller
// that skips unchanged profiles looks this one up rather than miss a
// change.
func (c *ChangeSet) Changed(id string) bool {
	_, ok, err := c.Lookup(id)
	return ok || err != nil
}

// Each calls fn for every entry in profile id order until fn returns an
// error, which Each returns.
func (c *ChangeSet) Each(fn func(id string, changes []companydocs.FieldChange) error) error {
	return c.read(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketChanges).ForEach(func(k, v []byte) error {
			changes, err := decodeChanges(string(k), v)
			if err != nil {
				return err
			}
			return fn(string(k), changes)
		})
	})
}

// read runs fn in a read transaction; a fault or panic reading the mapped
// file (changed on disk after it was checked) is ErrChangesDamaged, and
// every later call fails at once.
func (c *ChangeSet) read(fn func(*bolt.Tx) error) (err error) {
	if c.faulted.Load() {
		return fmt.Errorf("%w (generation %s: a read failed earlier)", ErrChangesDamaged, c.gen)
	}
	defer func(old bool) {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (generation %s: %v)", ErrChangesDamaged, c.gen, readFailure(r))
			c.faulted.Store(true)
		}
	}(debug.SetPanicOnFault(true))
	return c.db.View(fn)
}

// readFailure returns a recovered memory fault, runtime error or bbolt
// assertion (damaged bytes, see fault.go) and panics again with anything
// else.
func readFailure(r any) any {
	switch r.(type) {
	case runtime.Error, string, interface{ Addr() uintptr }:
		return r
	}
	panic(r)
}

// storedChange is a FieldChange as changes.db holds it.
type storedChange struct {
	Field  string          `json:"field"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

func decodeChanges(id string, v []byte) ([]companydocs.FieldChange, error) {
	var stored []storedChange
	if err := json.Unmarshal(v, &stored); err != nil {
		return nil, fmt.Errorf("%w: entry of %q: %v", ErrChangesDamaged, id, err)
	}
	out := make([]companydocs.FieldChange, len(stored))
	for i, s := range stored {
		out[i] = companydocs.FieldChange{Field: s.Field, Before: s.Before, After: s.After}
	}
	return out, nil
}

func (c *ChangeSet) close() error { return c.db.Close() }

// Changes opens the generation's change record on first use, after checking
// it against its size and SHA-256 in meta.json. ErrNoChanges means the
// generation has none; an error wrapping ErrChangesDamaged means it is
// damaged. Neither affects searches.
func (g *Generation) Changes() (*ChangeSet, error) {
	g.changesOnce.Do(func() {
		g.changes, g.changesErr = openChanges(g.dir, g.meta)
	})
	return g.changes, g.changesErr
}

// openChanges checks and opens changes.db of the generation in dir.
func openChanges(dir string, meta Meta) (*ChangeSet, error) {
	sum, listed := changesSum(meta.Files)
	path := filepath.Join(dir, changesName)
	if !listed {
		// Not published with the generation (a file put there later is
		// not trusted).
		return nil, ErrNoChanges
	}
	if err := verifyFiles(dir, []FileSum{sum}); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrChangesDamaged, err)
	}
	if err := checkBoltFile(path); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrChangesDamaged, err)
	}
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true, Timeout: openTimeout})
	if err != nil {
		if _, statErr := os.Stat(path); statErr != nil {
			return nil, fmt.Errorf("%w: %v", ErrChangesDamaged, err)
		}
		return nil, fmt.Errorf("open change record: %w", err)
	}
	c := &ChangeSet{gen: meta.ID, db: db}
	err = c.read(func(tx *bolt.Tx) error {
		info := tx.Bucket(bucketChangeInfo)
		if info == nil || tx.Bucket(bucketChanges) == nil {
			return fmt.Errorf("%w: a bucket is missing", ErrChangesDamaged)
		}
		if err := json.Unmarshal(info.Get(infoSummary), &c.summary); err != nil {
			return fmt.Errorf("%w: summary: %v", ErrChangesDamaged, err)
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return c, nil
}

// changesSum returns the FileSum of changes.db among sums.
func changesSum(sums []FileSum) (FileSum, bool) {
	for _, s := range sums {
		if s.Path == changesName {
			return s, true
		}
	}
	return FileSum{}, false
}

// withoutChanges returns sums without the change record's, which Open does
// not check: a damaged change record must not keep the generation from
// serving.
func withoutChanges(sums []FileSum) []FileSum {
	out := make([]FileSum, 0, len(sums))
	for _, s := range sums {
		if s.Path != changesName {
			out = append(out, s)
		}
	}
	return out
}
