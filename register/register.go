package register

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the parsers.
var (
	ErrRef          = errors.New("not a register reference")
	ErrUnknownCourt = errors.New("unknown register court")
	ErrLEIFormat    = errors.New("not an LEI: an LEI has 20 letters and digits")
	ErrLEIChecksum  = errors.New("LEI checksum (ISO 7064 mod 97-10) fails")
)

// Type is the kind of German register an entry lives in.
type Type string

// Register types.
const (
	HRA Type = "HRA" // commercial register, partnerships and sole traders
	HRB Type = "HRB" // commercial register, corporations
	VR  Type = "VR"  // register of associations
	GnR Type = "GnR" // register of cooperatives
	PR  Type = "PR"  // partnership register
	GsR Type = "GsR" // register of civil-law partnerships
)

// Types lists every register type.
var Types = []Type{HRA, HRB, VR, GnR, PR, GsR}

// Ref is the identity of a register entry: court, optional former
// court, type, number and suffix. Court codes are XJustiz codes as they
// appear in register dumps (e.g. "D2601V" München, "F1103R" Charlottenburg).
type Ref struct {
	Court       string `json:"court,omitempty"`
	FormerCourt string `json:"former_court,omitempty"`
	Type        Type   `json:"type"`
	Number      string `json:"number"`
	Suffix      string `json:"suffix,omitempty"`
}

// Key returns the canonical identity string of the reference, used for
// stable profile ids and exact lookups.
func (r Ref) Key() string {
	return strings.Join([]string{r.Court, r.FormerCourt, string(r.Type), r.Number, r.Suffix}, "|")
}

// NumberKey returns "TYPE NUMBER[ SUFFIX]" without court, e.g. "HRB 53 KI":
// the key under which entries sharing a number are found across courts.
func (r Ref) NumberKey() string {
	s := string(r.Type) + " " + r.Number
	if r.Suffix != "" {
		s += " " + r.Suffix
	}
	return s
}

// String renders the reference the way registers print it, e.g.
// "München HRB 6684" or "Stendal früher Bitterfeld HRB 573".
func (r Ref) String() string {
	var b strings.Builder
	if c, ok := CourtByCode(r.Court); ok {
		b.WriteString(c.Name)
		b.WriteByte(' ')
	}
	if c, ok := CourtByCode(r.FormerCourt); ok {
		b.WriteString("früher ")
		b.WriteString(c.Name)
		b.WriteByte(' ')
	}
	b.WriteString(r.NumberKey())
	return b.String()
}

// ParseRef parses a complete register reference in any notation
// people write: "HRB 6684", "HRB6684", "HR B 6684", "Amtsgericht München HRB
// 6684", "München, HRB 6684", "HRB 6684 München", "HRB 158855 B", "Kiel HRB
// 53 KI", "Oldenburg (Oldenburg) früher Varel HRB 53". The court is optional
// (Court stays empty); an unknown court name gives ErrUnknownCourt.
//
// A court-marker suffix that registers do not keep ("HRB 158855 B" for
// Berlin (Charlottenburg), "HB" for Bremen, "CB", "NP", "P" and "FF" for the
// Brandenburg courts) becomes the court instead, as in the register dumps.
func ParseRef(s string) (Ref, error) {
	toks := scanTokens(s)
	m, ok := findRegisterRef(toks)
	if !ok {
		return Ref{}, fmt.Errorf("%w: %q", ErrRef, s)
	}
	if leftoverWords(toks[:m.start]) || leftoverWords(toks[m.end:]) {
		return Ref{}, fmt.Errorf("%w: %q", ErrUnknownCourt, strings.TrimSpace(restText(s, toks, m)))
	}
	return m.ref, nil
}

// FindRef looks for a register reference inside free text such as
// "Müller GmbH HRB 6684 München" and returns it with the text that remains
// once the reference (and the court, if one was recognised) is cut out.
func FindRef(text string) (ref Ref, rest string, ok bool) {
	toks := scanTokens(text)
	m, ok := findRegisterRef(toks)
	if !ok {
		return Ref{}, text, false
	}
	return m.ref, restText(text, toks, m), true
}

// ParseCompanyNumber parses an OffeneRegister company_number: court code,
// optional former-court code, type, number and optional suffix, e.g.
// "B1204_HRB260632", "W1215_W1104_HRB573", "X1517R_HRB53KI".
func ParseCompanyNumber(s string) (Ref, error) {
	parts := strings.Split(strings.TrimSpace(s), "_")
	if len(parts) < 2 || len(parts) > 3 {
		return Ref{}, fmt.Errorf("%w: company number %q", ErrRef, s)
	}
	var ref Ref
	for i, code := range parts[:len(parts)-1] {
		code = strings.ToUpper(code)
		if !isCourtCode(code) {
			return Ref{}, fmt.Errorf("%w: court code %q in company number %q", ErrRef, code, s)
		}
		if c, ok := CourtByCode(code); ok {
			code = c.Code
		}
		if i == 0 {
			ref.Court = code
		} else {
			ref.FormerCourt = code
		}
	}
	typ, num, suffix, ok := splitGluedRef(parts[len(parts)-1])
	if !ok {
		return Ref{}, fmt.Errorf("%w: company number %q", ErrRef, s)
	}
	ref.Type, ref.Number, ref.Suffix = typ, num, suffix
	return ref, nil
}

// ParseType accepts a register type in any case or spacing ("HRB",
// "hrb", "HR B", "GnR", "GenR", "PR", "PartR", "VR", "GsR").
func ParseType(s string) (Type, bool) {
	key := strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', '-', '\t':
			return -1
		}
		return r
	}, strings.ToUpper(s))
	t, ok := registerTypeSpellings[key]
	return t, ok
}

// registerTypeSpellings maps upper-case spellings without spaces, dots and
// hyphens to register types.
var registerTypeSpellings = map[string]Type{
	"HRA": HRA, "HANDELSREGISTERA": HRA, "HANDELSREGISTERABTEILUNGA": HRA,
	"HRB": HRB, "HANDELSREGISTERB": HRB, "HANDELSREGISTERABTEILUNGB": HRB,
	"VR": VR, "VEREINSREGISTER": VR,
	"GNR": GnR, "GENR": GnR, "GENOSSENSCHAFTSREGISTER": GnR,
	"PR": PR, "PARTR": PR, "PARTNERSCHAFTSREGISTER": PR,
	"GSR": GsR, "GESR": GsR, "GESELLSCHAFTSREGISTER": GsR,
}
