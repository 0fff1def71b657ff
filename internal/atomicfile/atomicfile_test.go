package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"companydocs/internal/atomicfile"
)

func TestWriteFileReplacesWholeAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "CURRENT")
	for _, content := range []string{"first\n", "second\n"} {
		if err := atomicfile.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v (%v), want only CURRENT", entries, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", st.Mode(), err)
	}
}

func TestPublishRenamesAndClosesTheFile(t *testing.T) {
	dir := t.TempDir()
	f, err := os.CreateTemp(dir, "part-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("pdf"); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "doc")
	if err := atomicfile.Publish(f, final); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.Name()); !os.IsNotExist(err) {
		t.Errorf("temporary name still there: %v", err)
	}
	if got, err := os.ReadFile(final); err != nil || string(got) != "pdf" {
		t.Errorf("read %q, %v", got, err)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("file still open after Publish")
	}
}

func TestWriteFileFailsInAMissingDirectory(t *testing.T) {
	if err := atomicfile.WriteFile(filepath.Join(t.TempDir(), "absent", "f"), nil, 0o644); err == nil {
		t.Error("wrote into a missing directory")
	}
}

func TestSyncDirFailsOnAMissingDirectory(t *testing.T) {
	if err := atomicfile.SyncDir(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("synced a missing directory")
	}
}
