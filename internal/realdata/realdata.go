// Package realdata opens the real register, LEI and court records the tests
// run on. Most tests read the copy kept in the repository under
// testdata/realdata (see its README: sources, licences, how it was cut), so
// a fresh clone tests itself. Only the national-data tests (build tag
// national, make test-national) and the benchmarks over more records than
// the repository keeps read the whole dump (see National). It is test
// support only.
package realdata

import (
	"compress/bzip2"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nationalEnv names the national data directory (make test-national sets it).
const nationalEnv = "COMPANYDOCS_NATIONAL_DATA"

// repoDir is the in-repository copy, relative to the module root.
const repoDir = "testdata/realdata"

// chunkPrefixes says how many leading lines of each national chunk the
// repository keeps, as offeneregister/ocdata.chunkN.firstL.jsonl.bz2.
// Chunk 53 (5,727 lines) is kept whole under its own name.
var chunkPrefixes = map[string]int{
	"ocdata.chunk1.jsonl.bz2":  20000,
	"ocdata.chunk13.jsonl.bz2": 50000,
	"ocdata.chunk17.jsonl.bz2": 5000,
	"ocdata.chunk22.jsonl.bz2": 5000,
}

// moduleRoot walks up from the current directory to the one holding go.mod.
func moduleRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Path returns a file or directory of the in-repository copy by its name in
// shared/data, e.g. Path(tb, "offeneregister", "fixtures_665.jsonl"). A file
// kept gzip-compressed (name.gz) is decompressed into a directory removed
// when the test ends; a directory comes back as such a copy with every file
// decompressed. A name the repository does not hold fails the test.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	path := filepath.Join(append([]string{moduleRoot(tb), repoDir}, elem...)...)
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return plainDir(tb, path)
	case err == nil:
		return path
	}
	if _, err := os.Stat(path + ".gz"); err != nil {
		tb.Fatalf("%s is not in the repository's real data (%s)", filepath.Join(elem...), repoDir)
	}
	out := filepath.Join(tb.TempDir(), filepath.Base(path))
	gunzip(tb, path+".gz", out)
	return out
}

// plainDir copies dir into a temporary directory, decompressing .gz files.
func plainDir(tb testing.TB, dir string) string {
	tb.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	out := tb.TempDir()
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".gz"); ok && e.Type().IsRegular() {
			gunzip(tb, filepath.Join(dir, e.Name()), filepath.Join(out, name))
		}
	}
	return out
}

func gunzip(tb testing.TB, src, dst string) {
	tb.Helper()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		tb.Fatalf("%s: %v", src, err)
	}
	out, err := os.Create(dst)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		tb.Fatalf("%s: %v", src, err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// Chunk returns a bzip2 file whose first n lines are those of the named
// chunk of the national dump (n <= 0: the whole chunk): the repository's
// copy when it holds that many, else the national chunk (see National).
func Chunk(tb testing.TB, name string, n int) string {
	tb.Helper()
	dir := filepath.Join(moduleRoot(tb), repoDir, "offeneregister")
	if whole := filepath.Join(dir, name); fileExists(whole) {
		return whole
	}
	if kept := chunkPrefixes[name]; n > 0 && n <= kept {
		base := strings.TrimSuffix(name, ".jsonl.bz2")
		return filepath.Join(dir, base+".first"+strconv.Itoa(kept)+".jsonl.bz2")
	}
	return filepath.Join(National(tb), "offeneregister", name)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// National returns the directory of the national data (the whole
// OffeneRegister chunks): $COMPANYDOCS_NATIONAL_DATA (relative to the
// module root, as make test-national passes it), else shared/data next to or above the repository. Without it
// the test is skipped, or fails under CI=true, where a skip would pass a
// run that checked nothing.
func National(tb testing.TB) string {
	tb.Helper()
	root := moduleRoot(tb)
	if d := os.Getenv(nationalEnv); d != "" {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		if isNational(d) {
			return d
		}
		tb.Fatalf("%s=%s holds no offeneregister directory", nationalEnv, d)
	}
	for dir := root; ; {
		for _, cand := range []string{filepath.Join(dir, "shared", "data"), filepath.Join(dir, "..", "shared", "data")} {
			if isNational(cand) {
				return cand
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	msg := "the national data (shared/data with the whole OffeneRegister chunks) not found: set " + nationalEnv + " or see README (make test-national)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
	return ""
}

func isNational(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "offeneregister"))
	return err == nil && st.IsDir()
}

// Open opens a plain or bzip2-compressed (by its .bz2 suffix) data file
// for reading; the file is closed when the test ends.
func Open(tb testing.TB, path string) io.Reader {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	if strings.HasSuffix(path, ".bz2") {
		return bzip2.NewReader(f)
	}
	return f
}
