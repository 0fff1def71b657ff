package register

import "strings"

// leiLength is the number of characters of an LEI (ISO 17442).
const leiLength = 20

// LEI is a Legal Entity Identifier (ISO 17442) in canonical form: 20
// upper-case characters whose ISO 7064 mod 97-10 checksum holds.
type LEI string

// ParseLEI accepts an LEI in any common spelling (lower case, spaces or
// hyphens inside) and returns its canonical form. A string of the right
// shape whose checksum fails gives ErrLEIChecksum.
func ParseLEI(s string) (LEI, error) {
	compact, ok := compactLEI(s)
	if !ok {
		return "", ErrLEIFormat
	}
	if leiMod97(compact) != 1 {
		return "", ErrLEIChecksum
	}
	return LEI(compact), nil
}

// LooksLikeLEI reports whether s has the shape of an LEI (20 letters and
// digits once spaces and hyphens are removed, the last two being the check
// digits), whatever its checksum. A 20-letter word is not LEI-shaped.
func LooksLikeLEI(s string) bool {
	_, ok := compactLEI(s)
	return ok
}

// String returns the LEI itself.
func (l LEI) String() string { return string(l) }

// compactLEI upper-cases s and drops spaces, tabs and hyphens; it reports
// whether what remains is 20 ASCII letters and digits ending in two digits
// (the check digits are always numeric).
func compactLEI(s string) (string, bool) {
	if len(s) > 4*leiLength {
		return "", false
	}
	var b strings.Builder
	b.Grow(leiLength)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '-' || c == '\t':
			continue
		case 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			return "", false
		}
		if b.Len() == leiLength {
			return "", false
		}
		b.WriteByte(c)
	}
	out := b.String()
	if len(out) != leiLength || !isDigit(out[18]) || !isDigit(out[19]) {
		return "", false
	}
	return out, true
}

// leiMod97 computes the ISO 7064 mod 97-10 remainder of an upper-case
// alphanumeric string, letters counting as two digits (A=10 ... Z=35).
// A valid LEI gives 1.
func leiMod97(s string) int {
	rem := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
			continue
		}
		v := int(c-'A') + 10
		rem = (rem*100 + v) % 97
	}
	return rem
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
