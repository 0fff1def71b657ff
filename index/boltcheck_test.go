package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"companydocs/internal/boltfile"
)

// The downloaded profile store is checked whole before bbolt reads it
// (openChecked). Each case damages a copy of a real profiles.db and opens
// it as a node that follows does (OpenProfileStore): the damage is
// refused as damage, and the test process lives (a read of a page past a
// cut file's end is a SIGBUS that would end it).

// storeTemplate is the profiles.db of the package's real sample
// (sharedGeneration: 3,664 profiles in 268 pages of 4 KiB, 5 of them
// branch pages).
type storeTemplate struct {
	path  string
	meta  boltfile.Meta
	pages []boltfile.Page
}

var (
	storeOnce sync.Once
	storeTmpl storeTemplate
	storeErr  error
)

func sharedStoreTemplate(tb testing.TB) storeTemplate {
	tb.Helper()
	g := sharedGeneration(tb)
	storeOnce.Do(func() {
		storeTmpl = storeTemplate{path: filepath.Join(g.Dir(), profilesName)}
		bf, err := boltfile.Open(storeTmpl.path)
		if storeErr = err; err != nil {
			return
		}
		defer bf.Close()
		storeTmpl.meta = bf.Meta
		storeErr = bf.Walk(time.Time{}, func(p boltfile.Page) { storeTmpl.pages = append(storeTmpl.pages, p) })
	})
	if storeErr != nil {
		tb.Fatal(storeErr)
	}
	return storeTmpl
}

// storeCopy copies the template's profiles.db into a directory of its own,
// changed by damage, and returns the directory.
func storeCopy(t *testing.T, tmpl storeTemplate, damage func(b []byte) []byte) string {
	t.Helper()
	b, err := os.ReadFile(tmpl.path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, profilesName), damage(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mustRefuseStore opens the store in dir and wants a refusal for damage.
func mustRefuseStore(t *testing.T, dir string) {
	t.Helper()
	s, err := OpenProfileStore(dir)
	if err == nil {
		s.Close()
		t.Fatal("OpenProfileStore opened a damaged profile store")
	}
	if RejectReason(err) != RejectStructure {
		t.Errorf("refusal %q (%v), want %q", RejectReason(err), err, RejectStructure)
	}
}

// TestDamagedProfileStoreIsRefusedBeforeUse: a profiles.db cut short at
// any length below the pages its meta page counts (64 KiB, as a tester's
// publication had it, among others) is refused as damage; the intact
// file opens and answers.
func TestDamagedProfileStoreIsRefusedBeforeUse(t *testing.T) {
	tmpl := sharedStoreTemplate(t)
	used := int(tmpl.meta.HighMark) * int(tmpl.meta.PageSize)
	ps := int(tmpl.meta.PageSize)
	for _, n := range []int{0, 100, ps, 2 * ps, 3 * ps, 64 << 10, used / 2, used - ps, used - 1} {
		t.Run(fmt.Sprintf("cut to %d bytes", n), func(t *testing.T) {
			mustRefuseStore(t, storeCopy(t, tmpl, func(b []byte) []byte { return b[:n] }))
		})
	}
	t.Run("intact", func(t *testing.T) {
		s, err := OpenProfileStore(storeCopy(t, tmpl, func(b []byte) []byte { return b }))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for _, want := range loadRealProfiles(t) {
			if p, err := s.Profile(want.ID); err != nil || p == nil || p.Name != want.Name {
				t.Fatalf("Profile(%s) of the intact store: %v, %v", want.ID, p, err)
			}
		}
	})
}

// TestDamagedProfileStoreWithAFlippedByteIsRefused: a byte flipped where
// bbolt reads its structure (a page's own id, its type, where its first
// element's data lies, both meta pages) or a key put out of order is
// refused by the walk, before bbolt reads the file. bbolt's own check
// would end the process on the key out of order (see internal/boltfile),
// which this test would then not survive.
func TestDamagedProfileStoreWithAFlippedByteIsRefused(t *testing.T) {
	tmpl := sharedStoreTemplate(t)
	ps := int(tmpl.meta.PageSize)
	for _, p := range spreadPages(tmpl.pages, 12) {
		at := int(p.ID) * ps
		elem := at + 16 // the first element, after the page header
		for name, off := range map[string]int{
			"its id":                    at,
			"its type":                  at + 8,
			"its first element's place": elem + map[bool]int{true: 3, false: 7}[p.Type == "branch"],
		} {
			t.Run(fmt.Sprintf("%s page %d/%s", p.Type, p.ID, name), func(t *testing.T) {
				mustRefuseStore(t, storeCopy(t, tmpl, flipAt(off)))
			})
		}
	}
	t.Run("both meta pages", func(t *testing.T) {
		mustRefuseStore(t, storeCopy(t, tmpl, func(b []byte) []byte { return flipAt(ps + 40)(flipAt(40)(b)) }))
	})
	t.Run("a key out of order", func(t *testing.T) {
		mustRefuseStore(t, storeCopy(t, tmpl, keyOutOfOrder(t, tmpl)))
	})
}

// spreadPages returns n of pages spread evenly, the first and the last
// the walk reached among them.
func spreadPages(pages []boltfile.Page, n int) []boltfile.Page {
	var out []boltfile.Page
	for i := range n {
		out = append(out, pages[i*(len(pages)-1)/(n-1)])
	}
	return out
}

// flipAt inverts the byte at off.
func flipAt(off int) func([]byte) []byte {
	return func(b []byte) []byte {
		b[off] ^= 0xff
		return b
	}
}

// keyOutOfOrder sets the first byte of the second key of a leaf of the
// profiles bucket to 0, before the first key's (profile ids start with a
// letter).
func keyOutOfOrder(t *testing.T, tmpl storeTemplate) func([]byte) []byte {
	t.Helper()
	ps := int(tmpl.meta.PageSize)
	for _, p := range tmpl.pages {
		if p.Bucket != string(bucketProfiles) || p.Type != "leaf" {
			continue
		}
		return func(b []byte) []byte {
			elem := int(p.ID)*ps + 16 + 16 // the second leaf element
			pos := int(binary.LittleEndian.Uint32(b[elem+4:]))
			b[elem+pos] = 0
			return b
		}
	}
	t.Fatal("the profiles bucket has no leaf page")
	return nil
}

// TestDamagedProfileStoreNeverCrashesTheProcess flips one byte at 100
// places spread over the file: a flip in a profile's bytes may go
// unnoticed (bbolt keeps no checksums of its pages), but opening the store
// and looking profiles up (every fifth, a few on every leaf) never ends
// the process.
func TestDamagedProfileStoreNeverCrashesTheProcess(t *testing.T) {
	tmpl := sharedStoreTemplate(t)
	var ids []string
	for i, p := range loadRealProfiles(t) {
		if i%5 == 0 {
			ids = append(ids, p.ID)
		}
	}
	st, err := os.Stat(tmpl.path)
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	var refused, opened, failedLookups int
	const flips = 100
	for range flips {
		dir := storeCopy(t, tmpl, flipAt(rnd.IntN(int(st.Size()))))
		s, err := OpenProfileStore(dir)
		if err != nil {
			refused++
			continue
		}
		opened++
		for _, id := range ids {
			if _, err := s.Profile(id); err != nil {
				failedLookups++
			}
		}
		s.Close()
	}
	t.Logf("%d flips: %d refused, %d opened (%d lookups of %d failed)", flips, refused, opened, failedLookups, opened*len(ids))
}

// TestDamagedProfileStoreAfterOpenFailsItsLookups: a store cut short on
// disk after it was checked and opened (mapped) makes a lookup's read
// fault; the lookup fails, and so does every later one, at once.
func TestDamagedProfileStoreAfterOpenFailsItsLookups(t *testing.T) {
	tmpl := sharedStoreTemplate(t)
	dir := storeCopy(t, tmpl, func(b []byte) []byte { return b })
	s, err := OpenProfileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, profilesName), 2*int64(tmpl.meta.PageSize)); err != nil {
		t.Fatal(err)
	}
	id := loadRealProfiles(t)[0].ID
	for i := range 2 {
		if p, err := s.Profile(id); err == nil {
			t.Fatalf("lookup %d in a store cut short under it: %v, no error", i+1, p)
		} else {
			t.Logf("lookup %d: %v", i+1, err)
		}
	}
	if err := s.Close(); err == nil {
		t.Error("Close of a faulted store says nothing")
	}
}

// TestDamagedDownloadIsRefusedByInstall: a downloaded generation whose
// profiles.db is cut to 64 KiB, with meta.json naming the cut file's size
// and SHA-256 (the publication lies consistently), is refused as damage
// by Install before any of it is read with bbolt, and is not installed.
// So is one whose change record (smaller) is cut to half its pages, or is
// a sound bbolt file without the record's buckets: damage a node does not
// fetch again and again.
func TestDamagedDownloadIsRefusedByInstall(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	cut := func(file string, n func(path string) int64) func(t *testing.T, dir string) string {
		return func(t *testing.T, dir string) string {
			path := filepath.Join(dir, file)
			if err := os.Truncate(path, n(path)); err != nil {
				t.Fatal(err)
			}
			return file
		}
	}
	for name, damage := range map[string]func(t *testing.T, dir string) string{
		"profiles.db cut to 64 KiB": cut(profilesName, func(string) int64 { return 64 << 10 }),
		"changes.db cut to half its pages": cut(changesName, func(path string) int64 {
			return usedBytes(t, path) / 2
		}),
		"changes.db without its buckets": func(t *testing.T, dir string) string {
			emptyBoltFile(t, filepath.Join(dir, changesName))
			return changesName
		},
	} {
		t.Run(name, func(t *testing.T) {
			node := t.TempDir()
			m, err := ReadMeta(tmpl.dir)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyGeneration(t, tmpl.dir, node, downloadPrefix+m.ID)
			recordSum(t, dir, damage(t, dir))
			_, err = Install(node, dir, DefaultKeep)
			if RejectReason(err) != RejectStructure {
				t.Fatalf("Install: %v (reason %q), want a refusal of its structure", err, RejectReason(err))
			}
			if _, err := ReadCurrent(node); !errors.Is(err, ErrNoGeneration) {
				t.Errorf("CURRENT after a refused install: %v", err)
			}
		})
	}
}

// emptyBoltFile replaces the file at path with a bbolt file that holds
// nothing.
func emptyBoltFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// usedBytes returns the bytes of the pages the bbolt file at path uses.
func usedBytes(t *testing.T, path string) int64 {
	t.Helper()
	bf, err := boltfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	return int64(bf.Meta.HighMark) * int64(bf.Meta.PageSize)
}

// recordSum records the size and SHA-256 of the generation's file in its
// meta.json.
func recordSum(t *testing.T, dir, file string) {
	t.Helper()
	path := filepath.Join(dir, file)
	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	size, sum, err := readSHA256(path)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for i := range m.Files {
		if m.Files[i].Path == file {
			m.Files[i].Size, m.Files[i].SHA256, found = size, sum, true
		}
	}
	if !found {
		t.Fatalf("meta.json does not list %s", file)
	}
	if err := writeMeta(dir, m); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkOpenChecked measures the check of a downloaded profile store,
// on the profiles.db of benchGeneration (the repository's 50,000 records
// of chunk 13; COMPANYDOCS_BENCH_RECORDS and the national data for more):
// the walk, bbolt's check, both (checkWhole: openChecked of a file the
// process has not checked before), and the SHA-256 a download is checked
// with already, for scale. MB/s is of the whole file.
func BenchmarkOpenChecked(b *testing.B) {
	g, _ := benchGeneration(b)
	path := filepath.Join(g.Dir(), profilesName)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d bytes, %d profiles", path, st.Size(), g.Count())
	mapped := func(path string) error {
		db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true})
		if err != nil {
			return err
		}
		if err := checkMapped(db, path); err != nil {
			return err
		}
		return db.Close()
	}
	hash := func(path string) error { _, _, err := readSHA256(path); return err }
	for _, step := range []struct {
		name  string
		check func(string) error
	}{{"walk", walkBoltFile}, {"bbolt check", mapped}, {"both", checkWhole}, {"sha256", hash}} {
		b.Run(step.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			for b.Loop() {
				if err := step.check(path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
