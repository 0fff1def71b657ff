// Package atomicfile owns the one way this service makes a file appear
// whole and durable: write it under a temporary name in its directory,
// fsync it, rename it into place and fsync the directory, so that after a
// crash a reader finds the old file or the new one, never a torn one, and
// the new name survives. Every package that publishes a file by rename
// (index, objectstore, the bbolt document store, the backup) calls it;
// it uses the standard library only.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// SyncDir fsyncs the directory dir, which makes the names created,
// renamed or removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}

// WriteFile writes data to path atomically and durably: a temporary file
// beside it, fsynced, renamed to path, and the directory fsynced. The
// temporary file is removed when any step fails.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", base, err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", base, err)
	}
	return Publish(tmp, path)
}

// Publish makes the written file f durable under the name final: it
// fsyncs f, closes it, renames it to final and fsyncs final's directory.
// f is closed whatever the outcome; on failure it keeps its own name.
func Publish(f *os.File, final string) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Base(final), err)
	}
	return Rename(f.Name(), final)
}

// Rename renames the durable file or directory from to to and fsyncs the
// directory of to, so that the new name survives a crash. from must be
// fsynced already; both must be on one file system.
func Rename(from, to string) error {
	if err := os.Rename(from, to); err != nil {
		return fmt.Errorf("rename %s: %w", filepath.Base(to), err)
	}
	return SyncDir(filepath.Dir(to))
}
