package index

import (
	"fmt"
	"sort"
	"testing"

	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
	"companydocs/register"
)

// analysedFields returns, per field name, the analysed values of doc's
// non-composite fields other than _id: each value's length and term
// frequencies, in a canonical order. Text values without tokens are left
// out: they put nothing into the index (the mapping's reflection ignores
// omitempty and so yields them for empty strings).
func analysedFields(doc *bdoc.Document) map[string][]string {
	out := map[string][]string{}
	doc.VisitFields(func(f bindex.Field) {
		if f.Name() == "_id" || !f.Options().IsIndexed() {
			return
		}
		f.Analyze()
		if f.AnalyzedLength() == 0 {
			return
		}
		var terms []string
		for term, tf := range f.AnalyzedTokenFrequencies() {
			terms = append(terms, fmt.Sprintf("%q:%d", term, tf.Frequency()))
		}
		sort.Strings(terms)
		out[f.Name()] = append(out[f.Name()], fmt.Sprintf("len=%d opts=%v %v", f.AnalyzedLength(), f.Options(), terms))
	})
	for _, vs := range out {
		sort.Strings(vs)
	}
	return out
}

// TestBleveDocumentMatchesMapping checks that the documents the builder
// writes index every real profile exactly as the mapping would: the same
// fields, lengths, terms and frequencies.
func TestBleveDocumentMatchesMapping(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	ps := append(loadRealProfiles(t), &companydocs.Profile{
		ID: "synthetic", Name: "ÄRGER & Söhne GmbH", Seat: "Frankfurt am Main", Address: "Straße\tdes 17. Juni",
		PreviousNames: []string{"", "Alte İstanbul Firma"}, Source: companydocs.SourceDiscovery,
		LEIs: []companydocs.LEILink{{LEI: "529900T8BM49AURSDO55"}},
	})
	for _, p := range ps {
		d := newDocument(p)
		if key := register.NameKey(p.Name); len(d.NameKey) != 1 || d.NameKey[0] != key {
			t.Fatalf("profile %q (%q): name key %q, want %q", p.ID, p.Name, d.NameKey, key)
		}
		viaMapping := bdoc.NewDocument(p.ID)
		if err := m.MapDocument(viaMapping, d); err != nil {
			t.Fatal(err)
		}
		want, got := analysedFields(viaMapping), analysedFields(d.bleveDocument(p.ID, nil))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("profile %q (%q):\ndirect  %v\nmapping %v", p.ID, p.Name, got, want)
		}
	}
}

// TestFoldedTokensUpperCaseAndUnicode checks the slow path of foldedTokens
// against the analyzer it replaces, on input that is not folded.
func TestFoldedTokensUpperCaseAndUnicode(t *testing.T) {
	m, err := newMapping()
	if err != nil {
		t.Fatal(err)
	}
	ref := m.AnalyzerNamed(foldedAnalyzer)
	for _, in := range []string{"", "  ", "a", "müller  gmbh", "MÜLLER GmbH\u00a0x", "ab\tcd\nef", "x\u2003y", "İstanbul"} {
		var got, want []string
		for _, tok := range (foldedTokens{}).Analyze([]byte(in)) {
			got = append(got, string(tok.Term))
		}
		for _, tok := range ref.Analyze([]byte(in)) {
			want = append(want, string(tok.Term))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Analyze(%q) = %q, want %q", in, got, want)
		}
	}
}

// Type names the bleve document mapping (mapping.Classifier), for the
// mapping the test compares with: the builder makes bleve documents
// itself (bleveDocument) and never asks.
func (document) Type() string { return docType }
