package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// oldFile writes content to a new file in a directory of its own, last
// written an hour ago, as a generation's files are by the time a node
// reads them again.
func oldFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	setOld(t, path)
	return path
}

// setOld sets the file's modification time an hour back.
func setOld(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// counting returns a compute for Do that counts its calls and returns
// the file's content.
func counting(path string, calls *int) func() (string, error) {
	return func() (string, error) {
		*calls++
		b, err := os.ReadFile(path)
		return string(b), err
	}
}

func sha256Hex(content string) string {
	s := sha256.Sum256([]byte(content))
	return hex.EncodeToString(s[:])
}

func TestSHA256IsTheFilesSizeAndSum(t *testing.T) {
	for _, content := range []string{"", "a generation's file\n"} {
		path := oldFile(t, content)
		for range 2 { // computed, then remembered
			size, sum, err := SHA256(path)
			if err != nil || size != int64(len(content)) || sum != sha256Hex(content) {
				t.Fatalf("SHA256 of %q: %d, %s, %v; want %d, %s", content, size, sum, err, len(content), sha256Hex(content))
			}
		}
	}
	if _, _, err := SHA256(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SHA256 of a missing file: %v, want ErrNotExist", err)
	}
}

// TestMemoReadsAnUnchangedFileOnce: a second Do on the same file, or on a
// hard link to it, is answered from memory.
func TestMemoReadsAnUnchangedFileOnce(t *testing.T) {
	path := oldFile(t, "content")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Link(path, link); err != nil {
		t.Fatal(err)
	}
	m := NewMemo[string]()
	var calls int
	for _, p := range []string{path, path, link} {
		if v, err := m.Do(p, counting(p, &calls)); err != nil || v != "content" {
			t.Fatalf("Do(%s): %q, %v", p, v, err)
		}
	}
	if calls != 1 {
		t.Errorf("the file was read %d times, want 1", calls)
	}
}

// TestMemoReadsAWrittenFileAgain: a file written after it was read (the
// same size, new bytes) is read again, and SHA256 gives the new sum.
func TestMemoReadsAWrittenFileAgain(t *testing.T) {
	path := oldFile(t, "good bytes")
	if _, sum, err := SHA256(path); err != nil || sum != sha256Hex("good bytes") {
		t.Fatalf("SHA256: %s, %v", sum, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("evil"), 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, sum, err := SHA256(path); err != nil || sum != sha256Hex("evil bytes") {
		t.Errorf("SHA256 after a write: %s, %v; want the sum of the new bytes %s", sum, err, sha256Hex("evil bytes"))
	}
}

// TestMemoRemembersOnlyWhatItMay: a file written within minAge of the
// read, a failed compute and a file written while compute ran are read
// again the next time.
func TestMemoRemembersOnlyWhatItMay(t *testing.T) {
	for name, c := range map[string]struct {
		young   bool
		compute func(path string) (string, error)
	}{
		"written just now": {young: true, compute: func(string) (string, error) { return "v", nil }},
		"compute failed":   {compute: func(string) (string, error) { return "", errors.New("read failed") }},
		"written while read": {compute: func(path string) (string, error) {
			return "v", os.WriteFile(path, []byte("other"), 0o644)
		}},
	} {
		t.Run(name, func(t *testing.T) {
			path := oldFile(t, "content")
			if c.young {
				if err := os.WriteFile(path, []byte("content"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m := NewMemo[string]()
			m.Do(path, func() (string, error) { return c.compute(path) })
			if len(m.byID) != 0 {
				t.Fatalf("remembered %v", m.byID)
			}
		})
	}
}

// TestMemoWaitsForTheFileSystemsTick: a file written a fraction of a
// second ago is remembered once fineMinAge has passed where the file
// system keeps fractions of a second, and not before minAge where its
// modification time is a whole second, which may be its granularity.
func TestMemoWaitsForTheFileSystemsTick(t *testing.T) {
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	fine := now.Add(-2 * fineMinAge)
	if fine.Nanosecond() == 0 {
		fine = fine.Add(time.Millisecond)
	}
	for name, c := range map[string]struct {
		mtime    time.Time
		remember bool
	}{
		"fraction of a second, past fineMinAge":   {fine, true},
		"whole second, within minAge":             {now.Truncate(time.Second), false},
		"whole second, past minAge":               {now.Add(-2 * minAge).Truncate(time.Second), true},
		"fraction of a second, within fineMinAge": {now, false},
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.Chtimes(path, c.mtime, c.mtime); err != nil {
				t.Fatal(err)
			}
			m := NewMemo[string]()
			m.Do(path, func() (string, error) { return "v", nil })
			if got := len(m.byID) == 1; got != c.remember {
				t.Errorf("remembered %v, want %v", got, c.remember)
			}
		})
	}
}

// TestMemoIsBounded: past limit entries, the oldest goes first.
func TestMemoIsBounded(t *testing.T) {
	m := NewMemo[int]()
	for i := range limit + 10 {
		m.put(identity{ino: uint64(i)}, i)
	}
	if len(m.byID) != limit {
		t.Fatalf("%d entries, want %d", len(m.byID), limit)
	}
	for i := range 10 {
		if _, ok := m.get(identity{ino: uint64(i)}); ok {
			t.Errorf("entry %d of the oldest kept", i)
		}
	}
	if v, ok := m.get(identity{ino: limit + 9}); !ok || v != limit+9 {
		t.Errorf("newest entry: %d, %v", v, ok)
	}
}

// TestSHA256Concurrently: goroutines hashing the same and other files at
// once (run with -race) all get the right sums.
func TestSHA256Concurrently(t *testing.T) {
	paths := []string{oldFile(t, "one"), oldFile(t, "two")}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path, content := paths[i%2], []string{"one", "two"}[i%2]
			if _, sum, err := SHA256(path); err != nil || sum != sha256Hex(content) {
				t.Errorf("SHA256(%s): %s, %v", path, sum, err)
			}
		})
	}
	wg.Wait()
}
