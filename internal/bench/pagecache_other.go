//go:build !linux

package bench

import "errors"

// DropFromPageCache is Linux's alone (posix_fadvise).
func DropFromPageCache(dir string) error {
	return errors.New("dropping files from the page cache needs Linux")
}
