package textfold

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
	for _, r := range s {
		if r < utf8.RuneSelf {
			f.asciiRune(byte(r))
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
	cur           foldToken // the token being read
	// pendingRA is set while a token "ra" is held back (emit)
	pendingRA bool
}

// rune adds one rune of the decomposed name to the fold. ASCII, nearly
// every rune of a register name, is told apart by byte comparisons alone
// (asciiRune); only the rest consults the Unicode tables (otherRune).
func (f *folder) rune(r rune) {
	if r < utf8.RuneSelf {
		f.asciiRune(byte(r))
		return
	}
	f.otherRune(r)
}

// asciiRune adds an ASCII character: letters and digits join the token
// (lower-cased), "&" and "+" are the token "&", a dot may end an
// abbreviation (dot), apostrophes vanish, everything else cuts the token.
func (f *folder) asciiRune(c byte) {
	switch {
	case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
		f.cur.add(c)
	case 'A' <= c && c <= 'Z':
		f.cur.add(c + 'a' - 'A')
	case c == '&' || c == '+':
		f.flush()
		f.emit(ampersandToken)
	case c == '.':
		f.dot()
	case isApostrophe(rune(c)):
		// dropped so that "Müller's" stays one token
	default:
		f.flush()
	}
}

// otherRune adds a non-ASCII rune: the diaeresis NFD split off an umlaut
// becomes "e" when transliterating, other combining marks and the
// typographic apostrophes vanish, letters and digits join the token
// folded, everything else cuts the token.
func (f *folder) otherRune(r rune) {
	switch {
	case r == combiningDiaeresis:
		if f.transliterate && endsWithUmlautBase(f.cur.bytes()) {
			f.cur.add('e')
		}
	case isApostrophe(r):
		// dropped so that "Müller’s" stays one token
	case unicode.Is(unicode.Mn, r):
		// other diacritics: dropped
	case unicode.IsLetter(r) || unicode.IsDigit(r):
		f.cur.addFolded(r)
	default:
		f.flush()
	}
}

// flush ends the current token.
func (f *folder) flush() {
	if tok := f.cur.bytes(); len(tok) > 0 {
		f.emit(tok)
		f.cur.reset()
	}
}

// dot ends the current token at a dot: "u." is "&", an abbreviation
// with a dot ("Gebr.") is spelled out, "RA-Ges." becomes one word.
func (f *folder) dot() {
	if string(f.cur.bytes()) == "u" {
		f.cur.reset()
		f.emit(ampersandToken)
		return
	}
	words, ok := dotAbbreviations[string(f.cur.bytes())]
	if !ok {
		f.flush()
		return
	}
	// the token before "Ges." was "ra" only if nothing came between
	// (pendingRA is cleared by every emit)
	f.cur.reset()
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

// foldToken is the token being read. Its letters live in an array inside the
// folder, not behind a slice into it: a pointer from the folder into
// itself moved every fold's state to the heap (escape analysis cannot
// follow it), one allocation per name scored. A token longer than the
// array, rare, continues on the heap.
type foldToken struct {
	short [64]byte
	n     int
	long  []byte
}

func (t *foldToken) add(c byte) {
	switch {
	case t.long != nil:
		t.long = append(t.long, c)
	case t.n < len(t.short):
		t.short[t.n] = c
		t.n++
	default:
		t.long = append(append(make([]byte, 0, 2*len(t.short)), t.short[:t.n]...), c)
	}
}

func (t *foldToken) addString(s string) {
	for i := 0; i < len(s); i++ {
		t.add(s[i])
	}
}

func (t *foldToken) bytes() []byte {
	if t.long != nil {
		return t.long
	}
	return t.short[:t.n]
}

func (t *foldToken) reset() { t.n, t.long = 0, nil }

// addFolded adds the lower-case form of r, spelling out the letters that
// have no decomposition.
func (t *foldToken) addFolded(r rune) {
	switch r {
	case 'ß', 'ẞ':
		t.addString("ss")
	case 'Æ', 'æ':
		t.addString("ae")
	case 'Œ', 'œ':
		t.addString("oe")
	case 'Ø', 'ø':
		t.add('o')
	case 'Ł', 'ł':
		t.add('l')
	case 'Đ', 'đ':
		t.add('d')
	case 'ı':
		t.add('i')
	default:
		var b [utf8.UTFMax]byte
		for _, c := range utf8.AppendRune(b[:0], unicode.ToLower(r)) {
			t.add(c)
		}
	}
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
