package register

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"companydocs/textfold"
)

// Limits of the register reference scanner.
const (
	maxCourtSpan    = 12 // tokens a court name may take: "Rotenburg (Wümme) (Rotenburg/Wümme)" is 10
	maxNumberDigits = 8  // register numbers have at most 7 digits; longer runs are something else
	maxSuffixLen    = 3  // suffixes are 1-3 letters: B, KI, RD, MÖ
)

// notSuffix lists short upper-case words that follow a register number in
// free text without being a suffix: legal forms, register words.
var notSuffix = map[string]bool{
	"AG": true, "KG": true, "UG": true, "EG": true, "OHG": true, "GBR": true, "MBH": true,
	"EV": true, "CO": true, "HR": true, "HRA": true, "HRB": true, "NR": true, "VR": true,
	"PR": true, "GNR": true, "GSR": true, "LTD": true, "INC": true, "LLC": true, "PLC": true,
	"BV": true, "NV": true, "SA": true, "SAS": true, "SRL": true, "SPA": true, "AB": true,
	"AS": true, "OY": true, "UND": true, "DE": true, "EK": true, "IN": true, "AM": true,
	"IM": true, "VOM": true, "DER": true, "DIE": true, "DAS": true, "BEI": true, "MIT": true,
}

// numberFillers may stand between the register type and the number.
var numberFillers = map[string]bool{
	"-": true, ":": true, ".": true, "#": true, "/": true,
	"nr": true, "no": true, "nummer": true, "number": true,
}

// courtFillers may stand between a court name and the register type:
// "Amtsgericht München, Registernummer: HRB 6684", and in English "Local
// Court of Siegburg under HRB 15223", "Local Court Stuttgart /
// Registration number: HRA 728372".
var courtFillers = map[string]bool{
	",": true, ":": true, "-": true, "(": true, ";": true, "/": true,
	"registernummer": true, "registernr": true, "register": true, "handelsregister": true,
	"unter": true, "im": true, "nr": true, ".": true,
	"registration": true, "number": true, "no": true, "under": true, "commercial": true,
}

// formerWords introduce the former court: "Oldenburg (Oldenburg) früher Varel".
var formerWords = map[string]bool{"frueher": true, "fruher": true, "vormals": true, "ehemals": true}

// tokenKind classifies a scanned token.
type tokenKind uint8

const (
	tokWord  tokenKind = iota // letters only
	tokNum                    // digits only
	tokMixed                  // letters and digits
	tokPunct                  // one character that is neither
)

// token is a piece of the scanned text with its byte offsets and, once a
// reference is found, its folded forms for court lookups.
type token struct {
	text        string
	start, end  int
	kind        tokenKind
	fold, plain string
}

// scanTokens cuts s into runs of letters and digits and single punctuation
// characters; white space separates tokens and is dropped.
func scanTokens(s string) []token {
	var toks []token
	start := -1
	letters, digits := false, false
	flush := func(end int) {
		if start < 0 {
			return
		}
		kind := tokMixed
		if !digits {
			kind = tokWord
		} else if !letters {
			kind = tokNum
		}
		toks = append(toks, token{text: s[start:end], start: start, end: end, kind: kind})
		start, letters, digits = -1, false, false
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r) || unicode.IsDigit(r):
			if start < 0 {
				start = i
			}
			if unicode.IsDigit(r) {
				digits = true
			} else {
				letters = true
			}
		case unicode.IsSpace(r):
			flush(i)
		default:
			flush(i)
			toks = append(toks, token{text: s[i : i+size], start: i, end: i + size, kind: tokPunct})
		}
		i += size
	}
	flush(len(s))
	return toks
}

// refMatch is a register reference found in a token list: the reference and
// the token range [start, end) it and its courts take.
type refMatch struct {
	ref        Ref
	start, end int
}

// findRegisterRef returns the first register reference in toks.
func findRegisterRef(toks []token) (refMatch, bool) {
	for i := range toks {
		if m, ok := matchRefAt(toks, i); ok {
			return m, true
		}
	}
	return refMatch{}, false
}

// matchRefAt matches type, number and suffix starting at token i, then the
// courts around them.
func matchRefAt(toks []token, i int) (refMatch, bool) {
	ref, end, ok := matchTypeNumber(toks, i)
	if !ok {
		return refMatch{}, false
	}
	m := refMatch{ref: ref, start: i, end: end}
	before := matchCourtBefore(toks, i)
	after, afterEnd, afterOK := matchCourtAfter(toks, end)
	switch {
	case before.ok && (before.explicit || before.former != "" || !afterOK):
		m.ref.Court, m.ref.FormerCourt, m.start = before.court, before.former, before.start
	case afterOK:
		m.ref.Court, m.end = after, afterEnd
	}
	if court, ok := CourtOfMarker(m.ref.Suffix); ok && (m.ref.Court == "" || SameCourt(m.ref.Court, court)) {
		m.ref.Court, m.ref.Suffix = court, ""
	}
	// the register's label before it is no part of what remains:
	// "Registration number: HRB 2795"
	label := skipBack(toks, m.start, registerLabelWords)
	for label < m.start && toks[label].kind == tokPunct {
		label++ // "e.V. VR 1": the dot is the name's
	}
	m.start = label
	return m, true
}

// matchTypeNumber matches "HRB 6684", "HR B 6684", "HRB-Nr. 6684",
// "HRB6684", "HRB 53 KI", "HRB 53KI", "HRB53KI", "Handelsregister B 6684"
// or "Handelsregister Abteilung B 6684" at token i and returns the index
// after it.
func matchTypeNumber(toks []token, i int) (Ref, int, bool) {
	t := toks[i]
	if t.kind == tokMixed {
		typ, num, suffix, ok := splitGluedRef(t.text)
		return Ref{Type: typ, Number: num, Suffix: suffix}, i + 1, ok
	}
	if t.kind != tokWord {
		return Ref{}, 0, false
	}
	typ, j, ok := matchRegisterType(toks, i)
	if !ok {
		return Ref{}, 0, false
	}
	for j < len(toks) && numberFillers[strings.ToLower(toks[j].text)] {
		j++
	}
	if j >= len(toks) {
		return Ref{}, 0, false
	}
	num, suffix, ok := splitNumberSuffix(toks[j].text)
	if !ok {
		return Ref{}, 0, false
	}
	j++
	if suffix == "" && j < len(toks) && isSuffix(toks[j].text) {
		suffix = toks[j].text
		j++
	}
	return Ref{Type: typ, Number: num, Suffix: suffix}, j, true
}

// matchRegisterType matches the register type at word token i: "HRB",
// "Vereinsregister", or the commercial register and its division apart
// ("HR B", "Handelsregister B", "Handelsregister Abteilung B", "HR Abt.
// A"). It returns the index after it.
func matchRegisterType(toks []token, i int) (Type, int, bool) {
	if typ, ok := ParseType(toks[i].text); ok {
		return typ, i + 1, true
	}
	if w := strings.ToLower(toks[i].text); w != "hr" && w != "handelsregister" {
		return "", 0, false
	}
	j := i + 1
	for j < len(toks) && divisionWords[strings.ToLower(toks[j].text)] {
		j++
	}
	if j >= len(toks) || toks[j].kind != tokWord || len(toks[j].text) != 1 {
		return "", 0, false
	}
	typ, ok := ParseType("HR" + toks[j].text)
	return typ, j + 1, ok
}

// divisionWords stand between the commercial register and its division:
// "Handelsregister Abteilung B", "HR Abt. A".
var divisionWords = map[string]bool{"abteilung": true, "abt": true, ".": true}

// splitGluedRef splits "HRB6684", "HRB53KI" or "GnR53MÖ" into type, number
// and suffix.
func splitGluedRef(s string) (Type, string, string, bool) {
	i := strings.IndexFunc(s, unicode.IsDigit)
	if i <= 0 {
		return "", "", "", false
	}
	typ, ok := ParseType(s[:i])
	if !ok {
		return "", "", "", false
	}
	num, suffix, ok := splitNumberSuffix(s[i:])
	return typ, num, suffix, ok
}

// splitNumberSuffix splits "6684", "0053" or "53KI" into the number without
// leading zeros and the upper-case suffix.
func splitNumberSuffix(s string) (string, string, bool) {
	i := strings.IndexFunc(s, func(r rune) bool { return !('0' <= r && r <= '9') })
	digits, suffix := s, ""
	if i >= 0 {
		digits, suffix = s[:i], s[i:]
		if !isSuffix(suffix) {
			return "", "", false
		}
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" || len(digits) > maxNumberDigits {
		return "", "", false
	}
	return digits, suffix, true
}

// isSuffix reports whether s is 1-3 upper-case letters and not a word that
// merely follows a number ("AG", "KG").
func isSuffix(s string) bool {
	n := 0
	for _, r := range s {
		if !unicode.IsUpper(r) {
			return false
		}
		n++
	}
	return n >= 1 && n <= maxSuffixLen && !notSuffix[s]
}

// courtBefore is a court (and former court) found before the register type.
type courtBefore struct {
	court, former string
	start         int
	explicit      bool // introduced by "Amtsgericht", "AG", "Registergericht"
	ok            bool
}

// matchCourtBefore looks for "München", "Amtsgericht München,", "Oldenburg
// (Oldenburg) früher Varel" right before token typeAt.
func matchCourtBefore(toks []token, typeAt int) courtBefore {
	end := skipBack(toks, typeAt, courtFillers)
	anyCourt, current := courts().anyCourt, courts().current
	if former, fstart, ok := courtSpanEndingAt(toks, end, anyCourt); ok && fstart > 0 && formerWords[textfold.Fold(toks[fstart-1].text)] {
		res := courtBefore{former: former.Code, start: fstart - 1, ok: true}
		cend := skipBack(toks, fstart-1, courtFillers)
		if cur, cstart, cok := courtSpanEndingAt(toks, cend, anyCourt); cok {
			res.court, res.start, res.explicit = cur.Code, cstart, startsExplicit(toks[cstart])
		}
		return res
	}
	c, start, ok := courtSpanEndingAt(toks, end, current)
	if !ok || start > 0 && formerWords[textfold.Fold(toks[start-1].text)] {
		return courtBefore{}
	}
	if agIsLegalForm(toks, start) && start+1 < end {
		// "Siemens AG München HRB 6684": the name's form, then the court
		start++
	}
	return courtBefore{court: c.Code, start: start, explicit: startsExplicit(toks[start]), ok: true}
}

// agIsLegalForm reports whether the "AG" at token i is the legal form
// of the name before it (Aktiengesellschaft) rather than the Amtsgericht
// of the court after it: it follows a word of the name, not the start,
// punctuation, a number or another legal form ("Müller GmbH AG
// Marburg" names the court).
func agIsLegalForm(toks []token, i int) bool {
	if !strings.EqualFold(toks[i].text, "AG") || i == 0 || toks[i-1].kind != tokWord {
		return false
	}
	return !legalFormEnds()[textfold.Fold(toks[i-1].text)]
}

// legalFormEnds are the last words of the legal forms' spellings
// ("gmbh", "kg", "haftung").
var legalFormEnds = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for spelling := range legalForms().exact {
		toks := textfold.Tokens(spelling)
		m[toks[len(toks)-1]] = true
	}
	return m
})

// registerLabelWords stand before a register reference as its label, in
// German and English: "Registernummer:", "Registration number:",
// "Registered under". They are cut out with the reference.
var registerLabelWords = map[string]bool{
	":": true, "-": true, "registernummer": true, "registernr": true, "register": true,
	"handelsregister": true, "handelsregisternummer": true, "nr": true, ".": true,
	"registration": true, "number": true, "no": true, "under": true, "commercial": true,
	"registered": true, "reg": true, "in": true, "the": true, "eingetragen": true, "im": true, "beim": true,
	"unter": true,
}

// matchCourtAfter looks for "München", "(AG München)", ", Amtsgericht
// München" right after the number, from token from on.
func matchCourtAfter(toks []token, from int) (string, int, bool) {
	start := from
	open := false
	for start < len(toks) && toks[start].kind == tokPunct && strings.Contains(",(-:/[", toks[start].text) {
		open = open || toks[start].text == "(" || toks[start].text == "["
		start++
	}
	for n := min(maxCourtSpan, len(toks)-start); n >= 1; n-- {
		if spanHasFormerWord(toks[start : start+n]) {
			continue
		}
		c, ok := lookupCourtKeys(courts().current, spanKeys(toks, start, start+n))
		if !ok {
			continue
		}
		end := start + n
		if open && end < len(toks) && (toks[end].text == ")" || toks[end].text == "]") {
			end++
		}
		return c.Code, end, true
	}
	return "", 0, false
}

// courtSpanEndingAt finds the longest court name among the tokens ending
// right before index end.
func courtSpanEndingAt(toks []token, end int, courtsByKey map[string]*Court) (Court, int, bool) {
	for n := min(maxCourtSpan, end); n >= 1; n-- {
		start := end - n
		if spanHasFormerWord(toks[start:end]) || toks[start].kind == tokPunct {
			continue
		}
		if c, ok := lookupCourtKeys(courtsByKey, spanKeys(toks, start, end)); ok {
			return c, start, true
		}
	}
	return Court{}, 0, false
}

func spanHasFormerWord(toks []token) bool {
	for _, t := range toks {
		if t.kind == tokWord && formerWords[textfold.Fold(t.text)] {
			return true
		}
		if t.kind != tokWord && t.kind != tokPunct {
			return true // a court name holds no numbers
		}
	}
	return false
}

func startsExplicit(t token) bool {
	switch textfold.Fold(t.text) {
	case "amtsgericht", "ag", "registergericht", "amtsgerichts", "beim", "local", "district", "registry", "register":
		return true
	}
	return false
}

// skipBack returns the index after the last token before at that is not in
// fillers (compared case-insensitively).
func skipBack(toks []token, at int, fillers map[string]bool) int {
	for at > 0 && fillers[strings.ToLower(toks[at-1].text)] {
		at--
	}
	return at
}

// spanKeys returns the court lookup keys of the tokens [start, end),
// folding each token once and keeping the result in toks. Folding token by
// token gives what folding the whole span would: a token is a run of
// letters and digits, and punctuation folds away.
func spanKeys(toks []token, start, end int) []string {
	folded := make([]string, 0, end-start)
	plain := make([]string, 0, end-start)
	for i := start; i < end; i++ {
		t := &toks[i]
		if t.kind == tokPunct {
			continue
		}
		if t.fold == "" {
			t.fold, t.plain = textfold.Fold(t.text), textfold.FoldPlain(t.text)
		}
		if t.fold != "" {
			folded = append(folded, t.fold)
			plain = append(plain, t.plain)
		}
	}
	return courtKeysOf(folded, plain)
}

// leftoverWords reports whether toks hold anything but punctuation and
// court fillers.
func leftoverWords(toks []token) bool {
	for _, t := range toks {
		if t.kind != tokPunct && !courtFillers[strings.ToLower(t.text)] && !startsExplicit(t) {
			return true
		}
	}
	return false
}

// restText cuts the matched range out of text and tidies what remains.
func restText(text string, toks []token, m refMatch) string {
	rest := text[:toks[m.start].start] + " " + text[toks[m.end-1].end:]
	rest = strings.Join(strings.Fields(rest), " ")
	for _, empty := range []string{"( )", "()", "[ ]", "[]"} {
		rest = strings.ReplaceAll(rest, empty, "")
	}
	rest = strings.Join(strings.Fields(rest), " ")
	return strings.Trim(rest, " ,;:-–/(")
}

// isCourtCode reports whether s has the shape of an XJustiz court code: a
// letter, four digits and an optional letter.
func isCourtCode(s string) bool {
	if len(s) != 5 && len(s) != 6 || !isUpper(s[0]) {
		return false
	}
	for i := 1; i < 5; i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) == 5 || isUpper(s[5])
}

// FindCourt looks for a court named without a register number inside free
// text: "Amtsgericht Marburg", "AG Freiburg", "Registergericht: Bonn",
// "Local Court of Siegburg", "District Court Stuttgart". It returns the
// court with the text that remains once the court and the words that
// introduce it are cut out. A court's name alone ("Marburg") is a seat,
// not a court, and "AG" after a name's word is its legal form ("Siemens
// AG München").
func FindCourt(text string) (court Court, rest string, ok bool) {
	if !mayIntroduceCourt(text) {
		return Court{}, text, false // most texts: spare the scan
	}
	toks := scanTokens(text)
	for i := range toks {
		if !introducesCourt(toks, i) {
			continue
		}
		from := i + 1
		for from < len(toks) && courtLinkWords[strings.ToLower(toks[from].text)] {
			from++
		}
		for n := min(maxCourtSpan, len(toks)-from); n >= 1; n-- {
			if spanHasFormerWord(toks[from:from+n]) || toks[from].kind == tokPunct {
				continue
			}
			if c, ok := lookupCourtKeys(courts().current, spanKeys(toks, from, from+n)); ok {
				m := refMatch{start: skipBack(toks, i, courtLeadWords), end: from + n}
				return c, restText(text, toks, m), true
			}
		}
	}
	return Court{}, text, false
}

// mayIntroduceCourt reports whether text may hold a word that
// introduces a court (introducesCourt): "gericht", "court" or "AG" in
// any case. It errs on the side of yes.
func mayIntroduceCourt(text string) bool {
	for _, w := range [...]string{"gericht", "Gericht", "GERICHT", "ourt", "OURT", "AG", "ag", "Ag", "aG"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// introducesCourt reports whether token i is a word that introduces a
// court's name: "Amtsgericht", "AG" where it is no legal form,
// "Registergericht", or the "Court" of "Local Court".
func introducesCourt(toks []token, i int) bool {
	if toks[i].kind != tokWord {
		return false
	}
	switch textfold.Fold(toks[i].text) {
	case "amtsgericht", "amtsgerichts", "registergericht", "registergerichts":
		return true
	case "court":
		// "Local Court", "Register court"; not "Food Court"
		return i > 0 && courtKinds[textfold.Fold(toks[i-1].text)]
	case "ag":
		return !agIsLegalForm(toks, i)
	}
	return false
}

// courtKinds are the words before "Court" that make it a register court.
var courtKinds = map[string]bool{"local": true, "district": true, "register": true, "registry": true, "registration": true}

// courtLinkWords stand between the word that introduces a court and its
// name: "Local Court of Siegburg", "Registergericht: Bonn".
var courtLinkWords = map[string]bool{"of": true, ":": true, "the": true, "-": true}

// courtLeadWords stand before the word that introduces a court and are
// cut out with it: "Local Court", "Register court:", "beim Amtsgericht".
var courtLeadWords = map[string]bool{
	"local": true, "district": true, "register": true, "registry": true, "registration": true,
	"beim": true, "the": true, "of": true, ",": true, "(": true, ";": true,
}
