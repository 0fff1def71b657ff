package resolver

import (
	"regexp"
	"strings"
	"unicode"

	"companydocs/textfold"
)

// A pasted block is what people copy: the imprint (Impressum) of a web
// site, the footer of a letter or invoice, an e-mail signature. Its lines
// are read one by one (readBlock) and each is used as the evidence it is:
// the name, register lines, persons, a street and a postcode with city, an
// LEI. What identifies nothing in the register (phone, e-mail, VAT ID, bank
// details, greetings, opening hours) is set aside, and query_understanding
// says which line went where (Understanding.Lines).

// lineSeparators split a block into lines: line breaks and tabs, and the
// dots and bars that join a letterhead into one line ("Müller GmbH ·
// Hauptstr. 5 · 12345 Berlin").
var lineSeparators = regexp.MustCompile(`\r?\n|\t|\s+[·•|]\s+|[·•]`)

// lineSeparatorRunes are the runes every match of lineSeparators holds
// one of; a block without bulletRunes has its lines cut at line breaks and
// tabs alone.
const (
	bulletRunes        = "·•|"
	lineSeparatorRunes = "\n\t" + bulletRunes
)

// splitBlock returns the lines of a query, empty ones left out. Within a
// line, a part after a comma or semicolon that starts with a label
// ("Sitz: Berlin, Registergericht: Amtsgericht Berlin") or is contact
// noise ("Müller GmbH, Tel. 030 1234") is a line of its own; other commas
// belong to the line ("Müller, Schmidt & Partner", "Hauptstr. 5, 12345
// Berlin").
func splitBlock(q string) []string {
	if !strings.ContainsAny(q, lineSeparatorRunes) {
		// one line, as most queries are: spare the pattern
		return splitLabelled(q)
	}
	var lines []string
	if strings.ContainsAny(q, bulletRunes) {
		lines = lineSeparators.Split(q, -1)
	} else {
		// line breaks and tabs only, as most blocks are: split by hand
		// (splitLabelled trims the \r of \r\n and drops empty lines)
		lines = strings.FieldsFunc(q, func(r rune) bool { return r == '\n' || r == '\t' })
	}
	var out []string
	for _, line := range lines {
		out = append(out, splitLabelled(line)...)
	}
	return out
}

func splitLabelled(line string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ';' }) {
		part = strings.TrimSpace(part)
		switch {
		case part == "":
		case len(out) > 0 && !startsLine(part):
			out[len(out)-1] += ", " + part
		default:
			out = append(out, part)
		}
	}
	return out
}

// startsLine reports whether a part of a line after a comma stands on its
// own: it has a label with a colon, or is contact noise.
func startsLine(part string) bool {
	if label, _, ok := cutLabel(part); ok && label != "" {
		return true
	}
	_, noise := setAside(part)
	return noise
}

// isBlock reports whether a query is a pasted block rather than a typed
// clue: it has at least two lines.
func isBlock(lines []string) bool { return len(lines) >= 2 }

// labelPattern is a label before a colon: up to five words
// ("Sitz der Gesellschaft:", "USt-IdNr.:", "Vorsitzender des Aufsichtsrats:").
var labelPattern = regexp.MustCompile(`^([\p{L}][\p{L}\p{M}.\-/ ]{0,60}?)\s*:\s*(.*)$`)

// cutLabel splits "Label: value" into the folded label and the value.
func cutLabel(line string) (label, value string, ok bool) {
	if !strings.Contains(line, ":") {
		// most lines have no label: the pattern is not run for them
		return "", line, false
	}
	m := labelPattern.FindStringSubmatch(line)
	if m == nil || len(strings.Fields(m[1])) > 5 {
		return "", line, false
	}
	return foldLabel(m[1]), strings.TrimSpace(m[2]), true
}

// foldLabel folds a label for the vocabulary: dots, hyphens and slashes
// dropped, then folded ("USt-IdNr." -> "ustidnr", "E-Mail" -> "email").
func foldLabel(s string) string {
	return textfold.Fold(strings.Map(func(r rune) rune {
		switch r {
		case '.', '-', '/':
			return -1
		}
		return r
	}, s))
}

// The line codes of query_understanding: what each line of a pasted
// block was used as, or why it was set aside (lineTable says their params
// and English sentences).
const (
	LineName     = "line_name"
	LineRegister = "line_register"
	LineSeat     = "line_seat"
	LinePerson   = "line_person"
	LineAddress  = "line_address"
	LineLEI      = "line_lei"

	AsidePhone        = "aside_phone"
	AsideFax          = "aside_fax"
	AsideEmail        = "aside_email"
	AsideWeb          = "aside_web"
	AsideVATID        = "aside_vat_id"
	AsideTaxNumber    = "aside_tax_number"
	AsideBank         = "aside_bank"
	AsideGreeting     = "aside_greeting"
	AsideOpeningHours = "aside_opening_hours"
	AsideHeading      = "aside_heading"
	AsideUnknown      = "aside_unknown"
)

// asideLabels are the labels of lines that identify nothing in the
// register, by the code that says so.
var asideLabels = map[string]string{
	"tel": AsidePhone, "telefon": AsidePhone, "fon": AsidePhone, "phone": AsidePhone, "mobil": AsidePhone,
	"mobile": AsidePhone, "handy": AsidePhone, "t": AsidePhone, "m": AsidePhone, "hotline": AsidePhone,
	"fax": AsideFax, "telefax": AsideFax, "f": AsideFax,
	"email": AsideEmail, "mail": AsideEmail, "e": AsideEmail,
	"web": AsideWeb, "internet": AsideWeb, "homepage": AsideWeb, "website": AsideWeb, "www": AsideWeb, "w": AsideWeb,
	"ustidnr": AsideVATID, "ustid": AsideVATID, "ust": AsideVATID, "ustidnummer": AsideVATID,
	"umsatzsteueridentifikationsnummer": AsideVATID, "umsatzsteuer identifikationsnummer": AsideVATID,
	"vat": AsideVATID, "vatid": AsideVATID, "vat no": AsideVATID, "ustnr": AsideVATID, "vat id": AsideVATID,
	"vat id no": AsideVATID, "vat number": AsideVATID, "vat reg no": AsideVATID, "telephone": AsidePhone,
	"steuernummer": AsideTaxNumber, "stnr": AsideTaxNumber, "steuernr": AsideTaxNumber, "st nr": AsideTaxNumber,
	"finanzamt": AsideTaxNumber, "wirtschaftsidentifikationsnummer": AsideTaxNumber, "widnr": AsideTaxNumber,
	"iban": AsideBank, "bic": AsideBank, "swift": AsideBank, "bank": AsideBank, "bankverbindung": AsideBank,
	"kontonummer": AsideBank, "konto": AsideBank, "blz": AsideBank, "kto": AsideBank, "kreditinstitut": AsideBank,
	"öffnungszeiten": AsideOpeningHours, "oeffnungszeiten": AsideOpeningHours, "geschaeftszeiten": AsideOpeningHours,
	"sprechzeiten": AsideOpeningHours, "servicezeiten": AsideOpeningHours, "erreichbarkeit": AsideOpeningHours,
	"kontakt": AsideHeading, "anschrift": AsideHeading, "postanschrift": AsideHeading, "adresse": AsideHeading,
	"impressum": AsideHeading,
}

// Content patterns of lines set aside whatever their label.
var (
	emailPattern   = regexp.MustCompile(`[\w.+\-]+@[\w\-]+\.[\w.\-]+`)
	webPattern     = regexp.MustCompile(`(?i)^(https?://|www\.)\S+$|^[\w\-]+(\.[\w\-]+)*\.(de|com|net|org|eu|info|biz|gmbh|shop)(/\S*)?$`)
	phonePattern   = regexp.MustCompile(`^\+?[\d\s()/\-–.]{6,}$`)
	vatPattern     = regexp.MustCompile(`(?i)\bDE\s?\d{3}\s?\d{3}\s?\d{3}\b`)
	ibanPattern    = regexp.MustCompile(`\b[A-Z]{2}\d{2}(\s?[A-Z0-9]{4}){3,7}`)
	bicPattern     = regexp.MustCompile(`(?i)^(bic|swift|swift bic)\W*\s*[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$`)
	hoursPattern   = regexp.MustCompile(`(?i)\b(mo|di|mi|do|fr|sa|so|montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag)\b.*\d{1,2}([:.]\d{2})?\s*(uhr|-|–|bis)`)
	bankWords      = wordSet(`bank sparkasse volksbank raiffeisenbank commerzbank postbank deutsche kreissparkasse stadtsparkasse genossenschaftsbank landesbank`)
	greetingPrefix = []string{"mit freundlichen gruessen", "mit freundlichem gruss", "freundliche gruesse", "viele gruesse",
		"beste gruesse", "herzliche gruesse", "liebe gruesse", "schoene gruesse", "best regards", "kind regards",
		"with best regards", "sehr geehrte", "sehr geehrter", "hallo", "guten tag"}
	// greetingLines are greetings only as a whole line ("LG" may start a
	// company's name).
	greetingLines = wordSet(`mfg lg vg gruss gruesse regards ia iv cheers danke`)
	headingPrefix = []string{"angaben gemaess", "angaben nach", "verantwortlich fuer den inhalt", "verantwortlich i s d",
		"inhaltlich verantwortlich", "haftungsausschluss", "haftung fuer", "urheberrecht", "streitschlichtung",
		"postfach", "diese email", "this email", "diese nachricht", "bitte denken sie"}
	headingLines = wordSet(`impressum kontakt anschrift postanschrift adresse disclaimer datenschutz datenschutzerklaerung imprint contact`)
)

// setAside reports whether a line identifies nothing in the register, and
// the code that says why: by its label ("Tel.:") or by what it holds.
func setAside(line string) (string, bool) {
	if code, ok := asideByLabel(line); ok {
		return code, true
	}
	folded := foldLabel(line)
	for _, rule := range asideRules {
		if rule.holds(line, folded) {
			return rule.code, true
		}
	}
	if labelledNoise(folded) {
		return asideLabels[strings.Fields(folded)[0]], true
	}
	if bankLine(folded) {
		return AsideBank, true
	}
	return "", false
}

// asideByLabel reads the code of a line's label: the label whole, or its
// first word before a value ("Tel. Zentrale: 030 1234").
func asideByLabel(line string) (string, bool) {
	label, value, ok := cutLabel(line)
	if !ok {
		return "", false
	}
	if code, known := asideLabels[label]; known {
		return code, true
	}
	if code, known := asideLabels[strings.Fields(label + " x")[0]]; known && value != "" && code != AsideHeading {
		return code, true
	}
	return "", false
}

// asideRule sets a line aside by what it holds: the line as pasted and
// folded (foldLabel).
type asideRule struct {
	code  string
	holds func(line, folded string) bool
}

// asideRules are the content rules of setAside, in order: the first that
// holds says the code. Each pattern runs only on a line with the
// character it cannot match without (an @, a dot, a digit): every line
// of every pasted block meets these rules.
var asideRules = []asideRule{
	{AsideEmail, func(line, _ string) bool { return strings.Contains(line, "@") && emailPattern.MatchString(line) }},
	{AsideWeb, func(line, _ string) bool {
		return strings.Contains(line, ".") && webPattern.MatchString(strings.TrimSpace(line))
	}},
	{AsideVATID, func(line, _ string) bool { return hasDigit(line) && vatPattern.MatchString(line) }},
	{AsideBank, func(line, folded string) bool {
		first := strings.Fields(folded + " x")[0]
		return hasDigit(line) && first != "hrb" && ibanPattern.MatchString(line) ||
			(strings.HasPrefix(folded, "bic") || strings.HasPrefix(folded, "swift")) && bicPattern.MatchString(strings.TrimSpace(line))
	}},
	{AsidePhone, func(line, _ string) bool {
		return hasDigit(line) && strings.Count(line, " ") < 6 && phonePattern.MatchString(line)
	}},
	{AsideOpeningHours, func(line, _ string) bool { return hasDigit(line) && hoursPattern.MatchString(line) }},
	{AsideGreeting, func(_, folded string) bool { return hasPrefixWord(folded, greetingPrefix) || greetingLines[folded] }},
	{AsideHeading, func(_, folded string) bool { return hasPrefixWord(folded, headingPrefix) || headingLines[folded] }},
}

func hasDigit(s string) bool { return strings.ContainsFunc(s, unicode.IsDigit) }

// labelledNoise reports whether a line starts with a noise label without a
// colon: "Tel. 030 1234", "Fax 030 1235", "USt-IdNr. DE123456789".
func labelledNoise(folded string) bool {
	words := strings.Fields(folded)
	if len(words) < 2 {
		return false
	}
	code, ok := asideLabels[words[0]]
	return ok && code != AsideHeading && len(words[0]) > 1 && hasDigit(folded)
}

// bankLine reports whether a line names a bank and nothing else of a
// company: "Sparkasse KölnBonn", "Deutsche Bank".
func bankLine(folded string) bool {
	words := strings.Fields(folded)
	if len(words) == 0 || len(words) > 4 {
		return false
	}
	for _, w := range words {
		if bankWords[w] && w != "deutsche" {
			return true
		}
	}
	return false
}

func hasPrefixWord(folded string, prefixes []string) bool {
	for _, p := range prefixes {
		if folded == p || strings.HasPrefix(folded, p+" ") {
			return true
		}
	}
	return false
}
