package companydocs

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// ampersand is the token every spelling of "and" folds to.
const ampersand = "&"

// combiningDiaeresis is the mark NFD splits off ä, ö and ü.
const combiningDiaeresis = '\u0308'

// Fold lower-cases s, transliterates umlauts the German way (ä -> ae, ö -> oe,
// ü -> ue, ß -> ss), strips other diacritics, turns punctuation into spaces,
// normalises "und", "u." and "+" to "&" and collapses white space.
// Apostrophes are dropped rather than spaced ("McDonald's" -> "mcdonalds").
func Fold(s string) string { return fold(s, true) }

// FoldPlain is Fold with umlauts reduced to their base letter (ä -> a): the
// spelling of people who type without umlauts and without transliteration.
func FoldPlain(s string) string { return fold(s, false) }

// Tokens splits a folded string into tokens.
func Tokens(folded string) []string { return strings.Fields(folded) }

// fold implements Fold and FoldPlain. It writes letters and digits into
// the current token, cuts tokens at everything else, and writes each token
// to the output as it ends, spelling "und" and "u." as "&". It runs once per
// name and query, so it writes straight into one builder.
func fold(s string, transliterate bool) string {
	if !isASCII(s) {
		// invalid bytes would stop norm from decomposing what follows them
		s = norm.NFD.String(strings.ToValidUTF8(s, " "))
	}
	var out, cur strings.Builder
	out.Grow(len(s))
	emit := func(tok string) {
		if out.Len() > 0 {
			out.WriteByte(' ')
		}
		if tok == "und" {
			tok = ampersand
		}
		out.WriteString(tok)
	}
	flush := func() {
		if cur.Len() > 0 {
			emit(cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == combiningDiaeresis:
			if transliterate && endsWithUmlautBase(cur.String()) {
				cur.WriteByte('e')
			}
		case unicode.Is(unicode.Mn, r):
			// other diacritics: dropped
		case r == '&' || r == '+':
			flush()
			emit(ampersand)
		case r == '.' && cur.String() == "u":
			cur.Reset()
			emit(ampersand)
		case isApostrophe(r):
			// dropped so that "Müller's" stays one token
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			writeFoldedRune(&cur, r)
		default:
			flush()
		}
	}
	flush()
	return out.String()
}

// writeFoldedRune writes the lower-case form of r, spelling out the letters
// that have no decomposition.
func writeFoldedRune(b *strings.Builder, r rune) {
	switch r {
	case 'ß', 'ẞ':
		b.WriteString("ss")
	case 'Æ', 'æ':
		b.WriteString("ae")
	case 'Œ', 'œ':
		b.WriteString("oe")
	case 'Ø', 'ø':
		b.WriteByte('o')
	case 'Ł', 'ł':
		b.WriteByte('l')
	case 'Đ', 'đ':
		b.WriteByte('d')
	case 'ı':
		b.WriteByte('i')
	default:
		b.WriteRune(unicode.ToLower(r))
	}
}

func endsWithUmlautBase(s string) bool {
	if s == "" {
		return false
	}
	switch s[len(s)-1] {
	case 'a', 'o', 'u':
		return true
	}
	return false
}

func isApostrophe(r rune) bool {
	return r == '\'' || r == '’' || r == '‘' || r == '`' || r == '´'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
