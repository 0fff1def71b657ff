package textfold

import "strings"

// IsLineBreak reports whether r ends a line of text people paste: line
// feed, carriage return (alone in old Mac files and some mail clients),
// vertical tab, form feed, NEL (U+0085, from EBCDIC and Latin-1 systems),
// and the Unicode line and paragraph separators (U+2028, U+2029); the
// mandatory breaks of Unicode's line breaking rules (UAX #14).
func IsLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', '\u0085', '\u2028', '\u2029':
		return true
	}
	return false
}

// lineBreaks writes every line break as "\n", a CR LF pair as one.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\v", "\n", "\f", "\n", "\u0085", "\n", "\u2028", "\n", "\u2029", "\n")

// NormalizeLineBreaks returns s with every line break (IsLineBreak)
// written as "\n", and a CR LF pair as one.
func NormalizeLineBreaks(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r != '\n' && IsLineBreak(r) }) {
		return s
	}
	return lineBreaks.Replace(s)
}
