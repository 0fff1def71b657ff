package register

import "strings"

// This file is the one home of register identity: when two court codes
// name the same court, what a suffix written after the number means, and
// when a reference names an entry. The reference scanner, the resolver and
// the GLEIF linking of the ingest all ask these functions; a second copy
// of any of these rules would drift.

// courtMarkerSuffixes are letters people and GLEIF records write after the
// number that name the court rather than the entry: the register dumps do
// not keep them ("HRB 158855 B" is "Berlin (Charlottenburg) HRB 158855").
var courtMarkerSuffixes = map[string]string{
	"B": "F1103R", "HB": "H1101", "CB": "G1103", "NP": "G1309", "P": "G1312", "FF": "G1207",
}

// suffixIdentityState is the federal state whose registers keep a suffix as
// part of an entry's identity: the Schleswig-Holstein courts number each
// former court's entries on their own, so "Kiel HRB 53 KI" and "Kiel HRB 53
// RD" are different companies. No other register in the dumps has a suffix.
const suffixIdentityState = "Schleswig-Holstein"

// CourtOfMarker returns the court a court-marker suffix names ("B" names
// Berlin (Charlottenburg), "HB" Bremen); ok is false for any other suffix.
func CourtOfMarker(suffix string) (court string, ok bool) {
	court, ok = courtMarkerSuffixes[strings.ToUpper(suffix)]
	return court, ok
}

// SameCourt reports whether two XJustiz codes name the same court: codes
// with and without the register letter ("D2601" and "D2601V") and the
// alternative codes of the court table are one court. Two empty codes are
// the same (no court); an empty and a set code are not.
func SameCourt(a, b string) bool {
	return courtIdentity(a) == courtIdentity(b)
}

// courtIdentity is the canonical code of a court; an unknown code loses
// only its register letter.
func courtIdentity(code string) string {
	code = strings.ToUpper(strings.TrimSpace(code))
	if c, ok := CourtByCode(code); ok {
		return c.Code
	}
	return baseCourtCode(code)
}

// SuffixIsIdentity reports whether at court a suffix is part of an entry's
// identity. It is at the Schleswig-Holstein courts, and at a court the table
// does not know (a suffix that might tell entries apart is never ignored).
func SuffixIsIdentity(court string) bool {
	c, ok := CourtByCode(court)
	return !ok || c.State == suffixIdentityState
}

// SuffixesAgree reports whether suffixes a and b, written for entries at
// court, can belong to the same entry. Where the suffix is identity they
// must be equal, and a missing suffix agrees only with a missing one.
// Elsewhere the registers keep no suffix: what people write there ("B"
// at Charlottenburg) names the court, and any two agree.
func SuffixesAgree(court, a, b string) bool {
	return strings.EqualFold(a, b) || !SuffixIsIdentity(court)
}

// Names reports whether the reference q, as a client or another register
// wrote it, names the entry e. q may leave out the court, the former court
// or the suffix where it is no identity; the type and number must be equal.
// A court or former court that q gives must be e's.
func (q Ref) Names(e Ref) bool {
	switch {
	case q.Type != e.Type || q.Number != e.Number:
		return false
	case q.Court != "" && !SameCourt(q.Court, e.Court):
		return false
	case q.FormerCourt != "" && !SameCourt(q.FormerCourt, e.FormerCourt):
		return false
	}
	return SuffixesAgree(e.Court, q.Suffix, e.Suffix)
}

// SameEntry reports whether two complete references, as registers write
// them, are one entry: same court and former court, type, number, and
// suffixes that agree at that court.
func (r Ref) SameEntry(o Ref) bool {
	return SameCourt(r.Court, o.Court) && SameCourt(r.FormerCourt, o.FormerCourt) &&
		r.Type == o.Type && r.Number == o.Number && SuffixesAgree(r.Court, r.Suffix, o.Suffix)
}
