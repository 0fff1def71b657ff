// Package toolcache locates the binaries of the real components the tests
// run (the object store, the payment provider's mock), which the
// project's scripts build once into a cache outside the checkout:
// ${COMPANYDOCS_CACHE:-$HOME/.cache/companydocs}/bin.
package toolcache

import (
	"fmt"
	"os"
	"path/filepath"
)

// Bin returns the path the scripts install the binary name at; it may not
// exist yet.
func Bin(name string) (string, error) {
	cache := os.Getenv("COMPANYDOCS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the %s binary: %w", name, err)
		}
		cache = filepath.Join(home, ".cache", "companydocs")
	}
	return filepath.Join(cache, "bin", name), nil
}
