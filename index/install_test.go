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
