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
// The abbreviations of company names as lists write them are spelled out
// (abbreviations): "Gebr." -> "gebrueder", "StBG" ->
// "steuerberatungsgesellschaft", so that a name and its abbreviated
// spelling fold alike, in the index and in a query.
func Fold(s string) string { return fold(s, true) }

// FoldPlain is Fold with umlauts reduced to their base letter (ä -> a): the
// spelling of people who type without umlauts and without transliteration.
func FoldPlain(s string) string { return fold(s, false) }

// Tokens splits a folded string into tokens.
func Tokens(folded string) []string { return strings.Fields(folded) }

// fold implements Fold and FoldPlain. It writes letters and digits into
// the current token, cuts tokens at everything else, and writes each token
// to the output as it ends, spelling "und" and "u." as "&". It runs for
// every name of every candidate a search scores, so it allocates only the
// result: the current token lives in a stack buffer, and the common
// precomposed letters are decomposed from a table instead of by norm.
func fold(s string, transliterate bool) string {
	if !isASCII(s) {
		s = strings.ToValidUTF8(s, " ")
		if !latinOnly(s) {
			// norm decomposes what the table does not know
			s = norm.NFD.String(s)
		}
	}
	f := folder{transliterate: transliterate}
	f.out.Grow(len(s))
	f.cur = f.scratch[:0]
	for _, r := range s {
		if r < utf8.RuneSelf {
			f.rune(r)
			continue
		}
		if d, ok := latinDecomposed[r]; ok {
			for _, dr := range d {
				f.rune(dr)
			}
			continue
		}
		f.rune(r)
	}
	f.flush()
	f.flushPending()
	return f.out.String()
}

// folder is the state of one fold.
type folder struct {
	transliterate bool
	out           strings.Builder
	cur           []byte // the token being read
	scratch       [64]byte
	// pendingRA is set while a token "ra" is held back (emit)
	pendingRA bool
}

func (f *folder) rune(r rune) {
	switch {
	case r < utf8.RuneSelf && ('a' <= r && r <= 'z' || '0' <= r && r <= '9'):
		f.cur = append(f.cur, byte(r))
	case r < utf8.RuneSelf && 'A' <= r && r <= 'Z':
		f.cur = append(f.cur, byte(r)+'a'-'A')
	case r == combiningDiaeresis:
		if f.transliterate && endsWithUmlautBase(f.cur) {
			f.cur = append(f.cur, 'e')
		}
	case r == '&' || r == '+':
		f.flush()
		f.emit(ampersandToken)
	case r == '.':
		f.dot()
	case isApostrophe(r):
		// dropped so that "Müller's" stays one token
	case r >= utf8.RuneSelf && unicode.Is(unicode.Mn, r):
		// other diacritics: dropped
	case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
		f.cur = appendFoldedRune(f.cur, r)
	default:
		f.flush()
	}
}

// flush ends the current token.
func (f *folder) flush() {
	if len(f.cur) > 0 {
		f.emit(f.cur)
		f.cur = f.cur[:0]
	}
}

// dot ends the current token at a dot: "u." is "&", an abbreviation
// with a dot ("Gebr.") is spelled out, "RA-Ges." becomes one word.
func (f *folder) dot() {
	if string(f.cur) == "u" {
		f.cur = f.cur[:0]
		f.emit(ampersandToken)
		return
	}
	words, ok := dotAbbreviations[string(f.cur)]
	if !ok {
		f.flush()
		return
	}
	// the token before "Ges." was "ra" only if nothing came between
	// (pendingRA is cleared by every emit)
	f.cur = f.cur[:0]
	if f.pendingRA && string(words[0]) == "gesellschaft" {
		f.pendingRA = false
		f.emit(lawFirm[f.spelling()])
		return
	}
	f.emit(words[f.spelling()])
}

// spelling is the index into an abbreviation's spellings: transliterated
// or plain (ü -> ue or u).
func (f *folder) spelling() int {
	if f.transliterate {
		return 0
	}
	return 1
}

func (f *folder) emit(tok []byte) {
	if string(tok) == "ra" && !f.pendingRA {
		// held back: "RA-Ges." is one word
		f.pendingRA = true
		return
	}
	f.flushPending()
	if f.out.Len() > 0 {
		f.out.WriteByte(' ')
	}
	switch {
	case string(tok) == "und":
		tok = ampersandToken
	case len(tok) == 3 || len(tok) == 4:
		if words, ok := acronyms[string(tok)]; ok {
			tok = words[f.spelling()]
		}
	}
	f.out.Write(tok)
}

// flushPending writes a held-back "ra".
func (f *folder) flushPending() {
	if !f.pendingRA {
		return
	}
	f.pendingRA = false
	if f.out.Len() > 0 {
		f.out.WriteByte(' ')
	}
	f.out.WriteString("ra")
}

// dotAbbreviations are the abbreviations of company names that lists
// write with a dot, by their folded letters: each spelled out
// transliterated (Fold) and plain (FoldPlain). Without the dot the letters
// stay as they are: they may be the start of a word being typed ("Verw"
// of "Verwertung"). "u." is "&" (fold).
var dotAbbreviations = map[string][2][]byte{
	"ges":    {[]byte("gesellschaft"), []byte("gesellschaft")},
	"verw":   {[]byte("verwaltung"), []byte("verwaltung")},
	"gebr":   {[]byte("gebrueder"), []byte("gebruder")},
	"grdst":  {[]byte("grundstuecks"), []byte("grundstucks")},
	"beteil": {[]byte("beteiligungs"), []byte("beteiligungs")},
	"immob":  {[]byte("immobilien"), []byte("immobilien")},
	"dt":     {[]byte("deutsche"), []byte("deutsche")},
	"int":    {[]byte("international"), []byte("international")},
}

// acronyms are the abbreviations written without dots, spelled out
// wherever they stand.
var acronyms = map[string][2][]byte{
	"stbg": {[]byte("steuerberatungsgesellschaft"), []byte("steuerberatungsgesellschaft")},
	"wpg":  {[]byte("wirtschaftspruefungsgesellschaft"), []byte("wirtschaftsprufungsgesellschaft")},
}

// lawFirm is "RA-Ges." spelled out.
var lawFirm = [2][]byte{[]byte("rechtsanwaltsgesellschaft"), []byte("rechtsanwaltsgesellschaft")}

var ampersandToken = []byte(ampersand)

// appendFoldedRune appends the lower-case form of r, spelling out the
// letters that have no decomposition.
func appendFoldedRune(b []byte, r rune) []byte {
	switch r {
	case 'ß', 'ẞ':
		return append(b, "ss"...)
	case 'Æ', 'æ':
		return append(b, "ae"...)
	case 'Œ', 'œ':
		return append(b, "oe"...)
	case 'Ø', 'ø':
		return append(b, 'o')
	case 'Ł', 'ł':
		return append(b, 'l')
	case 'Đ', 'đ':
		return append(b, 'd')
	case 'ı':
		return append(b, 'i')
	}
	return utf8.AppendRune(b, unicode.ToLower(r))
}

// latinDecomposed holds the canonical decomposition (NFD) of the
// precomposed letters of Latin-1 and Latin Extended-A, which is nearly every
// non-ASCII letter in German register names, so that fold need not run
// norm over the whole name. The table is made by norm itself.
var latinDecomposed = func() map[rune]string {
	m := map[rune]string{}
	for r := rune(0xC0); r <= 0x17F; r++ {
		if d := norm.NFD.String(string(r)); d != string(r) {
			m[r] = d
		}
	}
	return m
}()

// latinOnly reports whether decomposing s rune by rune through
// latinDecomposed gives its NFD: every non-ASCII rune is a Latin letter
// or ß, and no combining mark follows one (norm would reorder the marks).
func latinOnly(s string) bool {
	for _, r := range s {
		if r < utf8.RuneSelf {
			continue
		}
		if _, ok := latinDecomposed[r]; !ok && !isPlainLatin(r) {
			return false
		}
	}
	return true
}

// isPlainLatin reports whether r is a Latin-1 or Latin Extended-A letter
// without a decomposition (ß, æ, ø, ł, ...), which NFD leaves as it is.
func isPlainLatin(r rune) bool {
	return r >= 0xC0 && r <= 0x17F && unicode.IsLetter(r)
}

func endsWithUmlautBase(s []byte) bool {
	if len(s) == 0 {
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
