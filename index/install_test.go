package index

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// downloaded copies the generation name of from into the download
// directory of to, as a download would leave it.
func downloaded(t *testing.T, from, to, name string) string {
	t.Helper()
	return copyGeneration(t, filepath.Join(indexDir(from), name), to, downloadPrefix+name)
}

// TestInstallPublishesADownloadedGeneration: a generation of real
// records, built on one data directory and copied into a download
// directory of another, is installed there: CURRENT names it, it opens
// and serves, and the download directory is gone. A damaged copy (a byte
// flipped, a file cut short) or one that names another generation is
// refused, never renamed, and CURRENT stays.
func TestInstallPublishesADownloadedGeneration(t *testing.T) {
	built := t.TempDir()
	meta := mustBuild(t, built, loadRealProfiles(t)[:300])

	node := t.TempDir()
	dir := downloaded(t, built, node, meta.ID)
	got, err := Install(node, dir, DefaultKeep)
	if err != nil || got.ID != meta.ID || got.Profiles != meta.Profiles {
		t.Fatalf("Install: %+v, %v; want %s with %d profiles", got, err, meta.ID, meta.Profiles)
	}
	if cur, _ := ReadCurrent(node); cur != meta.ID {
		t.Fatalf("CURRENT %q after Install, want %s", cur, meta.ID)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the download directory is still there: %v", err)
	}
	mustOpenCurrent(t, node) // closed at the end

	for name, damage := range map[string]func(dir string){
		"byte flipped": func(dir string) { flipBytes(filepath.Join(dir, profilesName)) },
		"cut short":    func(dir string) { os.Truncate(filepath.Join(dir, profilesName), 4096) },
		"meta missing": func(dir string) { os.Remove(filepath.Join(dir, metaName)) },
	} {
		t.Run(name, func(t *testing.T) {
			other := t.TempDir()
			dir := downloaded(t, built, other, meta.ID)
			damage(dir)
			if _, err := Install(other, dir, DefaultKeep); err == nil || RejectReason(err) == RejectOpen {
				t.Fatalf("Install of a damaged download: %v, want a refusal of its files", err)
			}
			if _, err := os.Stat(filepath.Join(indexDir(other), meta.ID)); err == nil {
				t.Error("a damaged download was renamed into place")
			}
			if _, err := ReadCurrent(other); !errors.Is(err, ErrNoGeneration) {
				t.Errorf("CURRENT after a refused install: %v", err)
			}
		})
	}
	t.Run("another name", func(t *testing.T) {
		other := t.TempDir()
		dir := downloaded(t, built, other, meta.ID)
		renamed := filepath.Join(filepath.Dir(dir), downloadPrefix+"gen-20990101T000000.000Z-000000")
		if err := os.Rename(dir, renamed); err != nil {
			t.Fatal(err)
		}
		if _, err := Install(other, renamed, DefaultKeep); RejectReason(err) != RejectMeta {
			t.Fatalf("Install of a download that names another generation: %v, want a refusal", err)
		}
	})
}

// TestShareInstalled: a download takes the files an installed generation
// holds with the same size and SHA-256 as the same files (hard links),
// leaves a file it has already and the files no generation holds, and
// never writes outside its directory for a path that leaves it.
func TestShareInstalled(t *testing.T) {
	node := t.TempDir()
	meta := mustBuild(t, node, loadRealProfiles(t)[:300])
	installed := filepath.Join(indexDir(node), meta.ID)
	dir, err := DownloadDir(node, "gen-20990101T000000.000Z-000000")
	if err != nil {
		t.Fatal(err)
	}
	want := append([]FileSum{{Path: "new.db", Size: 3, SHA256: "abc"}, {Path: "../outside", Size: meta.Files[0].Size, SHA256: meta.Files[0].SHA256}}, meta.Files...)
	first := filepath.Join(dir, filepath.FromSlash(meta.Files[0].Path))
	if err := os.MkdirAll(filepath.Dir(first), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(first, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := ShareInstalled(node, dir, want)
	if err != nil {
		t.Fatal(err)
	}
	var wantTaken int64
	for _, f := range meta.Files[1:] {
		wantTaken += f.Size
		a, errA := os.Stat(filepath.Join(installed, filepath.FromSlash(f.Path)))
		b, errB := os.Stat(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Errorf("%s is not the installed generation's file: %v, %v", f.Path, errA, errB)
		}
	}
	if taken != wantTaken {
		t.Errorf("took %d bytes, want %d", taken, wantTaken)
	}
	if b, _ := os.ReadFile(first); string(b) != "kept" {
		t.Errorf("a file the download has already was replaced")
	}
	for _, p := range []string{filepath.Join(dir, "new.db"), filepath.Join(indexDir(node), "outside")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v, want nothing there", p, err)
		}
	}
}
