package companydocs

// LEI is a Legal Entity Identifier (ISO 17442) in canonical form: 20
// upper-case characters whose ISO 7064 mod 97-10 checksum holds.
type LEI string

// ParseLEI accepts an LEI in any common spelling (lower case, spaces or
// hyphens inside) and returns its canonical form. A string of the right
// shape whose checksum fails gives ErrLEIChecksum.
func ParseLEI(s string) (LEI, error) { return "", ErrLEIFormat }

// LooksLikeLEI reports whether s has the shape of an LEI (20 letters and
// digits once spaces and hyphens are removed), whatever its checksum.
func LooksLikeLEI(s string) bool { return false }
