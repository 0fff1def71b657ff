package index

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
)

// TestBleveAssumptions checks what the package relies on in bleve's
// internals (index/DESIGN.md, "What is relied on in bleve"), on a real
// generation, so that an upgrade of bleve that changes any of it fails
// here by name rather than in a search or a commit.
func TestBleveAssumptions(t *testing.T) {
	g := sharedGeneration(t)

	s, err := scorchOf(g.idx)
	if err != nil {
		t.Fatalf("the index is not scorch: %v", err)
	}
	if _, err := scorchStats(s); err != nil {
		t.Fatalf("scorch statistics: %v", err)
	}
	if n, _ := fileSegments(s); n != 1 {
		t.Errorf("a published generation has %d file segments, want 1 (TotFileSegmentsAtRoot)", n)
	}

	snap := snapshotOf(t, g)
	for _, seg := range snap.Segments() {
		file, ok := seg.Segment().(interface{ Path() string })
		if !ok {
			t.Fatalf("segment %T has no Path", seg.Segment())
		}
		if filepath.Dir(filepath.Dir(file.Path())) != filepath.Join(g.Dir(), bleveDirName) {
			t.Errorf("segment file %s is not in the generation's bleve store", file.Path())
		}
	}
	if files, err := snapshotFiles(filepath.Join(g.Dir(), bleveDirName)); err != nil || len(files) != 1 {
		t.Errorf("snapshot files = %v, %v; want the one segment", files, err)
	}

	checkInternalIDs(t, snap)
}

// checkInternalIDs checks that an internal document id is the document
// number, 8 bytes big-endian: the union reads numbers from postings that
// way, and the collector turns numbers back into ids with
// NewIndexInternalID.
func checkInternalIDs(t *testing.T, r bindex.IndexReader) {
	t.Helper()
	tfr, err := r.TermFieldReader(t.Context(), []byte(companydocs.SourceRegistryCache), fieldSource, false, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tfr.Close()
	seen := 0
	for m, err := tfr.Next(nil); m != nil && seen < 50; m, err = tfr.Next(nil) {
		if err != nil {
			t.Fatal(err)
		}
		if len(m.ID) != 8 {
			t.Fatalf("internal id %x has %d bytes, want 8", m.ID, len(m.ID))
		}
		doc := binary.BigEndian.Uint64(m.ID)
		if got := bindex.NewIndexInternalID(nil, doc); string(got) != string(m.ID) {
			t.Fatalf("NewIndexInternalID(%d) = %x, want %x", doc, got, m.ID)
		}
		ext, err := r.ExternalID(m.ID)
		if err != nil || ext == "" {
			t.Fatalf("ExternalID(%x) = %q, %v", m.ID, ext, err)
		}
		seen++
	}
	if seen == 0 {
		t.Fatal("no registry-cache document found; the check read nothing")
	}
}

// TestDictFuzzy checks the typo terms of dictFuzzy against every term of
// the dictionary measured with the textbook table, and against scorch's
// own fuzzy dictionary, whose walk it replaces: terms of real names and
// officers, mistyped in every way an edit can (a letter dropped, added,
// changed or two swapped, umlauts and ß included), at one and two edits,
// with the prefixes searches use. scorch reports distance 0 for a match
// at the start of the walk, the prefix itself ("e" for "e&" with prefix
// "e"); that, counted, is the one difference allowed.
func TestDictFuzzy(t *testing.T) {
	g := sharedGeneration(t)
	snap := snapshotOf(t, g)
	lookups, atPrefix := 0, 0
	for _, field := range []string{fieldName, fieldOfficers} {
		dictionary := dictionaryOf(t, snap, field)
		for i, term := range spread(dictionary, 25) {
			for _, typo := range typosOf(term, i) {
				for _, c := range []struct{ distance, prefix int }{{1, 0}, {1, 1}, {2, 1}, {2, 2}} {
					prefix := prefixOf(typo, c.prefix)
					got, err := dictFuzzy(snap, field, typo, c.distance, prefix)
					if err != nil {
						t.Fatal(err)
					}
					if want := bruteFuzzy(dictionary, typo, c.distance, prefix); !slices.Equal(got, want) {
						t.Fatalf("%s %q at %d edits, prefix %q:\ndictFuzzy %v\nthe table %v", field, typo, c.distance, prefix, got, want)
					}
					lookups++
					for _, f := range symmetricDifference(got, scorchFuzzy(t, snap, field, typo, c.distance, prefix)) {
						if f.term == prefix {
							atPrefix++
							continue
						}
						t.Errorf("%s %q at %d edits, prefix %q: scorch differs on %v", field, typo, c.distance, prefix, f)
					}
				}
			}
		}
	}
	t.Logf("%d lookups; scorch's distance differs at the prefix %d times", lookups, atPrefix)
}

func dictionaryOf(t testing.TB, r bindex.IndexReader, field string) []string {
	t.Helper()
	dict, err := r.FieldDict(field)
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Close()
	var all []string
	for e, err := dict.Next(); e != nil; e, err = dict.Next() {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, e.Term)
	}
	return all
}

// spread returns n terms spread over terms, and two with umlaut and ß.
func spread(terms []string, n int) []string {
	out := make([]string, 0, n+2)
	for i := range n {
		out = append(out, terms[i*len(terms)/n])
	}
	return append(out, "müller", "straße")
}

// bruteFuzzy measures every term of the dictionary.
func bruteFuzzy(dictionary []string, term string, distance int, prefix string) []fuzzyTerm {
	out := []fuzzyTerm{}
	n := utf8.RuneCountInString(term)
	for _, d := range dictionary {
		if !strings.HasPrefix(d, prefix) || abs(utf8.RuneCountInString(d)-n) > distance {
			continue
		}
		if e := osaDistance(term, d); e <= distance {
			out = append(out, fuzzyTerm{term: d, distance: uint8(e)})
		}
	}
	return out
}

func abs(x int) int { return max(x, -x) }

// symmetricDifference returns the entries of a or b that the other has
// not, with a's distance for a term in both.
func symmetricDifference(a, b []fuzzyTerm) []fuzzyTerm {
	var out []fuzzyTerm
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, y := range b {
		if !slices.ContainsFunc(a, func(x fuzzyTerm) bool { return x.term == y.term }) {
			out = append(out, y)
		}
	}
	return out
}

// osaDistance is the optimal string alignment distance of a and b in
// characters, the textbook table.
func osaDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// typosOf returns term mistyped: a letter dropped, one added, one
// changed, two swapped, and an umlaut put in.
func typosOf(term string, seed int) []string {
	rs := []rune(term)
	k := seed % len(rs)
	edit := func(f func([]rune) []rune) string { return string(f(slices.Clone(rs))) }
	return []string{
		term,
		edit(func(r []rune) []rune { return slices.Delete(r, k, k+1) }),
		edit(func(r []rune) []rune { return slices.Insert(r, k, 'e') }),
		edit(func(r []rune) []rune { r[k] = 'ä'; return r }),
		edit(func(r []rune) []rune {
			if k+1 < len(r) {
				r[k], r[k+1] = r[k+1], r[k]
			}
			return r
		}),
		edit(func(r []rune) []rune { return append(r[:len(r)/2], 'ß', 'x') }),
	}
}

func scorchFuzzy(t *testing.T, snap *scorch.IndexSnapshot, field, term string, distance int, prefix string) []fuzzyTerm {
	t.Helper()
	dict, err := snap.FieldDictFuzzy(field, term, distance, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer dict.Close()
	out := []fuzzyTerm{}
	for e, err := dict.Next(); e != nil; e, err = dict.Next() {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fuzzyTerm{term: e.Term, distance: uint8(e.EditDistance)})
	}
	return out
}

// TestCountAgreesWithTermFieldReaders checks that the document frequencies
// read from the segments' postings lists (termStats.count) are those of
// scorch's term field readers, for terms of every field a query weighs.
func TestCountAgreesWithTermFieldReaders(t *testing.T) {
	g := sharedGeneration(t)
	r := snapshotOf(t, g)
	s := &termStats{ctx: t.Context(), r: r}
	for _, field := range []string{fieldName, fieldNamePlain, fieldSeat, fieldOfficers, fieldAddress, fieldSource} {
		for _, term := range append(spread(dictionaryOf(t, r, field), 40), "no-such-term") {
			got, err := s.count(field, term)
			if err != nil {
				t.Fatal(err)
			}
			tfr, err := r.TermFieldReader(t.Context(), []byte(term), field, false, false, false)
			if err != nil {
				t.Fatal(err)
			}
			if want := tfr.Count(); got != want {
				t.Errorf("%s %q: count %d, term field reader %d", field, term, got, want)
			}
			tfr.Close()
		}
	}
}

// snapshotOf opens a reader of g's index, closed at the end of the test:
// scorch's snapshot, or the test fails.
func snapshotOf(tb testing.TB, g *Generation) *scorch.IndexSnapshot {
	tb.Helper()
	r := readerOf(tb, g.idx)
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		tb.Fatalf("reader is %T, not *scorch.IndexSnapshot", r)
	}
	return snap
}

// readerOf opens a reader of idx, closed at the end of the test.
func readerOf(tb testing.TB, idx bleve.Index) bindex.IndexReader {
	tb.Helper()
	adv, err := idx.Advanced()
	if err != nil {
		tb.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// TestSegmentPostingsAgreeWithTermFieldReaders checks what the searcher
// reads from scorch's segments directly against scorch's own term field
// readers, on an index of several segments with deleted documents: a
// document's number is its segment's offset (the documents of the
// segments before it, deleted ones included) plus its number in the
// segment; a term's postings lists, less deleted documents, hold the
// documents, frequencies and norms the reader gives; and zap's postings
// iterators give their bitmaps (segment.OptimizablePostingsIterator).
func TestSegmentPostingsAgreeWithTermFieldReaders(t *testing.T) {
	words := strings.Fields("mueller bau gmbh schmidt handel kg meyer immobilien verwaltung beteiligung")
	r, segs := severalSegments(t, func(n int) (string, string) {
		return fmt.Sprintf("p%03d", n), fmt.Sprintf("%s %s %s", words[n%len(words)], words[(n*7)%len(words)], words[(n/3)%len(words)])
	})
	for _, word := range append(words, "no-such-word") {
		compareSegmentPostings(t, r, segs, "name", word)
	}
}

// compareSegmentPostings compares what the searcher reads of term in
// field with what scorch's term field reader gives.
func compareSegmentPostings(t *testing.T, r bindex.IndexReader, segs *segments, field, term string) {
	t.Helper()
	tfr, err := r.TermFieldReader(t.Context(), []byte(term), field, true, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tfr.Close()
	var want []bindex.TermFieldDoc
	for m, err := tfr.Next(nil); m != nil; m, err = tfr.Next(nil) {
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, bindex.TermFieldDoc{ID: append(bindex.IndexInternalID(nil), m.ID...), Freq: m.Freq, Norm: m.Norm})
	}
	tp, err := segs.postings(field, term)
	if err != nil {
		t.Fatal(err)
	}
	if tp.count != tfr.Count() {
		t.Errorf("%q: count %d, term field reader %d", term, tp.count, tfr.Count())
	}
	// counted again with the deleted documents' counts kept, and read
	// back from them
	kept := newDeadCounts()
	for i := range 2 {
		again := &segments{r: segs.r, snaps: segs.snaps, offsets: segs.offsets, dead: segs.dead, deadCounts: kept}
		if tp, err := again.postings(field, term); err != nil || tp.count != tfr.Count() {
			t.Errorf("%q, search %d with kept counts: count %d (%v), term field reader %d", term, i+1, tp.count, err, tfr.Count())
		}
	}

	var u union
	if err := u.open(segs, [][]clause{{{field: field, value: term, boost: 1}}}, 1); err != nil {
		t.Fatal(err)
	}
	// the drive reads deleted documents too, which the searcher passes
	// over (below)
	d := u.readers[0]
	var got []bindex.TermFieldDoc
	for d.next(&err); !d.done; d.next(&err) {
		if seg, local := segs.locate(d.doc); !segs.deleted(seg, local) {
			got = append(got, bindex.TermFieldDoc{ID: bindex.NewIndexInternalID(nil, d.doc), Freq: d.freq, Norm: d.norm})
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%q: drive reads %v, term field reader %v", term, got, want)
	}
	if found := searchedDocs(t, segs, field, term); fmt.Sprint(found) != fmt.Sprint(idsOf(want)) {
		t.Errorf("%q: the searcher finds %v, the term field reader %v", term, found, idsOf(want))
	}

	ps, err := openPostings(segs, []clause{{field: field, value: term, boost: 1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	held := map[uint64]bool{}
	for _, w := range want {
		held[binary.BigEndian.Uint64(w.ID)] = true
	}
	last := segs.offsets[len(segs.offsets)-1] + segs.snaps[len(segs.snaps)-1].Segment().Count()
	for doc := range last {
		if i, local := segs.locate(doc); segs.snaps[i].Deleted() != nil && segs.snaps[i].Deleted().Contains(uint32(local)) {
			continue
		}
		if got := holds(segs, ps[0], doc); got != held[doc] {
			t.Errorf("%q: document %d held %v by the bitmaps, %v by the term field reader", term, doc, got, held[doc])
		}
	}
}

// searchedDocs returns the documents a search for term in field finds,
// in document order.
func searchedDocs(t *testing.T, segs *segments, field, term string) []uint64 {
	t.Helper()
	q := &textQuery{drive: [][]clause{{{field: field, value: term, boost: 1}}}}
	s, err := q.newSearcher(segs)
	if err != nil {
		t.Fatal(err)
	}
	top, err := collect(t.Context(), s, 1000, false)
	if err != nil {
		t.Fatal(err)
	}
	var docs []uint64
	for _, m := range append(top.best, top.tied...) {
		docs = append(docs, m.doc)
	}
	slices.Sort(docs)
	return docs
}

// idsOf returns the document numbers of docs.
func idsOf(docs []bindex.TermFieldDoc) []uint64 {
	var out []uint64
	for _, d := range docs {
		out = append(out, binary.BigEndian.Uint64(d.ID))
	}
	return out
}

// holds reports whether document doc of segs holds the clause of p.
func holds(segs *segments, p *postings, doc uint64) bool {
	i, local := segs.locate(doc)
	d := p.docs[i]
	if d.hasOne {
		return d.one == local
	}
	return d.bitmap != nil && d.bitmap.Contains(uint32(local))
}

// severalSegments returns a reader of an index in memory of four batches of
// 40 documents, each a segment, document n of id and name doc(n), with
// p003, p041 and p150 deleted, and its segments. The reader is closed when
// the test ends.
func severalSegments(t *testing.T, doc func(n int) (id, name string)) (bindex.IndexReader, *segments) {
	t.Helper()
	idx, err := bleve.NewUsing("", bleve.NewIndexMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	for b := range 4 {
		batch := idx.NewBatch()
		for i := range 40 {
			id, name := doc(b*40 + i)
			if err := batch.Index(id, map[string]string{"name": name}); err != nil {
				t.Fatal(err)
			}
		}
		if err := idx.Batch(batch); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range deletedOfSeveral {
		if err := idx.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	r := readerOf(t, idx)
	segs, err := segmentsOf(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(segs.snaps) < 2 {
		t.Fatalf("%d segments: the check needs several", len(segs.snaps))
	}
	return r, segs
}

// deletedOfSeveral are the documents severalSegments deletes.
var deletedOfSeveral = []string{"p003", "p041", "p150"}
