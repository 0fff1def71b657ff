package textfold

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// umlautVowel stands in for ä, ö and ü: a vowel, and not one of the letters
// after which C sounds like K ("Cäsar" -> "887").
var umlautVowel = strings.NewReplacer("ä", "e", "ö", "e", "ü", "e", "Ä", "e", "Ö", "e", "Ü", "e")

// Phonetic returns the Kölner Phonetik code of a token: names that sound
// alike in German get the same digits ("Meier", "Mayer", "Maier" -> "67").
// Letters other than A-Z after folding are ignored.
func Phonetic(token string) string {
	letters := phoneticLetters(token)
	if len(letters) == 0 {
		return ""
	}
	raw := make([]byte, 0, len(letters)+2)
	for i, c := range letters {
		var prev, next byte
		if i > 0 {
			prev = letters[i-1]
		}
		if i+1 < len(letters) {
			next = letters[i+1]
		}
		raw = append(raw, phoneticCode(c, prev, next, i == 0)...)
	}
	return collapsePhonetic(raw)
}

// phoneticLetters folds the token (umlauts to a plain vowel, ß -> ss, other
// diacritics dropped) and keeps its letters A-Z, upper-cased.
func phoneticLetters(token string) []byte {
	folded := FoldPlain(umlautVowel.Replace(norm.NFC.String(token)))
	out := make([]byte, 0, len(folded))
	for i := 0; i < len(folded); i++ {
		if c := folded[i]; 'a' <= c && c <= 'z' {
			out = append(out, c-'a'+'A')
		}
	}
	return out
}

// plainPhonetic is the code of each letter (A-Z) whose code does not
// depend on its neighbours.
var plainPhonetic = [128]string{
	'A': "0", 'E': "0", 'I': "0", 'J': "0", 'O': "0", 'U': "0", 'Y': "0",
	'B': "1",
	'F': "3", 'V': "3", 'W': "3",
	'G': "4", 'K': "4", 'Q': "4",
	'L': "5",
	'M': "6", 'N': "6",
	'R': "7",
	'S': "8", 'Z': "8",
}

// phoneticCode is the code of letter c (A-Z) given its neighbours; "" for H.
func phoneticCode(c, prev, next byte, first bool) string {
	switch c {
	case 'P':
		if next == 'H' {
			return "3"
		}
		return "1"
	case 'D', 'T':
		if strings.IndexByte("CSZ", next) >= 0 && next != 0 {
			return "8"
		}
		return "2"
	case 'C':
		return phoneticC(prev, next, first)
	case 'X':
		if prev != 0 && strings.IndexByte("CKQ", prev) >= 0 {
			return "8"
		}
		return "48"
	}
	return plainPhonetic[c]
}

// phoneticC codes C, which sounds like K before back vowels and some
// consonants and like S otherwise.
func phoneticC(prev, next byte, first bool) string {
	if first {
		if next != 0 && strings.IndexByte("AHKLOQRUX", next) >= 0 {
			return "4"
		}
		return "8"
	}
	if prev != 0 && strings.IndexByte("SZ", prev) >= 0 {
		return "8"
	}
	if next != 0 && strings.IndexByte("AHKOQUX", next) >= 0 {
		return "4"
	}
	return "8"
}

// collapsePhonetic merges runs of the same digit and drops every "0" but a
// leading one.
func collapsePhonetic(raw []byte) string {
	var b strings.Builder
	var last byte
	for i, d := range raw {
		if i > 0 && d == last {
			continue
		}
		last = d
		if d == '0' && b.Len() > 0 {
			continue
		}
		b.WriteByte(d)
	}
	return b.String()
}
