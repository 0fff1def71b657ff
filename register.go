package companydocs

import "strings"

// RegisterType is the kind of German register an entry lives in.
type RegisterType string

// Register types.
const (
	HRA RegisterType = "HRA" // commercial register, partnerships and sole traders
	HRB RegisterType = "HRB" // commercial register, corporations
	VR  RegisterType = "VR"  // register of associations
	GnR RegisterType = "GnR" // register of cooperatives
	PR  RegisterType = "PR"  // partnership register
	GsR RegisterType = "GsR" // register of civil-law partnerships
)

// RegisterTypes lists every register type.
var RegisterTypes = []RegisterType{HRA, HRB, VR, GnR, PR, GsR}

// RegisterRef is the identity of a register entry: court, optional former
// court, type, number and suffix. Court codes are XJustiz codes as they
// appear in register dumps (e.g. "D2601V" München, "F1103R" Charlottenburg).
type RegisterRef struct {
	Court       string       `json:"court,omitempty"`
	FormerCourt string       `json:"former_court,omitempty"`
	Type        RegisterType `json:"type"`
	Number      string       `json:"number"`
	Suffix      string       `json:"suffix,omitempty"`
}

// Key returns the canonical identity string of the reference, used for
// stable profile ids and exact lookups.
func (r RegisterRef) Key() string {
	return strings.Join([]string{r.Court, r.FormerCourt, string(r.Type), r.Number, r.Suffix}, "|")
}

// NumberKey returns "TYPE NUMBER[ SUFFIX]" without court, e.g. "HRB 53 KI":
// the key under which entries sharing a number are found across courts.
func (r RegisterRef) NumberKey() string {
	s := string(r.Type) + " " + r.Number
	if r.Suffix != "" {
		s += " " + r.Suffix
	}
	return s
}

// String renders the reference the way registers print it, e.g.
// "München HRB 6684" or "Stendal früher Bitterfeld HRB 573".
func (r RegisterRef) String() string {
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

// ParseRegisterRef parses a complete register reference in any notation
// people write: "HRB 6684", "HRB6684", "HR B 6684", "Amtsgericht München HRB
// 6684", "München, HRB 6684", "HRB 6684 München", "HRB 158855 B", "Kiel HRB
// 53 KI", "Oldenburg (Oldenburg) früher Varel HRB 53". The court is optional
// (Court stays empty); an unknown court name gives ErrUnknownCourt.
func ParseRegisterRef(s string) (RegisterRef, error) { return RegisterRef{}, ErrRegisterRef }

// FindRegisterRef looks for a register reference inside free text such as
// "Müller GmbH HRB 6684 München" and returns it with the text that remains
// once the reference (and the court, if one was recognised) is cut out.
func FindRegisterRef(text string) (ref RegisterRef, rest string, ok bool) {
	return RegisterRef{}, text, false
}

// ParseCompanyNumber parses an OffeneRegister company_number: court code,
// optional former-court code, type, number and optional suffix, e.g.
// "B1204_HRB260632", "W1215_W1104_HRB573", "X1517R_HRB53KI".
func ParseCompanyNumber(s string) (RegisterRef, error) { return RegisterRef{}, ErrRegisterRef }

// ParseRegisterType accepts a register type in any case or spacing ("HRB",
// "hrb", "HR B", "GnR", "GenR", "PR", "PartR", "VR", "GsR").
func ParseRegisterType(s string) (RegisterType, bool) { return "", false }
