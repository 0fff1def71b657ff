package companydocs

// LegalForm is a recognised legal form.
type LegalForm struct {
	// Code is the canonical short form, e.g. "GmbH & Co. KG", "e.V.".
	Code string
	// Words is the folded token sequence that matched, e.g. ["gmbh","&","co","kg"].
	Words []string
}

// SplitLegalForm recognises the legal form in a company name (every spelling
// that occurs in the registers, longest first: "GmbH & Co. KG" before
// "GmbH") and returns the folded name tokens without it and the form.
func SplitLegalForm(name string) (base []string, form LegalForm, ok bool) {
	return nil, LegalForm{}, false
}

// NameKey is the normalised name used for exact name matches: folded,
// legal form replaced by its canonical code.
func NameKey(name string) string { return Fold(name) }

// Phonetic returns the Kölner Phonetik code of a token.
func Phonetic(token string) string { return "" }
