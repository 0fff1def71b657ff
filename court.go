package companydocs

// Court is a German register court.
type Court struct {
	// Code is the XJustiz code as used by register dumps, e.g. "D2601V".
	Code string
	// Name is the short display name, e.g. "München", "Berlin (Charlottenburg)".
	Name string
	// GLEIFRA is the GLEIF registration authority code, e.g. "RA000304".
	GLEIFRA string
	// State is the federal state.
	State string
}

// CourtByCode returns the court with the given XJustiz code. Codes with and
// without the register letter ("D2601" and "D2601V") name the same court.
// TODO(parsers): implemented by court table.
func CourtByCode(code string) (Court, bool) { return Court{}, false }

// CourtByRA returns the court registered at GLEIF under the RA code.
func CourtByRA(ra string) (Court, bool) { return Court{}, false }

// LookupCourt finds a court by a name or alias as people write it
// ("München", "Amtsgericht München", "AG Muenchen", "Charlottenburg",
// "Berlin"), ignoring case, umlaut spelling and punctuation.
func LookupCourt(name string) (Court, bool) { return Court{}, false }
