package index

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"companydocs/internal/boltfile"
)

// A node reads a generation's files once: a file hashed, or a bbolt file
// checked whole, earlier in the process and not written since is taken as
// it was (internal/filesum). These tests age a generation's files, as a
// served generation's are (filesum remembers nothing of a file written in
// the last 2 s), read them as a node does, and change them in place.

// ageFiles sets the modification time of every file under dir an hour
// back.
func ageFiles(t *testing.T, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// flipNumbersLeaf inverts, in place, the type byte of a leaf page of the
// numbers bucket of the profile store in dir: damage the SHA-256 and the
// walk (openChecked) find, and nothing else Open, OpenProfileStore or
// Install does reads.
func flipNumbersLeaf(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, profilesName)
	bf, err := boltfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var leaf uint64
	err = bf.Walk(time.Time{}, func(p boltfile.Page) {
		if p.Type == "leaf" && p.Bucket == string(bucketNumbers) {
			leaf = p.ID
		}
	})
	pageSize := int64(bf.Meta.PageSize)
	bf.Close()
	if err != nil || leaf == 0 {
		t.Fatalf("no leaf page of %s in %s: %v", bucketNumbers, path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, int64(leaf)*pageSize+8); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, int64(leaf)*pageSize+8); err != nil {
		t.Fatal(err)
	}
}

// keepingIdentity runs change and sets the modification time of the file
// at path back to what it was: the file keeps its identity, as one whose
// bytes rot on disk does.
func keepingIdentity(t *testing.T, path string, change func()) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	change()
	if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// mustOpenAndClose opens the generation in dir, which reads all of it.
func mustOpenAndClose(t *testing.T, dir string) {
	t.Helper()
	g, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkAsAFollowerDoes reads the download in dir as a node that follows
// does before Install: the download's check of every file against its
// SHA-256, and the gate's OpenProfileStore, which walks the profile store.
func checkAsAFollowerDoes(t *testing.T, dir string) {
	t.Helper()
	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if _, sum, err := FileChecksum(filepath.Join(dir, filepath.FromSlash(f.Path))); err != nil || sum != f.SHA256 {
			t.Fatalf("%s: %s, %v; meta.json records %s", f.Path, sum, err, f.SHA256)
		}
	}
	s, err := OpenProfileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAFileWrittenAfterItWasReadIsRefused: a generation's file damaged
// by a write after the process hashed it and walked it is read again and
// refused, by Open and by Install, also when meta.json records the
// damaged file's SHA-256 (the walk finds it).
func TestAFileWrittenAfterItWasReadIsRefused(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	m, err := ReadMeta(tmpl.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Open", func(t *testing.T) {
		dir := copyGeneration(t, tmpl.dir, t.TempDir(), m.ID)
		ageFiles(t, dir)
		mustOpenAndClose(t, dir)
		flipNumbersLeaf(t, dir)
		if _, err := Open(dir); RejectReason(err) != RejectFiles {
			t.Fatalf("Open of a file written since it was hashed: %v, want a refusal of its files", err)
		}
	})
	for name, want := range map[string]string{"Install": RejectFiles, "Install, its SHA-256 recorded": RejectStructure} {
		t.Run(name, func(t *testing.T) {
			node := t.TempDir()
			dir := copyGeneration(t, tmpl.dir, node, downloadPrefix+m.ID)
			ageFiles(t, dir)
			checkAsAFollowerDoes(t, dir)
			flipNumbersLeaf(t, dir)
			if want == RejectStructure {
				recordSum(t, dir, profilesName)
			}
			if _, err := Install(node, dir, DefaultKeep); RejectReason(err) != want {
				t.Fatalf("Install of a file written since it was read: %v (reason %q), want %q", err, RejectReason(err), want)
			}
		})
	}
}

// TestAnUnwrittenFileIsNotReadAgain: a second Open, or an Install after
// the follower's checks, does not read a file the process read before
// and that kept its identity: the bytes changed without a write (as by
// bit rot) go unseen by this process, while a copy of them, a file the
// process has not read, is refused, as a restart's Open refuses them.
func TestAnUnwrittenFileIsNotReadAgain(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	m, err := ReadMeta(tmpl.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Open", func(t *testing.T) {
		dir := copyGeneration(t, tmpl.dir, t.TempDir(), m.ID)
		ageFiles(t, dir)
		mustOpenAndClose(t, dir)
		keepingIdentity(t, filepath.Join(dir, profilesName), func() { flipNumbersLeaf(t, dir) })
		mustOpenAndClose(t, dir)
		if _, err := Open(copyGeneration(t, dir, t.TempDir(), m.ID)); RejectReason(err) != RejectFiles {
			t.Fatalf("Open of a copy: %v, want a refusal of its files", err)
		}
	})
	t.Run("OpenProfileStore", func(t *testing.T) {
		dir := copyGeneration(t, tmpl.dir, t.TempDir(), downloadPrefix+m.ID)
		ageFiles(t, dir)
		checkAsAFollowerDoes(t, dir)
		keepingIdentity(t, filepath.Join(dir, profilesName), func() { flipNumbersLeaf(t, dir) })
		s, err := OpenProfileStore(dir)
		if err != nil {
			t.Fatalf("OpenProfileStore walked the store again: %v", err)
		}
		s.Close()
		mustRefuseStore(t, copyGeneration(t, dir, t.TempDir(), m.ID))
	})
	t.Run("Install", func(t *testing.T) {
		node := t.TempDir()
		dir := copyGeneration(t, tmpl.dir, node, downloadPrefix+m.ID)
		ageFiles(t, dir)
		checkAsAFollowerDoes(t, dir)
		keepingIdentity(t, filepath.Join(dir, profilesName), func() { flipNumbersLeaf(t, dir) })
		if _, err := Install(node, dir, DefaultKeep); err != nil {
			t.Fatalf("Install read the profile store again: %v", err)
		}
	})
}
