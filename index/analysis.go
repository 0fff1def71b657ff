package index

import (
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	bdoc "github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
)

// fieldOptions index a field and nothing else: no stored value, no term
// vectors, no doc values (nothing is sorted, faceted or highlighted).
const fieldOptions = bindex.IndexField

// bleveDocument builds the bleve document of d directly, with the fields
// the mapping (newMapping) would derive from d by reflection and tokens the
// foldedAnalyzer would produce, at a fraction of the cost: no reflection,
// no _all field, one small token slice per field. The profile's value
// (encodeProfile), unless nil, is stored beside them, not indexed
// (fieldProfile).
func (d *document) bleveDocument(id string, profile []byte) *bdoc.Document {
	doc := &bdoc.Document{Fields: make([]bdoc.Field, 0, 16)}
	doc.SetID(id)
	text := func(name, v string) {
		doc.AddField(bdoc.NewTextFieldCustom(name, nil, []byte(v), fieldOptions, foldedTokens{}))
	}
	keyword := func(name string, vs ...string) {
		for _, v := range vs {
			// without an analyzer the whole value is the one token, as
			// with the keyword analyzer
			doc.AddField(bdoc.NewTextFieldCustom(name, nil, []byte(v), fieldOptions, nil))
		}
	}
	// The struct's omitempty tags decide which empty values the mapping
	// leaves out; the same ones are left out here.
	text(fieldName, d.Name)
	for _, f := range []struct{ name, value string }{
		{fieldNamePlain, d.NamePlain}, {fieldNameForm, d.NameForm},
		{fieldSeat, d.Seat}, {fieldAddress, d.Address}, {fieldPhonetic, d.Phonetic},
	} {
		if f.value != "" {
			text(f.name, f.value)
		}
	}
	for _, v := range d.PreviousNames {
		text(fieldPreviousNames, v)
	}
	for _, v := range d.Officers {
		text(fieldOfficers, v)
	}
	keyword(fieldNameKey, d.NameKey...)
	keyword(fieldNameBase, d.NameBase...)
	keyword(fieldSeatKey, d.SeatKey...)
	keyword(fieldCourt, d.Court...)
	keyword(fieldSource, d.Source)
	if profile != nil {
		doc.AddField(bdoc.NewTextFieldCustom(fieldProfile, nil, profile, bindex.StoreField, nil))
	}
	doc.SetIndexed()
	return doc
}

// foldedTokens is the foldedAnalyzer (white space tokenizer, lower-case
// filter) for text that is already folded: lower-case ASCII split on
// spaces takes a fast path that allocates one token slice of the right
// size instead of the tokenizer's 1024 entries; other text goes through
// the tokenizer and filter themselves.
type foldedTokens struct{}

var (
	whitespaceTokenizer = mustTokenizer()
	lowercaseFilter     = lowercase.NewLowerCaseFilter()
)

func mustTokenizer() analysis.Tokenizer {
	t, err := whitespace.TokenizerConstructor(nil, nil)
	if err != nil {
		panic(err)
	}
	return t
}

// Analyze implements analysis.Analyzer.
func (foldedTokens) Analyze(input []byte) analysis.TokenStream {
	n, ok := countFoldedTokens(input)
	if !ok {
		return lowercaseFilter.Filter(whitespaceTokenizer.Tokenize(input))
	}
	tokens := make([]analysis.Token, n)
	stream := make(analysis.TokenStream, n)
	i, start := 0, -1
	for pos := 0; pos <= len(input); pos++ {
		if pos < len(input) && !isASCIISpace(input[pos]) {
			if start < 0 {
				start = pos
			}
			continue
		}
		if start >= 0 {
			tokens[i] = analysis.Token{Term: input[start:pos], Start: start, End: pos, Position: i + 1, Type: analysis.AlphaNumeric}
			stream[i] = &tokens[i]
			i++
			start = -1
		}
	}
	return stream
}

// countFoldedTokens counts the space-separated tokens of input; ok is false
// when input holds anything but ASCII without upper case.
func countFoldedTokens(input []byte) (n int, ok bool) {
	inToken := false
	for _, c := range input {
		switch {
		case c >= 0x80 || c >= 'A' && c <= 'Z':
			return 0, false
		case isASCIISpace(c):
			inToken = false
		case !inToken:
			inToken = true
			n++
		}
	}
	return n, true
}

// isASCIISpace is unicode.IsSpace for ASCII bytes.
func isASCIISpace(c byte) bool {
	return c < 0x80 && unicode.IsSpace(rune(c))
}
