// Package boltfile reads a bbolt database file with plain, bounds-checked
// reads, without bbolt, so that a damaged file can be judged before bbolt
// maps it. bbolt trusts its file: a truncated file makes it fault (SIGBUS)
// on a page past the end, a page of the wrong type makes it panic
// ("invalid freelist page"), an element offset pointing outside its page
// makes it read unmapped memory. None of these can be recovered inside
// bbolt, so the file is walked here first: every page reachable from the
// current meta page, and the freelist, must lie inside the file, carry its
// own id and the type its parent expects, hold its elements inside its
// bytes and its keys in order. bbolt's own check (Tx.Check) then finds
// what is left (pages lost, freed twice or both free and used) on a file
// it can walk safely.
//
// The walk finds everything bbolt's check finds in the tree for a reason:
// on a file written without its freelist (Options.NoFreelistSync), bbolt
// rebuilds the freelist by that check of the tree before its own check
// runs, and panics at the first finding while the goroutine it checks on
// goes on reading through the transaction the panic closed: a nil pointer
// dereference on a goroutine nobody can recover, which ends the process
// (bbolt v1.5.0, DB.freepages). Tx.Check is safe on such a file only
// when its tree holds nothing to find.
//
// The layout relied on is bbolt's (go.etcd.io/bbolt internal/common,
// version 2 of the file format): a 16-byte page header (id uint64, flags
// uint16, count uint16, overflow uint32), the meta after it (magic,
// version, page size, flags, root bucket {root, sequence}, freelist,
// high-water mark, txid, FNV-64a checksum of the fields before it),
// 16-byte branch elements (pos, ksize uint32, pgid uint64) and leaf
// elements (flags, pos, ksize, vsize uint32), an element's key at the
// element's own address plus pos. Integers are in the machine's order,
// which is little-endian on every platform this service is built for.
// TestAgreesWithBbolt in package ordering checks the layout against bbolt.
package boltfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"time"
)

// Constants of bbolt's file format, version 2.
const (
	magic          = 0xED0CDAED
	version        = 2
	pageHeaderSize = 16
	elementSize    = 16 // branch and leaf elements alike
	metaSize       = 64 // the meta's fields, checksum included
	noFreelist     = ^uint64(0)

	flagBranch   = 0x01
	flagLeaf     = 0x02
	flagMeta     = 0x04
	flagFreelist = 0x10

	leafBucket = 0x01 // leaf element flag: the value is a bucket

	minPageSize = 1024
	maxPageSize = 64 << 10
	maxDepth    = 64 // a B+tree of 4 KiB pages is never this deep
)

// le is the byte order bbolt's structs have on the platforms built for.
var le = binary.LittleEndian

// ErrDamaged is wrapped by every error that describes damage to the file,
// as opposed to an error reading it.
var ErrDamaged = errors.New("damaged")

// ErrDeadline is returned when the walk did not finish in time.
var ErrDeadline = errors.New("the check did not finish in time")

func damaged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrDamaged, fmt.Sprintf(format, args...))
}

// Meta is the part of a meta page the walk uses.
type Meta struct {
	PageSize uint32
	Root     uint64 // page of the root bucket
	Freelist uint64 // page of the freelist, or ^0 when it is not stored
	HighMark uint64 // pages in use: every page id is below it
	Txid     uint64
}

// File is a bbolt file whose meta pages have been read and judged.
type File struct {
	f    *os.File
	size int64
	// Meta is the meta page bbolt will use: the valid one with the higher
	// transaction id.
	Meta Meta
	// Warnings name damage bbolt tolerates, such as one invalid meta page.
	Warnings []string
}

// Page describes one page reached by Walk.
type Page struct {
	ID       uint64
	Type     string // "branch", "leaf" or "freelist"
	Overflow uint32
	// Bucket is the top-level bucket the page belongs to; empty for the
	// root bucket's own pages and the freelist.
	Bucket string
}

// Open reads the meta pages of the bbolt file at path and checks that
// the file holds every page the meta page counts. It returns an error
// wrapping ErrDamaged when bbolt could not open the file safely.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	bf := &File{f: f, size: st.Size()}
	if err := bf.readMeta(); err != nil {
		f.Close()
		return nil, err
	}
	return bf, nil
}

// Close closes the file.
func (bf *File) Close() error { return bf.f.Close() }

func (bf *File) readMeta() error {
	if bf.size == 0 {
		return damaged("the file is empty (0 bytes)")
	}
	first, err0 := bf.metaAt(0, 0)
	if errors.Is(err0, errMetaHeader) {
		return damaged("%v", err0)
	}
	ps := first.PageSize
	if err0 != nil {
		// bbolt looks for the second meta page at every page size from
		// 1 KiB when the first is unreadable; so does this.
		ps = bf.findSecondMeta()
		if ps == 0 {
			return damaged("neither meta page is valid (first: %v); the file is not a readable bbolt database", err0)
		}
	}
	second, err1 := bf.metaAt(int64(ps), 1)
	if errors.Is(err1, errMetaHeader) {
		return damaged("%v", err1)
	}
	if err1 == nil && second.PageSize != ps {
		err1 = fmt.Errorf("page size %d differs from the first meta page's %d", second.PageSize, ps)
	}
	switch {
	case err0 != nil && err1 != nil:
		return damaged("neither meta page is valid (first: %v; second: %v)", err0, err1)
	case err0 != nil:
		bf.Meta = second
		bf.Warnings = append(bf.Warnings, fmt.Sprintf("meta page 0 is invalid (%v); bbolt uses meta page 1 (transaction %d), so the transaction written after it, if any, is lost", err0, second.Txid))
	case err1 != nil:
		bf.Meta = first
		bf.Warnings = append(bf.Warnings, fmt.Sprintf("meta page 1 is invalid (%v); bbolt uses meta page 0 (transaction %d), so the transaction written after it, if any, is lost", err1, first.Txid))
	case second.Txid > first.Txid:
		bf.Meta = second
	default:
		bf.Meta = first
	}
	return bf.checkMeta()
}

// findSecondMeta returns the page size of the first valid meta page found
// at 1 KiB, 2 KiB ... 64 KiB, or 0.
func (bf *File) findSecondMeta() uint32 {
	for ps := int64(minPageSize); ps <= maxPageSize; ps *= 2 {
		if m, err := bf.metaAt(ps, 1); err == nil && int64(m.PageSize) == ps {
			return m.PageSize
		}
	}
	return 0
}

// errMetaHeader is wrapped by the error of a meta page whose page header
// is not the one bbolt writes there. bbolt writes the same header (its own
// id, the meta flag, no elements, no overflow) on every commit of that meta
// page, so an interrupted write cannot change it: a changed header is damage
// to the file, not a torn commit. bbolt's Tx.Check asserts on that header
// (it panics "Page expected to be: 0"), so such a file can be neither
// checked nor trusted, and is refused even when the other meta page is
// intact.
var errMetaHeader = errors.New("the header of a meta page is damaged")

// metaAt reads and validates meta page id at offset off, as bbolt's
// Meta.Validate does (magic, version, checksum) and a little more.
func (bf *File) metaAt(off int64, id uint64) (Meta, error) {
	buf := make([]byte, pageHeaderSize+metaSize)
	if n, err := bf.f.ReadAt(buf, off); n < len(buf) {
		if err == nil || err == io.EOF {
			return Meta{}, fmt.Errorf("the file ends at byte %d, inside the meta page at %d", bf.size, off)
		}
		return Meta{}, err
	}
	if err := metaHeader(buf[:pageHeaderSize], id); err != nil {
		return Meta{}, err
	}
	m := buf[pageHeaderSize:]
	switch {
	case le.Uint32(m[0:]) != magic:
		return Meta{}, errors.New("bad magic number")
	case le.Uint32(m[4:]) != version:
		return Meta{}, fmt.Errorf("file format version %d, want %d", le.Uint32(m[4:]), version)
	}
	h := fnv.New64a()
	h.Write(m[:56])
	if h.Sum64() != le.Uint64(m[56:]) {
		return Meta{}, errors.New("checksum mismatch")
	}
	meta := Meta{PageSize: le.Uint32(m[8:]), Root: le.Uint64(m[16:]), Freelist: le.Uint64(m[32:]), HighMark: le.Uint64(m[40:]), Txid: le.Uint64(m[48:])}
	if ps := meta.PageSize; ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
		return Meta{}, fmt.Errorf("page size %d is not a power of two between %d and %d", ps, minPageSize, maxPageSize)
	}
	return meta, nil
}

// metaHeader checks the page header of meta page id: bbolt writes id, the
// meta flag, and zero elements and overflow pages.
func metaHeader(head []byte, id uint64) error {
	got, flags, count, overflow := le.Uint64(head), le.Uint16(head[8:]), le.Uint16(head[10:]), le.Uint32(head[12:])
	if got == id && flags == flagMeta && count == 0 && overflow == 0 {
		return nil
	}
	return fmt.Errorf("%w: meta page %d calls itself page %d with flags %#x, %d elements and %d overflow pages, where bbolt always writes page %d, flags %#x (meta), 0 and 0; bbolt cannot check a file with this damage", errMetaHeader, id, got, flags, count, overflow, id, flagMeta)
}

// checkMeta checks the chosen meta page against the file's size.
func (bf *File) checkMeta() error {
	m, ps := bf.Meta, int64(bf.Meta.PageSize)
	pages := bf.size / ps
	if m.HighMark < 4 || m.HighMark > uint64(pages) {
		return damaged("the file is %d bytes (%d pages of %d bytes) but its meta page (transaction %d) uses %d pages: it was truncated or cut short", bf.size, pages, ps, m.Txid, m.HighMark)
	}
	if m.Root < 2 || m.Root >= m.HighMark {
		return damaged("the root page %d lies outside pages 2 to %d", m.Root, m.HighMark-1)
	}
	if m.Freelist != noFreelist && (m.Freelist < 2 || m.Freelist >= m.HighMark) {
		return damaged("the freelist page %d lies outside pages 2 to %d", m.Freelist, m.HighMark-1)
	}
	return nil
}

// Walk reads every page reachable from the meta page, and the freelist,
// and checks that each is what bbolt will take it for. visit, when not
// nil, is called for each page. The walk stops with ErrDeadline once
// deadline has passed (a zero deadline never passes).
func (bf *File) Walk(deadline time.Time, visit func(Page)) error {
	w := &walker{bf: bf, deadline: deadline, visit: visit, seen: map[uint64]bool{}}
	if err := w.freelist(); err != nil {
		return err
	}
	_, _, err := w.tree(bf.Meta.Root, "", true, 0)
	return err
}

type walker struct {
	bf       *File
	deadline time.Time
	visit    func(Page)
	seen     map[uint64]bool
	pages    int
}

// page reads page id with its overflow pages and checks its header.
func (w *walker) page(id uint64, want uint16) ([]byte, error) {
	if w.pages++; w.pages%256 == 0 && !w.deadline.IsZero() && time.Now().After(w.deadline) {
		return nil, ErrDeadline
	}
	hwm, ps := w.bf.Meta.HighMark, uint64(w.bf.Meta.PageSize)
	if id < 2 || id >= hwm {
		return nil, damaged("a reference to page %d, outside pages 2 to %d", id, hwm-1)
	}
	head := make([]byte, pageHeaderSize)
	if _, err := w.bf.f.ReadAt(head, int64(id*ps)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	overflow := uint64(le.Uint32(head[12:]))
	switch {
	case le.Uint64(head) != id:
		return nil, damaged("page %d calls itself page %d", id, le.Uint64(head))
	case le.Uint16(head[8:]) != want:
		return nil, damaged("page %d has flags %#x where a %s page is expected", id, le.Uint16(head[8:]), typeName(want))
	case id+overflow >= hwm:
		return nil, damaged("page %d runs %d pages past the end of the data", id, overflow)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i] {
			return nil, damaged("page %d is referenced twice", i)
		}
		w.seen[i] = true
	}
	buf := make([]byte, (overflow+1)*ps)
	if _, err := w.bf.f.ReadAt(buf, int64(id*ps)); err != nil {
		return nil, fmt.Errorf("read page %d: %w", id, err)
	}
	return buf, nil
}

func typeName(flags uint16) string {
	switch flags {
	case flagBranch:
		return "branch"
	case flagLeaf:
		return "leaf"
	case flagFreelist:
		return "freelist"
	}
	return fmt.Sprintf("%#x", flags)
}

func (w *walker) freelist() error {
	id := w.bf.Meta.Freelist
	if id == noFreelist {
		return nil
	}
	buf, err := w.page(id, flagFreelist)
	if err != nil {
		return err
	}
	start, count := uint64(pageHeaderSize), uint64(le.Uint16(buf[10:]))
	if count == 0xFFFF { // the count is too large for the header: it is the first id
		count, start = le.Uint64(buf[start:]), start+8
	}
	if count > (uint64(len(buf))-start)/8 {
		return damaged("the freelist page %d claims %d free pages, more than it holds", id, count)
	}
	for i := range count {
		if free := le.Uint64(buf[start+8*i:]); free < 2 || free >= w.bf.Meta.HighMark {
			return damaged("the freelist page %d lists page %d, outside pages 2 to %d", id, free, w.bf.Meta.HighMark-1)
		}
	}
	w.report(Page{ID: id, Type: "freelist", Overflow: le.Uint32(buf[12:])})
	return nil
}

func (w *walker) report(p Page) {
	if w.visit != nil {
		w.visit(p)
	}
}

// tree walks the pages of the bucket whose root page is id. A page may be
// a branch or a leaf; which one is in its flags. It returns the first key
// of the tree, which its parent branch must name it by, and its last key,
// which must come before the parent's next key.
func (w *walker) tree(id uint64, bucket string, top bool, depth int) (first, last []byte, err error) {
	if depth > maxDepth {
		return nil, nil, damaged("the tree below page %d is deeper than %d levels", id, maxDepth)
	}
	head := make([]byte, pageHeaderSize)
	if id < 2 || id >= w.bf.Meta.HighMark {
		return nil, nil, damaged("a reference to page %d, outside pages 2 to %d", id, w.bf.Meta.HighMark-1)
	}
	if _, err := w.bf.f.ReadAt(head, int64(id)*int64(w.bf.Meta.PageSize)); err != nil {
		return nil, nil, fmt.Errorf("read page %d: %w", id, err)
	}
	want := le.Uint16(head[8:])
	if want != flagBranch {
		want = flagLeaf // anything else is reported as "not a leaf" by page
	}
	buf, err := w.page(id, want)
	if err != nil {
		return nil, nil, err
	}
	w.report(Page{ID: id, Type: typeName(want), Overflow: le.Uint32(buf[12:]), Bucket: bucket})
	if want == flagBranch {
		return w.branch(id, buf, bucket, top, depth)
	}
	return w.leaf(id, buf, bucket, top, depth)
}

// branch walks the children of a branch page. bbolt names each child by
// the child's first key and finds the child's entry by that key when it
// writes the child again; a key that differs, though still in order (and
// so passing bbolt's check), makes that write corrupt the tree ("write:
// circular dependency occurred"). Every key below a child comes before the
// next child's key, as bbolt's check wants.
func (w *walker) branch(id uint64, buf []byte, bucket string, top bool, depth int) (first, last []byte, err error) {
	elems, err := elements(id, buf)
	if err != nil {
		return nil, nil, err
	}
	if len(elems) == 0 {
		return nil, nil, damaged("branch page %d has no elements", id)
	}
	for i, e := range elems {
		// A branch element is pos, ksize, pgid.
		key, err := keyOf(id, buf, e, le.Uint32(buf[e:]), le.Uint32(buf[e+4:]), 0)
		if err != nil {
			return nil, nil, err
		}
		if i > 0 && bytes.Compare(last, key) >= 0 {
			return nil, nil, damaged("branch page %d: the keys below its element %d reach %x, not before its element %d's key %x", id, i-1, last, i, key)
		}
		child := le.Uint64(buf[e+8:])
		childFirst, childLast, err := w.tree(child, bucket, top, depth+1)
		if err != nil {
			return nil, nil, err
		}
		if !bytes.Equal(key, childFirst) {
			return nil, nil, damaged("branch page %d names page %d by the key %x, but its first key is %x", id, child, key, childFirst)
		}
		if i == 0 {
			first = key
		}
		last = childLast
	}
	return first, last, nil
}

// leaf checks a leaf page's elements, their keys in strictly increasing
// order, and follows the buckets it holds.
func (w *walker) leaf(id uint64, buf []byte, bucket string, top bool, depth int) (first, last []byte, err error) {
	elems, err := elements(id, buf)
	if err != nil {
		return nil, nil, err
	}
	for i, e := range elems {
		flags := le.Uint32(buf[e:])
		if flags&^leafBucket != 0 {
			return nil, nil, damaged("leaf page %d has an element with unknown flags %#x", id, flags)
		}
		// A leaf element is flags, pos, ksize, vsize.
		kv, err := keyOf(id, buf, e, le.Uint32(buf[e+4:]), le.Uint32(buf[e+8:]), le.Uint32(buf[e+12:]))
		if err != nil {
			return nil, nil, err
		}
		key, value := kv[:le.Uint32(buf[e+8:])], kv[le.Uint32(buf[e+8:]):]
		if i == 0 {
			first = key
		} else if bytes.Compare(last, key) >= 0 {
			return nil, nil, damaged("leaf page %d: key %d (%x) does not come after key %d (%x)", id, i, key, i-1, last)
		}
		last = key
		if flags&leafBucket == 0 {
			continue
		}
		name := bucket
		if top {
			name = string(key)
		}
		if err := w.bucket(id, name, value, depth); err != nil {
			return nil, nil, err
		}
	}
	return first, last, nil
}

// bucket follows a bucket value: its root page, or its inline page.
func (w *walker) bucket(parent uint64, name string, value []byte, depth int) error {
	if len(value) < 16 {
		return damaged("leaf page %d holds bucket %q in %d bytes, fewer than its 16-byte header", parent, name, len(value))
	}
	if root := le.Uint64(value); root != 0 {
		_, _, err := w.tree(root, name, false, depth+1)
		return err
	}
	inline := value[16:]
	if len(inline) < pageHeaderSize || le.Uint16(inline[8:]) != flagLeaf {
		return damaged("leaf page %d holds inline bucket %q without a leaf page", parent, name)
	}
	elems, err := elements(parent, inline)
	if err != nil {
		return err
	}
	for _, e := range elems {
		if flags := le.Uint32(inline[e:]); flags != 0 {
			return damaged("inline bucket %q on page %d holds an element with flags %#x", name, parent, flags)
		}
		if _, err := keyOf(parent, inline, e, le.Uint32(inline[e+4:]), le.Uint32(inline[e+8:]), le.Uint32(inline[e+12:])); err != nil {
			return err
		}
	}
	return nil
}

// elements returns the offsets of a page's elements after checking that
// they fit in the page.
func elements(id uint64, buf []byte) ([]uint64, error) {
	count := uint64(le.Uint16(buf[10:]))
	if pageHeaderSize+count*elementSize > uint64(len(buf)) {
		return nil, damaged("page %d claims %d elements, more than its %d bytes hold", id, count, len(buf))
	}
	offs := make([]uint64, count)
	for i := range offs {
		offs[i] = pageHeaderSize + uint64(i)*elementSize
	}
	return offs, nil
}

// keyOf returns the key and value bytes of the element at offset elem:
// they start pos bytes after the element and must end inside the page.
func keyOf(id uint64, buf []byte, elem uint64, pos, ksize, vsize uint32) ([]byte, error) {
	start := elem + uint64(pos)
	end := start + uint64(ksize) + uint64(vsize)
	if end > uint64(len(buf)) {
		return nil, damaged("page %d has an element whose data (bytes %d to %d) lies outside its %d bytes", id, start, end, len(buf))
	}
	return buf[start:end], nil
}
