package objectstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// mustPublished uploads a generation with a generated file of bigSize
// bytes as "gen-1" and returns the store, its directory, the source
// directory and the file list.
func mustPublished(tb testing.TB, bigSize int64) (*Store, string, string, []File) {
	tb.Helper()
	src, files := mustGeneration(tb, bigSize)
	s, bucket := mustStore(tb)
	if _, err := s.Upload(context.Background(), "gen-1", src, files); err != nil {
		tb.Fatal(err)
	}
	return s, bucket, src, files
}

func TestDownloadRefusesDamagedObject(t *testing.T) {
	damage := []struct {
		name string
		do   func(path string, size int64) error
	}{
		{"a flipped byte", func(path string, size int64) error {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, size/3); err != nil {
				return err
			}
			b[0] ^= 0x20
			_, err = f.WriteAt(b, size/3)
			return err
		}},
		{"truncated", func(path string, size int64) error { return os.Truncate(path, size-1000) }},
		{"longer", func(path string, size int64) error { return os.Truncate(path, size+1) }},
		{"empty", func(path string, size int64) error { return os.Truncate(path, 0) }},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			s, bucket, src, files := mustPublished(t, 1<<20)
			obj := filepath.Join(bucket, "gen-1", filepath.FromSlash(bigPath))
			if err := d.do(obj, int64(len(mustRead(t, obj)))); err != nil {
				t.Fatal(err)
			}
			dst := t.TempDir()
			err := s.Download(context.Background(), "gen-1", dst, files, 0, nil)
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), bigPath) {
				t.Fatalf("download of a damaged object: %v, want ErrDamaged naming %s", err, bigPath)
			}
			final := filepath.Join(dst, filepath.FromSlash(bigPath))
			for _, p := range []string{final, final + partSuffix} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is there after a damaged download (%v)", p, err)
				}
			}
			// repaired, the next try fetches it anew (Upload would not
			// repair it: it trusts an object of the listed size and
			// SHA-256 metadata)
			mustWrite(t, obj, bytes.NewReader(mustRead(t, filepath.Join(src, filepath.FromSlash(bigPath)))))
			if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
				t.Fatal(err)
			}
			mustSameFiles(t, src, dst, files)
		})
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestDownloadReplacesWrongLocalFiles(t *testing.T) {
	s, _, src, files := mustPublished(t, 1<<20)
	dst := t.TempDir()
	final := filepath.Join(dst, filepath.FromSlash(bigPath))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		t.Fatal(err)
	}
	// a file of the right size but other bytes, and a partial file longer
	// than the object
	if err := os.WriteFile(final, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, filepath.FromSlash(files[0].Path))+partSuffix, make([]byte, files[0].Size+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
		t.Fatal(err)
	}
	mustSameFiles(t, src, dst, files)
}

func TestRefusesNamesAndPathsOutside(t *testing.T) {
	s, _, src, files := mustPublished(t, 1<<10)
	cases := []struct {
		name, gen, path string
	}{
		{"parent path", "gen-1", "../x"},
		{"parent inside path", "gen-1", "bleve/../../x"},
		{"absolute path", "gen-1", "/etc/passwd"},
		{"unclean path", "gen-1", "bleve//x"},
		{"dot path", "gen-1", "."},
		{"empty path", "gen-1", ""},
		{"backslash path", "gen-1", `..\x`},
		{"parent name", "..", "x"},
		{"dot name", ".", "x"},
		{"empty name", "", "x"},
		{"slash name", "a/b", "x"},
		{"backslash name", `a\b`, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bad := append(files[:1:1], File{Path: c.path, Size: 1, SHA256: files[0].SHA256})
			dst := filepath.Join(t.TempDir(), "a", "b")
			if err := s.Download(context.Background(), c.gen, dst, bad, 0, nil); err == nil {
				t.Fatal("download accepted it")
			}
			if _, err := os.Stat(filepath.Join(dst, "..")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("download wrote before refusing (%v)", err)
			}
			if _, err := s.Upload(context.Background(), c.gen, src, bad); err == nil {
				t.Fatal("upload accepted it")
			}
		})
	}
	t.Run("delete", func(t *testing.T) {
		if err := s.Delete(context.Background(), ".."); err == nil {
			t.Fatal("delete accepted ..")
		}
	})
}

func TestDownloadRate(t *testing.T) {
	const size, rate = 4 << 20, 8 << 20
	s, _, _, files := mustPublished(t, size)
	big := []File{files[slices.IndexFunc(files, func(f File) bool { return f.Path == bigPath })]}
	start := time.Now()
	if err := s.Download(context.Background(), "gen-1", t.TempDir(), big, rate, nil); err != nil {
		t.Fatal(err)
	}
	// the first buffer comes without waiting (the burst)
	if min := time.Duration(float64(size-copyBuffer) / rate * float64(time.Second)); time.Since(start) < min {
		t.Fatalf("%d bytes at %d bytes/s took %s, want at least %s", size, rate, time.Since(start), min)
	}
}

// TestDownloadMemory downloads a 64 MiB object: what it allocates is the
// buffer and small change, not the file.
func TestDownloadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 128 MiB")
	}
	const size = 64 << 20
	s, bucket := mustStore(t)
	obj := filepath.Join(bucket, "gen-1", "big")
	mustWrite(t, obj, randomBytes(size))
	files := []File{mustSum(t, obj, "big")}
	dst := t.TempDir()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("downloading %d MiB allocated %d KiB (%d bytes a MiB)", size>>20, alloc>>10, alloc/(size>>20))
	if alloc > size/8 {
		t.Fatalf("downloading %d bytes allocated %d bytes", size, alloc)
	}
}

func TestCancelled(t *testing.T) {
	s, _, src, files := mustPublished(t, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Download(ctx, "gen-1", t.TempDir(), files, 0, nil); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "gen-1/") {
		t.Errorf("download with a cancelled context: %v, want context.Canceled naming the object", err)
	}
	if _, err := s.Upload(ctx, "gen-2", src, files); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "gen-2/") {
		t.Errorf("upload with a cancelled context: %v, want context.Canceled naming the object", err)
	}
}

// TestStalled: a transfer that makes no progress for Store.idle is
// cancelled with an error that says so.
func TestStalled(t *testing.T) {
	s, _, _, files := mustPublished(t, 1<<20)
	s.idle = time.Nanosecond
	err := s.Download(context.Background(), "gen-1", t.TempDir(), files, 0, nil)
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "gen-1/") {
		t.Fatalf("download with no progress allowed: %v, want an error naming the object", err)
	}
}

// BenchmarkDownload reports the download throughput from a fileblob store
// and the memory allocated per download of 32 MiB.
func BenchmarkDownload(b *testing.B) {
	const size = 32 << 20
	s, bucket := mustStore(b)
	obj := filepath.Join(bucket, "gen-1", "big")
	mustWrite(b, obj, randomBytes(size))
	files := []File{mustSum(b, obj, "big")}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		dst := b.TempDir()
		if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpload reports the upload throughput into a fileblob store.
func BenchmarkUpload(b *testing.B) {
	const size = 32 << 20
	src := b.TempDir()
	mustWrite(b, filepath.Join(src, "big"), randomBytes(size))
	files := []File{mustSum(b, filepath.Join(src, "big"), "big")}
	s, _ := mustStore(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Delete(context.Background(), "gen-1"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Upload(context.Background(), "gen-1", src, files); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPartBeyondDamagedObject: a partial file longer than what is left of
// its object is removed, so that the next try starts anew.
func TestPartBeyondDamagedObject(t *testing.T) {
	s, bucket, src, files := mustPublished(t, 1<<20)
	obj := filepath.Join(bucket, "gen-1", filepath.FromSlash(bigPath))
	whole := mustRead(t, obj)
	if err := os.Truncate(obj, int64(len(whole)/2)); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	part := filepath.Join(dst, filepath.FromSlash(bigPath)) + partSuffix
	mustWrite(t, part, bytes.NewReader(whole[:len(whole)*3/4]))
	err := s.Download(context.Background(), "gen-1", dst, files, 0, nil)
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), bigPath) {
		t.Fatalf("download past the end of a damaged object: %v, want ErrDamaged naming %s", err, bigPath)
	}
	if _, err := os.Stat(part); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial file kept (%v)", err)
	}
	mustWrite(t, obj, bytes.NewReader(whole))
	if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
		t.Fatal(err)
	}
	mustSameFiles(t, src, dst, files)
}

// TestDownloadRateBelowOneBufferPerIdle: a rate so low that one buffer
// takes longer than the idle bound is the caller holding back, not the
// store falling silent; the download goes through instead of failing at
// every buffer (which made a following node at 250 kB/s and a 1 s bound
// fetch a buffer per try).
func TestDownloadRateBelowOneBufferPerIdle(t *testing.T) {
	const size = 3 * copyBuffer
	s, _, _, files := mustPublished(t, size)
	s.WithIdle(200 * time.Millisecond)
	big := []File{files[slices.IndexFunc(files, func(f File) bool { return f.Path == bigPath })]}
	const rate = 2 * copyBuffer // a buffer every 500 ms
	if err := s.Download(context.Background(), "gen-1", t.TempDir(), big, rate, nil); err != nil {
		t.Fatalf("a download at %d bytes/s with an idle bound of 200 ms: %v", rate, err)
	}
}

// TestDownloadRehashesOnlyWrittenFiles: a file in the download directory
// that the process hashed before is kept without being read again while
// it keeps its identity (internal/filesum; bytes changed without a write,
// as by bit rot, go unseen), and is hashed again and fetched anew once
// written. The files are aged first: a file written in the last 2 s is
// hashed every time.
func TestDownloadRehashesOnlyWrittenFiles(t *testing.T) {
	s, _, src, files := mustPublished(t, 1<<20)
	dst := t.TempDir()
	if err := s.Download(context.Background(), "gen-1", dst, files, 0, nil); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dst, filepath.FromSlash(bigPath))
	old := time.Now().Add(-time.Hour)
	for _, f := range files {
		if err := os.Chtimes(filepath.Join(dst, filepath.FromSlash(f.Path)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	fetched := func() int64 { // the bytes a download reads from the store
		t.Helper()
		var total int64
		if err := s.Download(context.Background(), "gen-1", dst, files, 0, func(_, all int64) { total = all }); err != nil {
			t.Fatal(err)
		}
		return total
	}
	if n := fetched(); n != 0 { // hashes every file, remembered
		t.Fatalf("a download of files all present read %d bytes", n)
	}
	flipByte := func(off int64) {
		f, err := os.OpenFile(big, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b := make([]byte, 1)
		if _, err := f.ReadAt(b, off); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{^b[0]}, off); err != nil {
			t.Fatal(err)
		}
	}
	flipByte(1000)
	if err := os.Chtimes(big, old, old); err != nil { // its identity kept
		t.Fatal(err)
	}
	if n := fetched(); n != 0 {
		t.Fatalf("a file unwritten since it was hashed was read again: %d bytes fetched", n)
	}
	flipByte(2000) // a write: its modification time moves on
	if n := fetched(); n != 1<<20 {
		t.Fatalf("a file written since it was hashed: %d bytes fetched, want %d", n, 1<<20)
	}
	mustSameFiles(t, src, dst, files)
}
