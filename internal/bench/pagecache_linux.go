//go:build linux

package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DropFromPageCache asks the kernel to drop the cached pages of every
// file under dir (POSIX_FADV_DONTNEED), as a daily ingest finds the
// previous generation's files: read from disk, in the large folios of the
// kernel's read-ahead, which a memory-mapped look-up maps whole (an
// ingest on a warm cache peaked at 666 MiB, on a cold one at 1.5 GiB
// before its look-ups were counted by the profiles they read).
func DropFromPageCache(dir string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("drop %s from the page cache: %w", path, err)
		}
		return nil
	})
}
