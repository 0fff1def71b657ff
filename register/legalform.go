package register

import (
	"sort"
	"strings"
	"sync"

	"companydocs/textfold"
)

// LegalForm is a recognised legal form.
type LegalForm struct {
	// Code is the canonical short form, e.g. "GmbH & Co. KG", "e.V.".
	Code string
	// Words is the folded token sequence that matched, e.g. ["gmbh","&","co","kg"].
	Words []string
}

// SplitLegalForm recognises the legal form in a company name (every spelling
// that occurs in the registers, longest first: "GmbH & Co. KG" before
// "GmbH") and returns the folded name tokens without it and the form.
//
// The form is looked for at the end of the name first; failing that, the
// longest spelling anywhere in the name counts ("Müller GmbH
// Zweigniederlassung Köln"), except that short spellings such as "AG" or "KG"
// never count as the first word of a name ("AG Wohnen").
func SplitLegalForm(name string) (base []string, form LegalForm, ok bool) {
	toks := textfold.Tokens(textfold.Fold(name))
	start, end, code, ok := findLegalForm(toks)
	if !ok {
		return toks, LegalForm{}, false
	}
	base = make([]string, 0, len(toks)-(end-start))
	base = append(base, toks[:start]...)
	base = append(base, toks[end:]...)
	words := append([]string(nil), toks[start:end]...)
	return base, LegalForm{Code: code, Words: words}, true
}

// NameKey is the normalised name used for exact name matches: folded,
// legal form replaced by its canonical code. "Müller GmbH" and "MUELLER
// G.m.b.H." share the key "mueller|GmbH"; a name without a recognised form
// ends in "|".
func NameKey(name string) string {
	base, form, _ := SplitLegalForm(name)
	return strings.Join(base, " ") + "|" + form.Code
}

// findLegalForm returns the token range [start, end) and code of the legal
// form in toks.
func findLegalForm(toks []string) (start, end int, code string, ok bool) {
	forms := legalForms()
	// the spellings are looked up by their joined tokens, joined in a
	// stack buffer: this runs for every name of every candidate scored
	var buf [64]byte
	// at the end: the earliest start gives the longest spelling
	for i := max(0, len(toks)-forms.maxLen); i < len(toks); i++ {
		if !forms.first[toks[i]] {
			continue // no spelling starts here: spare the join
		}
		if code, ok := forms.exact[string(joinTokens(buf[:0], toks[i:]))]; ok {
			return i, len(toks), code, true
		}
	}
	// anywhere: the longest spelling, the last one on ties
	best := -1
	for i := range toks {
		if !forms.first[toks[i]] {
			continue
		}
		for n := min(forms.maxLen, len(toks)-i); n >= 1; n-- {
			c, ok := forms.exact[string(joinTokens(buf[:0], toks[i:i+n]))]
			if !ok || i == 0 && n == 1 && len(toks[0]) <= 3 || n == 1 && amtsgerichtAfterForm(toks, i) {
				continue
			}
			if n >= best {
				best, start, end, code = n, i, i+n, c
			}
			break
		}
	}
	return start, end, code, best > 0
}

// amtsgerichtAfterForm reports whether the "ag" at token i follows
// another legal form ("Müller GmbH AG Marburg"): there it is the
// Amtsgericht of a court's name, not a second form.
func amtsgerichtAfterForm(toks []string, i int) bool {
	return toks[i] == "ag" && i > 0 && legalFormEnds()[toks[i-1]]
}

// joinTokens appends toks to dst, separated by spaces, as strings.Join.
func joinTokens(dst []byte, toks []string) []byte {
	for i, t := range toks {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, t...)
	}
	return dst
}

// legalFormSpellings maps each canonical code to the spellings that occur
// in the registers (see offeneregister_legal_form_suffix_freq.csv and
// offeneregister_name_last_token_freq.csv in the shared data). Spellings are
// folded before use, so "G.m.b.H." stands for "GmbH.", "g m b h" and so on;
// "Ges. mbH" and "Ges.m.b.H." fold as "Gesellschaft mbH" and "Gesellschaft
// m.b.H." do (Fold spells "Ges." out), whose "Gesellschaft" is the name's.
var legalFormSpellings = map[string][]string{
	"GmbH": {"GmbH", "mbH", "G.m.b.H.", "m.b.H.", "Gesellschaft mit beschränkter Haftung",
		"Gesellschaft mit beschraenkter Haftung", "Gesellschaft mit beschrankter Haftung",
		"Gesellschaft mit beschränkterHaftung", "GesmbH",
		"mit beschränkter Haftung", "mit beschraenkter Haftung"},
	"gGmbH": {"gGmbH", "gemeinnützige GmbH", "gemeinnützige Gesellschaft mit beschränkter Haftung", "gemeinnützige mbH"},
	"UG (haftungsbeschränkt)": {"UG (haftungsbeschränkt)", "UG (haftungsbeschrankt)", "UG",
		"Unternehmergesellschaft (haftungsbeschränkt)", "Unternehmergesellschaft (haftungsbeschrankt)",
		"Unternehmergesellschaft", "UG (haftungsbeschränkt) i.G."},
	"AG":    {"AG", "Aktiengesellschaft", "A.G."},
	"SE":    {"SE", "Societas Europaea", "Europäische Gesellschaft"},
	"KGaA":  {"KGaA", "Kommanditgesellschaft auf Aktien", "K.G.a.A."},
	"KG":    {"KG", "K.G.", "Kommanditgesellschaft", "Kommandit-Gesellschaft", "K.-G."},
	"OHG":   {"OHG", "oHG", "O.H.G.", "offene Handelsgesellschaft", "offene Handels-Gesellschaft"},
	"e.K.":  {"e.K.", "eK", "e.Kfm.", "e.Kfr.", "e.Kfrau", "eingetragener Kaufmann", "eingetragene Kauffrau", "e.Kaufmann", "e.Kauffrau"},
	"e.V.":  {"e.V.", "eV", "eingetragener Verein"},
	"eG":    {"eG", "e.G.", "eingetragene Genossenschaft", "eGmbH", "eG mbH", "e.G.m.b.H.", "eingetragene Genossenschaft mit beschränkter Haftpflicht", "Genossenschaft mit beschränkter Haftpflicht", "eGmuH", "eGenossenschaft"},
	"PartG": {"PartG", "Partnerschaftsgesellschaft", "Partnerschaft"},
	"PartG mbB": {"PartG mbB", "PartGmbB", "PartmbB", "Part mbB", "mbB", "Partnerschaftsgesellschaft mbB",
		"Partnerschaft mbB", "Partnerschaftsgesellschaft mit beschränkter Berufshaftung",
		"Partnerschaft mit beschränkter Berufshaftung", "mit beschränkter Berufshaftung"},
	"VVaG":     {"VVaG", "V.V.a.G.", "Versicherungsverein auf Gegenseitigkeit"},
	"Stiftung": {"Stiftung"},
	"GbR":      {"GbR", "Gesellschaft bürgerlichen Rechts", "Gesellschaft des bürgerlichen Rechts", "eGbR"},
	"EWIV":     {"EWIV"},
	"KdöR":     {"KdöR", "Körperschaft des öffentlichen Rechts"},
	"AöR":      {"AöR", "Anstalt des öffentlichen Rechts"},
	"Ltd.":     {"Ltd.", "Limited"},
	"B.V.":     {"B.V.", "BV"},
	"N.V.":     {"N.V."},
	"S.à r.l.": {"S.à r.l.", "SARL", "S.a.r.l."},
	"Inc.":     {"Inc.", "Incorporated"},
	"LLC":      {"LLC", "L.L.C."},
	"plc":      {"plc", "p.l.c."},
	"Corp.":    {"Corp.", "Corporation"},
}

// coPartners are the forms of the general partner in "X & Co. KG"; the key
// is the code the combined form gets.
var coPartners = map[string][]string{
	"GmbH":                    {"GmbH", "mbH", "G.m.b.H.", "m.b.H.", "Gesellschaft mit beschränkter Haftung"},
	"UG (haftungsbeschränkt)": {"UG (haftungsbeschränkt)", "UG (haftungsbeschrankt)", "UG", "Unternehmergesellschaft (haftungsbeschränkt)"},
	"AG":                      {"AG", "Aktiengesellschaft"},
	"SE":                      {"SE"},
	"Stiftung":                {"Stiftung"},
	"Ltd.":                    {"Ltd.", "Limited"},
	"eG":                      {"eG"},
	"KGaA":                    {"KGaA"},
	"B.V.":                    {"B.V."},
}

// coJoiners link the general partner to the partnership form.
var coJoiners = []string{"& Co.", "& Cie.", "Co.", "& Co", "& Compagnie"}

// coForms are the partnership forms a "& Co." form ends in.
var coForms = map[string][]string{
	"KG":   {"KG", "K.G.", "Kommanditgesellschaft", "Kommandit-Gesellschaft"},
	"OHG":  {"OHG", "oHG", "O.H.G.", "offene Handelsgesellschaft"},
	"KGaA": {"KGaA", "Kommanditgesellschaft auf Aktien"},
}

// legalFormIndex holds the folded spellings of all legal forms.
type legalFormIndex struct {
	exact  map[string]string // folded spelling -> code
	first  map[string]bool   // first tokens of all spellings
	maxLen int               // tokens of the longest spelling
}

var legalForms = sync.OnceValue(func() *legalFormIndex {
	idx := &legalFormIndex{exact: map[string]string{}, first: map[string]bool{}}
	add := func(spelling, code string) {
		key := textfold.Fold(spelling)
		if _, dup := idx.exact[key]; !dup {
			idx.exact[key] = code
		}
		toks := textfold.Tokens(key)
		idx.first[toks[0]] = true
		idx.maxLen = max(idx.maxLen, len(toks))
	}
	for _, code := range sortedKeys(coPartners) {
		for _, partner := range coPartners[code] {
			for _, joiner := range coJoiners {
				for _, formCode := range sortedKeys(coForms) {
					for _, f := range coForms[formCode] {
						add(partner+" "+joiner+" "+f, code+" & Co. "+formCode)
					}
				}
			}
		}
	}
	for _, code := range sortedKeys(legalFormSpellings) {
		for _, s := range legalFormSpellings[code] {
			add(s, code)
		}
	}
	return idx
})

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
