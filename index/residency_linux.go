//go:build linux

package index

import (
	"syscall"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// releaseResident drops the pages of the profile store's memory map from
// the process's resident memory. During a build every put reads the tree
// through the map, so the whole growing file (gigabytes at national
// scale) would otherwise stay resident on top of the heap and the
// index. The pages stay in the page cache; the next read maps them again.
// The map is read-only and bbolt never changes a page in place, so this
// changes nothing a transaction sees. size is the part of the map in use
// (tx.Size of the open transaction).
func releaseResident(db *bolt.DB, size int64) error {
	data := db.Info().Data
	if data == 0 || size <= 0 {
		return nil
	}
	// The map is not Go memory: reading the address out of the uintptr
	// field cannot race with the garbage collector moving it.
	mem := unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&data))), size)
	return syscall.Madvise(mem, syscall.MADV_DONTNEED)
}
