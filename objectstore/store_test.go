package objectstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realFiles are files of the repository's real data, copied into test
// generations under these paths.
var realFiles = map[string]string{
	"offeneregister/ocdata.chunk53.jsonl.bz2": "../testdata/realdata/offeneregister/ocdata.chunk53.jsonl.bz2",
	"offeneregister/fixtures_665.jsonl.gz":    "../testdata/realdata/offeneregister/fixtures_665.jsonl.gz",
	"gleif/lei_records_api.jsonl.gz":          "../testdata/realdata/gleif/lei_records_api.jsonl.gz",
	"courts.csv.gz":                           "../testdata/realdata/courts/xjustiz_gds_gerichte_2_8_all.csv.gz",
}

// bigPath is the generated file of a test generation.
const bigPath = "bleve/store/00000001.zap"

// mustGeneration writes a generation into a new directory: the real files
// and a generated file of bigSize pseudo-random bytes. It returns the
// directory and the file list, in path order.
func mustGeneration(tb testing.TB, bigSize int64) (string, []File) {
	tb.Helper()
	dir := tb.TempDir()
	for rel, src := range realFiles {
		b, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		mustWrite(tb, filepath.Join(dir, filepath.FromSlash(rel)), bytes.NewReader(b))
	}
	mustWrite(tb, filepath.Join(dir, filepath.FromSlash(bigPath)), randomBytes(bigSize))
	return dir, mustList(tb, dir)
}

// randomBytes returns size reproducible pseudo-random bytes, streamed.
func randomBytes(size int64) io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{'g', 'e', 'n'}), size)
}

func mustWrite(tb testing.TB, path string, r io.Reader) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(f, r); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// mustList returns the File of every file under dir, in path order.
func mustList(tb testing.TB, dir string) []File {
	tb.Helper()
	var files []File
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files = append(files, mustSum(tb, path, filepath.ToSlash(rel)))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func mustSum(tb testing.TB, path, rel string) File {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		tb.Fatal(err)
	}
	return File{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
}

// mustStore opens a fileblob store on a new directory and returns it with
// the directory, where object "name/path" is the file name/path.
func mustStore(tb testing.TB) (*Store, string) {
	tb.Helper()
	dir := tb.TempDir()
	s, err := Open(context.Background(), "file://"+dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s, dir
}

// mustSameFiles fails unless every file of files is byte-identical in a and
// b.
func mustSameFiles(tb testing.TB, a, b string, files []File) {
	tb.Helper()
	for _, f := range files {
		x, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(f.Path)))
		if err != nil {
			tb.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, filepath.FromSlash(f.Path)))
		if err != nil {
			tb.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			tb.Fatalf("file %s differs after the round trip", f.Path)
		}
	}
}

func total(files []File) int64 {
	var n int64
	for _, f := range files {
		n += f.Size
	}
	return n
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	src, files := mustGeneration(t, 3<<20)
	s, _ := mustStore(t)
	sent, err := s.Upload(ctx, "gen-1", src, files)
	if err != nil {
		t.Fatal(err)
	}
	if sent != total(files) {
		t.Fatalf("uploaded %d bytes, want %d", sent, total(files))
	}
	dst := filepath.Join(t.TempDir(), "new", "gen-1")
	var done int64
	if err := s.Download(ctx, "gen-1", dst, files, 0, func(d, _ int64) { done = d }); err != nil {
		t.Fatal(err)
	}
	if done != total(files) {
		t.Fatalf("read %d bytes, want %d", done, total(files))
	}
	mustSameFiles(t, src, dst, files)

	t.Run("again uploads and reads nothing", func(t *testing.T) {
		sent, err := s.Upload(ctx, "gen-1", src, files)
		if err != nil || sent != 0 {
			t.Fatalf("second upload sent %d bytes (%v), want 0", sent, err)
		}
		done = 0
		if err := s.Download(ctx, "gen-1", dst, files, 0, func(d, _ int64) { done = d }); err != nil || done != 0 {
			t.Fatalf("second download read %d bytes (%v), want 0", done, err)
		}
	})
	t.Run("names and delete", func(t *testing.T) {
		if _, err := s.Upload(ctx, "gen-2", src, files[:1]); err != nil {
			t.Fatal(err)
		}
		mustNames(t, s, "gen-1", "gen-2")
		if err := s.Delete(ctx, "gen-1"); err != nil {
			t.Fatal(err)
		}
		mustNames(t, s, "gen-2")
	})
}

func mustNames(t *testing.T, s *Store, want ...string) {
	t.Helper()
	got, err := s.Names(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Names = %q, want %q", got, want)
	}
}

func TestUploadRefusesDamagedLocalFile(t *testing.T) {
	src, files := mustGeneration(t, 1<<20)
	s, _ := mustStore(t)
	files[0].SHA256 = strings.Repeat("0", 64)
	_, err := s.Upload(context.Background(), "gen-1", src, files)
	if err == nil || !strings.Contains(err.Error(), files[0].Path) {
		t.Fatalf("upload of a file that differs from its SHA-256: %v, want an error naming %s", err, files[0].Path)
	}
	mustNames(t, s)
}

func TestUploadReplacesWrongObject(t *testing.T) {
	ctx := context.Background()
	src, files := mustGeneration(t, 1<<20)
	s, bucket := mustStore(t)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	// an object cut short by a killed publish, say: it is sent again
	obj := filepath.Join(bucket, "gen-1", filepath.FromSlash(files[0].Path))
	if err := os.Truncate(obj, files[0].Size/2); err != nil {
		t.Fatal(err)
	}
	sent, err := s.Upload(ctx, "gen-1", src, files)
	if err != nil || sent != files[0].Size {
		t.Fatalf("upload after a damaged object sent %d bytes (%v), want %d", sent, err, files[0].Size)
	}
}

func TestResume(t *testing.T) {
	ctx := context.Background()
	src, files := mustGeneration(t, 4<<20)
	s, _ := mustStore(t)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	big := files[slices.IndexFunc(files, func(f File) bool { return f.Path == bigPath })]
	dst := t.TempDir()
	half, err := os.ReadFile(filepath.Join(src, filepath.FromSlash(bigPath)))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dst, filepath.FromSlash(bigPath))+partSuffix, bytes.NewReader(half[:big.Size/2]))
	var done, want int64
	if err := s.Download(ctx, "gen-1", dst, files, 0, func(d, tot int64) { done, want = d, tot }); err != nil {
		t.Fatal(err)
	}
	if rest := total(files) - big.Size/2; done != rest || want != rest {
		t.Fatalf("read %d of %d bytes, want %d: the partial file was not continued", done, want, rest)
	}
	mustSameFiles(t, src, dst, files)
	if _, err := os.Stat(filepath.Join(dst, filepath.FromSlash(bigPath)) + partSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial file left behind: %v", err)
	}
}

// TestSharedObjects: a generation whose files name an earlier one's
// objects (File.Object) uploads nothing for them, downloads them from
// there, restores such an object that is missing, and is refused when an
// object key leaves the prefix's generations; DeleteExcept keeps the
// objects another generation names.
func TestSharedObjects(t *testing.T) {
	ctx := context.Background()
	src, files := mustGeneration(t, 1<<20)
	s, bucket := mustStore(t)
	if _, err := s.Upload(ctx, "gen-1", src, files); err != nil {
		t.Fatal(err)
	}
	second := slices.Clone(files)
	big := slices.IndexFunc(second, func(f File) bool { return f.Path == bigPath })
	second[big].Object = "gen-1/" + bigPath
	if held, err := s.Holds(ctx, second[big].Object, second[big]); err != nil || !held {
		t.Fatalf("Holds(%s) = %v, %v; want true", second[big].Object, held, err)
	}
	sent, err := s.Upload(ctx, "gen-2", src, second)
	if want := total(files) - files[big].Size; err != nil || sent != want {
		t.Fatalf("upload naming gen-1's object sent %d bytes (%v), want %d", sent, err, want)
	}
	if _, err := os.Stat(filepath.Join(bucket, "gen-2", filepath.FromSlash(bigPath))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("gen-2 has an object of its own for the shared file: %v", err)
	}
	dst := t.TempDir()
	if err := s.Download(ctx, "gen-2", dst, second, 0, nil); err != nil {
		t.Fatal(err)
	}
	mustSameFiles(t, src, dst, files)

	kept, err := s.DeleteExcept(ctx, "gen-1", func(key string) bool { return key == second[big].Object })
	if err != nil || !slices.Equal(kept, []string{second[big].Object}) {
		t.Fatalf("DeleteExcept(gen-1) kept %q (%v), want the shared object alone", kept, err)
	}
	mustNames(t, s, "gen-1", "gen-2")
	if err := s.DeleteObject(ctx, second[big].Object); err != nil {
		t.Fatal(err)
	}
	sent, err = s.Upload(ctx, "gen-2", src, second)
	if err != nil || sent != files[big].Size {
		t.Fatalf("upload after the shared object was deleted sent %d bytes (%v), want it restored: %d", sent, err, files[big].Size)
	}
	for _, key := range []string{"../gen-1/" + bigPath, "gen-1", "gen-1/../x", "/gen-1/x"} {
		bad := slices.Clone(second)
		bad[big].Object = key
		if err := s.Download(ctx, "gen-2", t.TempDir(), bad, 0, nil); !errors.Is(err, ErrBadManifest) {
			t.Errorf("download naming object %q: %v, want ErrBadManifest", key, err)
		}
	}
}
