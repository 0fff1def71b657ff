package index

import (
	"fmt"

	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/mapping"
)

// docType is the only document type of the index.
const docType = "profile"

// foldedAnalyzer splits text on white space and lower-cases it. Text reaches
// it already folded by textfold.Fold or FoldPlain (umlauts, ß, diacritics,
// punctuation), so index and query fold exactly alike. It has no stop words
// and no stemmer: both mangle proper names.
const foldedAnalyzer = "folded"

// Field names of the index document. Text fields use foldedAnalyzer;
// keyword fields hold one exact term per value. Only fields that queries
// use are indexed: register numbers, LEIs, legal forms and the removed and
// verified flags are looked up or read in the profile store, and every
// indexed term costs build time and disk.
const (
	fieldName          = "name"           // folded name tokens without the legal form
	fieldNamePlain     = "name_plain"     // FoldPlain spelling of tokens that differ (ä -> a)
	fieldNameForm      = "name_form"      // name token joined with the legal-form code: "mueller|gmbh"
	fieldNameKey       = "name_key"       // keyword: register.NameKey of the name
	fieldNameBase      = "name_base"      // keyword: folded name tokens without legal form, joined
	fieldSeat          = "seat"           // folded seat tokens
	fieldSeatKey       = "seat_key"       // keyword: folded seat
	fieldPreviousNames = "previous_names" // folded previous names
	fieldOfficers      = "officers"       // folded officer names
	fieldAddress       = "address"        // folded address
	fieldPhonetic      = "phonetic"       // Kölner Phonetik codes of the name tokens
	fieldCourt         = "court"          // keyword: court codes (raw and canonical, former court too)
	fieldSource        = "source"         // keyword: registry_cache, discovery (unverified) or discovery_verified
	// fieldProfile holds the profile's value as the profile store does
	// (encodeProfile), stored and not indexed: a search reads the
	// profiles of its hits by document number, beside their ids, instead
	// of looking each id up in the profile store's B+tree (since
	// IndexVersion 9). The document struct and the mapping leave it out:
	// bleveDocument adds it.
	fieldProfile = "profile"
)

var textFields = []string{fieldName, fieldNamePlain, fieldNameForm, fieldSeat,
	fieldPreviousNames, fieldOfficers, fieldAddress, fieldPhonetic}

var keywordFields = []string{fieldNameKey, fieldNameBase, fieldSeatKey, fieldCourt, fieldSource}

// newMapping returns the index mapping: one static document type with
// explicit fields, no default mapping, no _all field, no dynamic fields,
// nothing stored but the document id (profiles live in profiles.db). The
// builder does not map documents through it (see bleveDocument); the index
// keeps it as the description of its fields.
func newMapping() (*mapping.IndexMappingImpl, error) {
	im := mapping.NewIndexMapping()
	err := im.AddCustomAnalyzer(foldedAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     whitespace.Name,
		"token_filters": []string{lowercase.Name},
	})
	if err != nil {
		return nil, fmt.Errorf("register analyzer %q: %w", foldedAnalyzer, err)
	}
	im.DefaultMapping = mapping.NewDocumentDisabledMapping()
	im.DefaultAnalyzer = foldedAnalyzer
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	doc := mapping.NewDocumentStaticMapping()
	for _, f := range textFields {
		doc.AddFieldMappingsAt(f, textField())
	}
	for _, f := range keywordFields {
		doc.AddFieldMappingsAt(f, keywordField())
	}
	// No field is included in _all; without this the mapping would still
	// add an empty _all composite field to every document.
	doc.AddSubDocumentMapping("_all", mapping.NewDocumentDisabledMapping())
	im.AddDocumentMapping(docType, doc)
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("validate mapping: %w", err)
	}
	return im, nil
}

func textField() *mapping.FieldMapping {
	f := mapping.NewTextFieldMapping()
	f.Analyzer = foldedAnalyzer
	f.Store = false
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}

func keywordField() *mapping.FieldMapping {
	f := mapping.NewKeywordFieldMapping()
	f.Analyzer = keyword.Name
	f.Store = false
	f.IncludeTermVectors = false
	f.IncludeInAll = false
	f.DocValues = false
	return f
}
