package ingest

import (
	"strings"
	"unicode"

	"companydocs"
)

// cleanText is the one cleaning of every text field a dump brings in
// (names, former names, seat, address, officers, GLEIF legal name and
// city), for every format: it drops the bidirectional controls, then trims
// and collapses runs of white space to one space.
//
// The bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E,
// U+2066 to U+2069, Unicode's Bidi_Control) carry no letter of a German
// register name; they only reorder how the text around them is shown, so
// that a name can display as something it does not contain ("Trojan
// Source"). They are dropped, not turned into spaces: a control inside a
// word does not split it.
func cleanText(s string) string {
	if !needsCleaning(s) {
		return s
	}
	return strings.Join(strings.Fields(strings.Map(dropBidiControl, s)), " ")
}

func dropBidiControl(r rune) rune {
	if unicode.Is(unicode.Bidi_Control, r) {
		return -1
	}
	return r
}

// needsCleaning reports whether cleanText would change s. Plain ASCII
// with single inner spaces, the common case, is returned as it is;
// anything beyond ASCII goes the slow way, since the controls are there.
func needsCleaning(s string) bool {
	prevSpace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		isSpace := c == ' '
		if c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c >= 0x80 || (isSpace && prevSpace) {
			return true
		}
		prevSpace = isSpace
	}
	return prevSpace && len(s) > 0
}

// cleanOfficers cleans the text fields of officers a canonical file
// carries as they are (the OffeneRegister reader builds its officers from
// cleaned fields).
func cleanOfficers(officers []companydocs.Officer) []companydocs.Officer {
	for i := range officers {
		o := &officers[i]
		o.Name, o.FirstName, o.LastName = cleanText(o.Name), cleanText(o.FirstName), cleanText(o.LastName)
		o.Position, o.City = cleanText(o.Position), cleanText(o.City)
	}
	return officers
}

// cleanNames cleans a list of names and drops those left empty.
func cleanNames(names []string) []string {
	out := names[:0]
	for _, n := range names {
		if n = cleanText(n); n != "" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// cleanLEILinks cleans the legal names of the LEI links a canonical file
// carries.
func cleanLEILinks(links []companydocs.LEILink) []companydocs.LEILink {
	for i := range links {
		links[i].LegalName = cleanText(links[i].LegalName)
	}
	return links
}
