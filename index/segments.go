package index

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"

	"companydocs"
)

// segments are the segments of one scorch snapshot, with the document
// number each starts at: scorch numbers a snapshot's documents segment
// after segment, each taking as many numbers as it holds documents,
// deleted ones included (index/DESIGN.md, "What is relied on in bleve").
type segments struct {
	r       *scorch.IndexSnapshot
	snaps   []*scorch.SegmentSnapshot
	offsets []uint64
	// dead holds each segment's deleted documents, nil where it has none
	dead []*roaring.Bitmap
	// lists holds the postings lists read: a query reads a term's for its
	// document frequency, and again to walk or score it
	lists map[fieldTerm]*termPostings
	// stored reads documents' profiles, made on the first
	stored *storedReader
	// deadCounts holds the generation's counts of deleted documents by
	// term; nil keeps none
	deadCounts *deadCounts
	// deadBits holds each segment's deleted documents as a bitset (nil
	// for a segment without), the generation's; nil reads dead instead
	deadBits [][]uint64
	// bySize orders the segments by their documents, made on the first
	// largestFirst
	bySize []int
	// novel holds the generation's terms its largest segment lacks; nil
	// walks every segment's dictionary for typos
	novel *novelTerms
}

// deadCounts holds, by term, how many deleted documents its postings
// lists hold in a generation built on another's, whose segments and
// deletions never change: a term's count is the intersection of its
// postings with the deleted documents, a walk of both where they are
// arrays of comparable size (roaring), and the terms of common words and
// seats come back in query after query. Terms with few documents are
// counted each time (deadAmong) and not kept. At most maxDeadCounts are
// kept; the rest are counted each time. A term is kept by a 128-bit hash
// of its field and text: a map without pointers, which the garbage
// collector need not follow (a sync.Map of the terms took its share of
// every query's time), and two terms sharing one would take 2^64 terms.
type deadCounts struct {
	seeds  [2]maphash.Seed
	mu     sync.RWMutex
	counts map[[2]uint64]uint64
	// bits are the segments' deleted documents as bitsets, made once: a
	// search asks about every document its drive meets, and roaring's
	// Contains took 8% of a search's walk on the tenth incremental
	// generation at 5M (625 KB for its large segment)
	bitsOnce sync.Once
	bits     [][]uint64
}

func newDeadCounts() *deadCounts {
	return &deadCounts{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, counts: map[[2]uint64]uint64{}}
}

// hash returns the key of a term.
func (c *deadCounts) hash(key fieldTerm) [2]uint64 {
	var out [2]uint64
	for i, seed := range c.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		h.WriteString(key.field)
		h.WriteByte(0)
		h.WriteString(key.term)
		out[i] = h.Sum64()
	}
	return out
}

// deadBitsOf returns the deleted documents of segs as bitsets, made from
// the first segments asked about: a generation's never change.
func (c *deadCounts) deadBitsOf(segs *segments) [][]uint64 {
	if c == nil {
		return nil
	}
	c.bitsOnce.Do(func() {
		c.bits = make([][]uint64, len(segs.snaps))
		for i, dead := range segs.dead {
			if dead == nil {
				continue
			}
			bits := make([]uint64, (segs.snaps[i].Segment().Count()+63)/64)
			for it := dead.Iterator(); it.HasNext(); {
				doc := it.Next()
				bits[doc>>6] |= 1 << (doc & 63)
			}
			c.bits[i] = bits
		}
	})
	return c.bits
}

// maxDeadCounts bounds the terms deadCounts keeps: about 20 MiB.
const maxDeadCounts = 1 << 18

func (c *deadCounts) get(key fieldTerm) (uint64, bool) {
	if c == nil {
		return 0, false
	}
	h := c.hash(key)
	c.mu.RLock()
	defer c.mu.RUnlock()
	n, ok := c.counts[h]
	return n, ok
}

func (c *deadCounts) put(key fieldTerm, n uint64) {
	if c == nil {
		return
	}
	h := c.hash(key)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.counts) < maxDeadCounts {
		c.counts[h] = n
	}
}

// termPostings is a term's postings list in each segment, and the
// documents they hold.
type termPostings struct {
	lists []segment.PostingsList
	count uint64
}

// segmentsOf returns the segments of r, which must be scorch's.
func segmentsOf(r bindex.IndexReader) (*segments, error) {
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("index reader %T is not scorch's: no segments", r)
	}
	s := &segments{r: snap, snaps: snap.Segments()}
	var next uint64
	for _, seg := range s.snaps {
		s.offsets = append(s.offsets, next)
		next += seg.Segment().Count()
		var dead *roaring.Bitmap
		if d := seg.Deleted(); d != nil && !d.IsEmpty() {
			dead = d
		}
		s.dead = append(s.dead, dead)
	}
	return s, nil
}

// numbers returns how many document numbers the segments take, deleted
// documents' included.
func (s *segments) numbers() uint64 {
	if len(s.snaps) == 0 {
		return 0
	}
	last := len(s.snaps) - 1
	return s.offsets[last] + s.snaps[last].Segment().Count()
}

// hasDeleted reports whether a segment holds deleted documents.
func (s *segments) hasDeleted() bool {
	for _, d := range s.dead {
		if d != nil {
			return true
		}
	}
	return false
}

// deleted reports whether document local of segment seg is deleted.
func (s *segments) deleted(seg int, local uint64) bool {
	if s.deadBits != nil {
		bits := s.deadBits[seg]
		return bits != nil && bits[local>>6]&(1<<(local&63)) != 0
	}
	return s.dead[seg] != nil && s.dead[seg].Contains(uint32(local))
}

// locate returns the segment of document number doc and its number there.
func (s *segments) locate(doc uint64) (int, uint64) {
	if len(s.offsets) == 1 {
		return 0, doc
	}
	i := sort.Search(len(s.offsets), func(i int) bool { return s.offsets[i] > doc }) - 1
	return i, doc - s.offsets[i]
}

// postings returns the postings list of term in field in every segment,
// deleted documents included, and the number of live documents they
// hold (deadCounts). zap would take the deleted documents off each list it opens
// (PostingsList's except): a copy of the whole bitmap, the larger part of
// a search's cost on a generation built on another's, since most terms'
// postings lie in its large segment, which holds the deleted documents.
// The collector passes over them instead (collect), asking only about
// the matches its top would keep.
func (s *segments) postings(field, term string) (*termPostings, error) {
	key := fieldTerm{field, term}
	if p, ok := s.lists[key]; ok {
		return p, nil
	}
	p := &termPostings{lists: make([]segment.PostingsList, 0, len(s.snaps))}
	// a full build's segments hold no deleted documents: nothing to count
	// or keep
	dead, known := uint64(0), !s.hasDeleted()
	if !known {
		dead, known = s.deadCounts.get(key)
	}
	var counted uint64 // the deleted documents counted, where not known
	for i, seg := range s.snaps {
		dict, err := seg.Segment().Dictionary(field)
		if err != nil {
			return nil, err
		}
		pl, err := dict.PostingsList([]byte(term), nil, nil)
		if err != nil {
			return nil, err
		}
		p.lists = append(p.lists, pl)
		p.count += pl.Count()
		if !known {
			n, err := deadIn(pl, s.dead[i])
			if err != nil {
				return nil, err
			}
			counted += n
		}
	}
	if !known {
		dead = counted
		if p.count > fewDocs {
			s.deadCounts.put(key, dead)
		}
	}
	p.count -= dead
	if s.lists == nil {
		s.lists = make(map[fieldTerm]*termPostings, 32)
	}
	s.lists[key] = p
	return p, nil
}

// holdsLive reports whether a live document holds term in field. The
// segments are asked largest first, and the first that holds one
// answers: a typo walk asks about up to 200 terms a word, nearly all of
// them held in the large segment, and reading each one's postings in
// every segment (postings) cost a second segment a sixth of a search's
// time.
func (s *segments) holdsLive(field, term string) (bool, error) {
	if p, ok := s.lists[fieldTerm{field, term}]; ok {
		return p.count > 0, nil
	}
	for _, i := range s.largestFirst() {
		dict, err := s.snaps[i].Segment().Dictionary(field)
		if err != nil {
			return false, err
		}
		pl, err := dict.PostingsList([]byte(term), nil, nil)
		if err != nil {
			return false, err
		}
		if pl.Count() == 0 {
			continue
		}
		if dead, err := deadIn(pl, s.dead[i]); err != nil || pl.Count() > dead {
			return err == nil, err
		}
	}
	return false, nil
}

// largestFirst returns the segments' indexes, the one with the most
// documents first.
func (s *segments) largestFirst() []int {
	if s.bySize == nil {
		s.bySize = make([]int, len(s.snaps))
		for i := range s.bySize {
			s.bySize[i] = i
		}
		slices.SortFunc(s.bySize, func(a, b int) int {
			return cmp.Compare(s.snaps[b].Segment().Count(), s.snaps[a].Segment().Count())
		})
	}
	return s.bySize
}

// deadIn returns the documents of pl that dead holds, as zap's Count
// takes them off with dead as the list's except, counting the
// intersection without copying the list.
func deadIn(pl segment.PostingsList, dead *roaring.Bitmap) (uint64, error) {
	if dead == nil || pl.Count() == 0 {
		return 0, nil
	}
	docs, err := docsOf(pl)
	switch {
	case err != nil:
		return 0, err
	case docs.hasOne && dead.Contains(uint32(docs.one)):
		return 1, nil
	case docs.bitmap != nil && pl.Count() <= fewDocs:
		return deadAmong(docs.bitmap, dead), nil
	case docs.bitmap != nil:
		return docs.bitmap.AndCardinality(dead), nil
	}
	return 0, nil
}

// fewDocs is the most documents a term's postings list holds for its
// deleted documents to be looked up one by one: roaring counts an
// intersection of two arrays by walking both unless one is 64 times the
// other, and a large segment's deleted documents are hundreds per array,
// where a typo neighbour's postings are a few.
const fewDocs = 32

// deadAmong counts the documents of docs that dead holds, one look-up
// each.
func deadAmong(docs, dead *roaring.Bitmap) uint64 {
	var n uint64
	it := docs.Iterator()
	for it.HasNext() {
		if dead.Contains(it.Next()) {
			n++
		}
	}
	return n
}

// storedProfile returns the profile that document h.doc stores
// (fieldProfile); nil, nil if it stores none. A hit without its id gets
// the document's.
func (s *segments) storedProfile(h *hit) (*companydocs.Profile, error) {
	if s.stored == nil {
		s.stored = &storedReader{}
		s.stored.visit = s.stored.visitField
	}
	r := s.stored
	r.id, r.profile, r.err = h.id, nil, nil
	seg, local := s.locate(h.doc)
	if err := s.snaps[seg].Segment().VisitStoredFields(local, r.visit); err != nil {
		return nil, fmt.Errorf("stored fields of document %d: %w", h.doc, err)
	}
	h.id = r.id
	if r.err != nil {
		return nil, fmt.Errorf("profile %q: %w", h.id, r.err)
	}
	if r.profile != nil {
		r.profile.ID = h.id
	}
	return r.profile, nil
}

// A storedReader decodes the profile a document stores. A search reads
// its hits one after the other through one, whose visitor is made once:
// a closure per hit took three allocations.
type storedReader struct {
	id      string
	profile *companydocs.Profile
	err     error
	visit   segment.StoredFieldValueVisitor // visitField
}

func (r *storedReader) visitField(field string, _ byte, value []byte, _ []uint64) bool {
	switch field {
	case idField:
		if r.id == "" {
			r.id = string(value)
		}
	case fieldProfile:
		// readProfile copies value, which zap reuses
		r.profile, r.err = decodeProfile(r.id, value)
		return false
	}
	return true
}
