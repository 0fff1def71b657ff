package index

import (
	"encoding/binary"
	"path/filepath"
	"testing"

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

	adv, err := g.idx.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.(bindex.IndexReaderFuzzy); !ok {
		t.Errorf("reader %T has no fuzzy dictionary (FieldDictFuzzy)", r)
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		t.Fatalf("reader is %T, not *scorch.IndexSnapshot", r)
	}
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

	checkInternalIDs(t, r)
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
