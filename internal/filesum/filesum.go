// Package filesum owns what this process remembers of files' bytes: the
// SHA-256 of a file it hashed (SHA256), and any other result computed
// from a whole file, such as a check that read all of it (Memo). A result
// is remembered by the file's identity on disk (device, inode, size and
// modification time), so a hard link to a file already read is the same
// file, and a write, which moves the modification time on, makes it a
// file not read yet. It is meant for files that are never written again
// once made (an index generation's): a following node hashes the same
// bytes once where it used to hash them at the download, at the install
// and at the open. It does not see a change made without a write through
// the file system (a bit rotting on disk after it was read here), which
// a new process reads anew. It uses the standard library only.
package filesum

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// minAge is how long before a result was begun the file must have been
// last written for the result to be remembered. A write moves the
// modification time on only by the file system's clock tick (a few
// milliseconds on ext4, XFS and tmpfs, a second on ext3 and HFS+, two on
// FAT): a file written again within the tick of its last write keeps its
// identity, and a result computed from it in between must not be taken
// for the new bytes. A file that young is read again the next time; the
// clock stepping back by more than this is not covered.
//
// A modification time with a fraction of a second comes from a file
// system that keeps them in nanoseconds, whose tick is the kernel's
// (at most 10 ms): fineMinAge covers it, so that a download checked a
// moment after it was written is remembered, as the next install of a
// generation sharing its files needs. A whole second may be the file
// system's granularity: minAge covers the coarsest.
const (
	minAge     = 2 * time.Second
	fineMinAge = 100 * time.Millisecond
)

// settled reports whether a file of identity id was last written long
// enough before began (minAge) for a result begun then to be remembered.
func settled(id identity, began time.Time) bool {
	age := minAge
	if id.mtime%int64(time.Second) != 0 {
		age = fineMinAge
	}
	return id.mtime < began.Add(-age).UnixNano()
}

// limit bounds each Memo: a generation has tens of files and a node keeps
// a few generations, so the oldest entries, which go first, are of files
// long removed.
const limit = 4096

// identity is a file as it is on disk: the same identity means the same
// bytes for a file not written since, however many names it has.
type identity struct {
	dev, ino uint64
	size     int64
	mtime    int64 // nanoseconds since the epoch
}

// identify returns the identity of the regular file at path; false when
// it is not one or the system says no inode (the result is then computed
// every time).
func identify(path string) (identity, bool) {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return identity{}, false
	}
	return identityOf(info)
}

func identityOf(info fs.FileInfo) (identity, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return identity{}, false
	}
	return identity{dev: uint64(st.Dev), ino: st.Ino, size: info.Size(), mtime: info.ModTime().UnixNano()}, true
}

// A Memo remembers a result computed from a whole file by the file's
// identity, for this process; at most limit of them, the oldest dropped
// first. It is safe for concurrent use.
type Memo[V any] struct {
	mu    sync.Mutex
	byID  map[identity]V
	order []identity // a ring in the order remembered; next is the oldest once full
	next  int
}

// NewMemo returns an empty Memo.
func NewMemo[V any]() *Memo[V] {
	return &Memo[V]{byID: map[identity]V{}}
}

// Do returns compute's result for the file at path: remembered from an
// earlier Do on the same file unchanged, or computed now. Only a
// successful result is remembered, and only when the file kept its
// identity while compute ran and was last written at least minAge before
// it began. compute reads the file at path itself.
func (m *Memo[V]) Do(path string, compute func() (V, error)) (V, error) {
	before, ok := identify(path)
	if ok {
		if v, found := m.get(before); found {
			return v, nil
		}
	}
	began := time.Now()
	v, err := compute()
	if err != nil || !ok {
		return v, err
	}
	if after, ok := identify(path); ok && after == before && settled(before, began) {
		m.put(before, v)
	}
	return v, nil
}

func (m *Memo[V]) get(id identity) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.byID[id]
	return v, ok
}

func (m *Memo[V]) put(id identity, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[id]; ok {
		m.byID[id] = v
		return
	}
	if len(m.order) < limit {
		m.order = append(m.order, id)
	} else {
		delete(m.byID, m.order[m.next])
		m.order[m.next] = id
		m.next = (m.next + 1) % limit
	}
	m.byID[id] = v
}

// sum is a file's size and SHA-256 in hex.
type sum struct {
	size   int64
	sha256 string
}

// sums is the process's memo of SHA-256s, which SHA256 keeps.
var sums = NewMemo[sum]()

// SHA256 returns the size and SHA-256 (hex) of the file at path, read
// whole once per process while it is unchanged (see Memo.Do).
func SHA256(path string) (int64, string, error) {
	s, err := sums.Do(path, func() (sum, error) { return hashFile(path) })
	return s.size, s.sha256, err
}

func hashFile(path string) (sum, error) {
	f, err := os.Open(path)
	if err != nil {
		return sum{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return sum{}, err
	}
	return sum{n, hex.EncodeToString(h.Sum(nil))}, nil
}
