package bench

import (
	"math/rand/v2"
	"strings"

	"companydocs/register"
)

// formSpellings are the other spellings a client may use for a legal form.
var formSpellings = map[string][]string{
	"GmbH":                    {"Gesellschaft mit beschränkter Haftung", "mbH", "G.m.b.H.", "gmbh"},
	"e.V.":                    {"eV", "e. V.", "eingetragener Verein"},
	"KG":                      {"Kommanditgesellschaft", "K.G."},
	"AG":                      {"Aktiengesellschaft"},
	"GmbH & Co. KG":           {"GmbH & Co KG", "GmbH u. Co. KG", "GmbH&Co.KG", "Gesellschaft mit beschränkter Haftung & Co. KG"},
	"UG (haftungsbeschränkt)": {"UG", "UG haftungsbeschränkt", "Unternehmergesellschaft (haftungsbeschränkt)"},
	"e.K.":                    {"e.Kfm.", "eingetragener Kaufmann", "eK"},
	"eG":                      {"e.G.", "eingetragene Genossenschaft"},
	"OHG":                     {"oHG", "offene Handelsgesellschaft"},
}

// formVariant rewrites the legal form at the end of name in another
// spelling, or drops it; "" when the name ends in no known form.
func formVariant(r *rand.Rand, name string) string {
	base, raw := SplitRawName(name)
	if raw == "" || len(base) == 0 {
		return ""
	}
	_, form, ok := register.SplitLegalForm(raw)
	if !ok {
		return ""
	}
	alts := formSpellings[form.Code]
	choice := r.IntN(len(alts) + 1)
	if choice == len(alts) {
		return strings.Join(base, " ") // no form at all
	}
	if strings.EqualFold(alts[choice], raw) {
		return strings.Join(base, " ")
	}
	return strings.Join(base, " ") + " " + alts[choice]
}

// typo makes one edit (swap, deletion, substitution or insertion) inside
// the longest word of the name before its legal form; "" when no word has
// five letters or more.
func typo(r *rand.Rand, name string) string {
	base, raw := SplitRawName(name)
	best := -1
	for i, w := range base {
		if n := len([]rune(w)); n >= 5 && (best < 0 || n > len([]rune(base[best]))) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	words := append([]string(nil), base...)
	words[best] = editWord(r, words[best])
	if raw != "" {
		words = append(words, raw)
	}
	return strings.Join(words, " ")
}

const typoLetters = "aeinrstlo"

func editWord(r *rand.Rand, w string) string {
	rs := []rune(w)
	p := 1 + r.IntN(len(rs)-2) // never the first or last letter
	switch r.IntN(4) {
	case 0:
		if rs[p] != rs[p+1] {
			rs[p], rs[p+1] = rs[p+1], rs[p]
			return string(rs)
		}
		fallthrough
	case 1:
		return string(append(rs[:p:p], rs[p+1:]...))
	case 2:
		c := rune(typoLetters[r.IntN(len(typoLetters))])
		if c == rs[p] {
			c = 'u'
		}
		rs[p] = c
		return string(rs)
	}
	c := rune(typoLetters[r.IntN(len(typoLetters))])
	return string(rs[:p]) + string(c) + string(rs[p:])
}
