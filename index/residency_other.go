//go:build !linux

package index

import bolt "go.etcd.io/bbolt"

// releaseResident is a no-op where madvise is not available.
func releaseResident(*bolt.DB, int64) error { return nil }
