package resolver

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// MaxQueryRunes bounds the length of a query. A typed clue has at most
// about 200 characters (the longest real company names); a pasted imprint,
// letterhead or e-mail signature of a dozen lines stays well under 1,000.
// A text longer than this is a document, not a clue.
const MaxQueryRunes = 2000

// Modes of a search.
const (
	ModeStandard = "standard"
	ModeDeep     = "deep"
)

// Limits of the number of candidates returned.
const (
	DefaultLimit = 10
	MaxLimit     = 50
)

// Request is one search.
type Request struct {
	Query    string
	Mode     string
	Discover bool
	Limit    int
	// Completes reads the query's last word also as the start of a word
	// still being typed, as an autocompletion box sends it.
	Completes bool
	// Properties is evidence the client holds apart from the query text,
	// from a spreadsheet's columns or a reconciliation query.
	Properties Properties
}

// Properties are structured clues beside a query's text. Each is used as
// the evidence it is (a register number is looked up, a city confirms a
// seat, an officer is searched among officers), never appended to the
// text. Their JSON names are the reconciliation property ids, which users'
// saved projects keep: city, postal_code, address, court,
// register_number, lei, officer, legal_form.
type Properties struct {
	City           string `json:"city,omitempty"`
	PostalCode     string `json:"postal_code,omitempty"`
	Address        string `json:"address,omitempty"`
	Court          string `json:"court,omitempty"`
	RegisterNumber string `json:"register_number,omitempty"`
	LEI            string `json:"lei,omitempty"`
	Officer        string `json:"officer,omitempty"`
	LegalForm      string `json:"legal_form,omitempty"`
}

// MaxPropertyRunes bounds one property: the longest street address,
// court or officer's name is well under it.
const MaxPropertyRunes = 300

// named returns the properties with their ids, in the order of the
// struct, the empty ones too: the one table of the property ids, which
// PropertyIDs, Field, the reconciliation's properties, the batch's
// messages and resolve's column flags read.
func (p *Properties) named() []namedProperty {
	return []namedProperty{{"city", &p.City}, {"postal_code", &p.PostalCode}, {"address", &p.Address}, {"court", &p.Court},
		{"register_number", &p.RegisterNumber}, {"lei", &p.LEI}, {"officer", &p.Officer}, {"legal_form", &p.LegalForm}}
}

// PropertyIDs are the ids of a search's properties (the JSON names of
// Properties' fields), in the order of the struct.
var PropertyIDs = func() []string {
	named := (&Properties{}).named()
	ids := make([]string, len(named))
	for i, np := range named {
		ids[i] = np.id
	}
	return ids
}()

// Field returns the field of p that the property id fills, nil for an
// id that is not one of PropertyIDs.
func (p *Properties) Field(id string) *string {
	for _, np := range p.named() {
		if np.id == id {
			return np.value
		}
	}
	return nil
}

type namedProperty struct {
	id    string
	value *string
}

// IsZero reports whether no property is given.
func (p Properties) IsZero() bool { return p == Properties{} }

// validate trims the properties and checks each: text of at most
// MaxPropertyRunes characters without control characters.
func (p *Properties) validate() error {
	for _, np := range p.named() {
		*np.value = strings.TrimSpace(*np.value)
		v := *np.value
		switch {
		case !utf8.ValidString(v):
			return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.property_not_utf8", companydocs.Args{"property": np.id})
		case utf8.RuneCountInString(v) > MaxPropertyRunes:
			return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.property_too_long", companydocs.Args{"property": np.id, "max": MaxPropertyRunes})
		case strings.ContainsFunc(v, unicode.IsControl):
			return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.property_control_characters", companydocs.Args{"property": np.id})
		}
	}
	return nil
}

// validate checks a request and fills in defaults. Errors carry the
// invalid_query code and a sentence that tells the user what to send.
func (r *Request) validate() error {
	if r.Mode == "" {
		r.Mode = ModeStandard
	}
	if r.Mode != ModeStandard && r.Mode != ModeDeep {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.unknown_mode", companydocs.Args{"mode": companydocs.Shorten(r.Mode, 20)})
	}
	if r.Limit == 0 {
		r.Limit = DefaultLimit
	}
	if r.Limit < 1 || r.Limit > MaxLimit {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.search_limit", companydocs.Args{"max": MaxLimit})
	}
	if err := r.Properties.validate(); err != nil {
		return err
	}
	if err := validateQuery(r.Query); err != nil {
		return err
	}
	r.Query = textfold.NormalizeLineBreaks(r.Query)
	return nil
}

func validateQuery(q string) error {
	if !utf8.ValidString(q) {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.query_not_utf8", nil)
	}
	if strings.TrimSpace(q) == "" {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.query_empty", nil)
	}
	if utf8.RuneCountInString(q) > MaxQueryRunes {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.query_too_long", companydocs.Args{"max": MaxQueryRunes})
	}
	if hasControl(q) {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.query_control_characters", nil)
	}
	if !strings.ContainsFunc(q, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.query_no_letters", nil)
	}
	return nil
}

// hasControl reports whether q holds a control character other than the
// separators of a pasted block: line breaks (textfold.IsLineBreak, read
// as "\n") and tabs.
func hasControl(q string) bool {
	for _, r := range q {
		switch {
		case r == '\t' || textfold.IsLineBreak(r):
		case unicode.IsControl(r):
			return true
		}
	}
	return false
}

// parsedQuery is the resolver's understanding of a query.
type parsedQuery struct {
	raw string

	// LEI: set when the query has the shape of an LEI.
	leiShape bool
	lei      register.LEI
	leiErr   error

	// Register reference found in the query, and whether it named a court.
	ref    register.Ref
	hasRef bool

	// rest is the text beside the register reference of a query also
	// read as an LEI (see readAsRegister).
	rest string

	// Legal form found in the remaining text.
	form    register.LegalForm
	hasForm bool

	// tokens are the folded name tokens of the remaining text, legal form
	// removed; plain holds the same tokens folded without transliteration.
	tokens []string
	plain  []string

	// clean are the tokens without noise words ("firma", "aus"); the
	// noise words dropped are clues set aside (fromAside).
	clean []string
	// person holds the clean tokens that read as a person's name, address
	// is set when the clean tokens hold a street and house number.
	person []string
	// surname is the person's last word, folded once for every candidate
	// (sharesOnlyFirstName); set with person.
	surname token
	address bool
	// houseNumber is set when a word is followed by a number that may be
	// a house number: the address is searched too.
	houseNumber bool
	// readings are the tokens as typed and, when it had noise words,
	// without them.
	readings []reading
	// completes is set when the last token is a word still being typed
	// (Request.Completes), or the start of a word a system cut (cut,
	// cutName).
	completes, cut bool
	// cutAside is the last word of a cut name, too short to start a
	// word: the name is also read without it (cutName).
	cutAside []string
	// cutWords are the folded words of a text that fills a field length
	// to a letter, its legal form and noise words kept: a name that
	// starts with them matches as far as they go (cutStart).
	cutWords []string
	// seats holds the forms of the candidates' seats (seatFormsOf).
	seats map[string]seatForms
	// deep is set for a deep-mode search.
	deep bool
	// block is the pasted block the query was read from, nil for a typed
	// one.
	block *block
	// clues are the request's clues beside its text's name: the
	// properties given, the court the text names without a number, the
	// lines of a pasted block (weighClues). leiKnown is set when the LEI
	// given as a property names a known profile.
	clues    clueList
	leiKnown bool
}

// reading is one way of reading the query's tokens, with their plain
// spellings (plainOf).
type reading struct {
	tokens, plain []string
	// query is the token list of tokens (queryList), made for the first
	// candidate and kept for the others
	query *tokenList
}

// queryList returns the token list of the reading's tokens.
func (r *reading) queryList(pq *parsedQuery) tokenList {
	if r.query == nil {
		l := queryList(pq, r.tokens)
		r.query = &l
	}
	return *r.query
}

func newReading(tokens []string) reading {
	r := reading{tokens: tokens, plain: make([]string, len(tokens))}
	for i, t := range tokens {
		r.plain[i] = plainOf(t)
	}
	return r
}

// parseQuery splits a query into an identifier, a legal form and name tokens.
func parseQuery(q string) *parsedQuery {
	pq := &parsedQuery{raw: strings.TrimSpace(q)}
	rest := cutName(pq, pq.raw)
	if ref, r, ok := register.FindRef(pq.raw); ok {
		pq.ref, pq.hasRef, rest = ref, true, r
	} else if court, r, ok := register.FindCourt(rest); ok && r != "" {
		// "Müller GmbH AG Marburg": the court is a clue, not the name's
		pq.clues.add(clue{kind: clueCourt, source: fromText, text: courtText(rest, r), court: court.Code})
		rest = r
	}
	if lei := trimLEIPrefix(pq.raw); register.LooksLikeLEI(lei) {
		pq.leiShape = true
		pq.lei, pq.leiErr = register.ParseLEI(lei)
		if pq.leiErr == nil {
			// "Kaiserslautern VR 1514" is 20 letters and digits whose
			// checksum holds by chance (one in 97): the register reading
			// stays, for when no profile carries the LEI.
			pq.rest = rest
			return pq
		}
	}
	pq.readText(rest)
	return pq
}

// readText reads the text beside an identifier: legal form and name tokens.
func (pq *parsedQuery) readText(rest string) {
	base, form, ok := register.SplitLegalForm(rest)
	pq.form, pq.hasForm = form, ok
	pq.tokens = dropNoise(base)
	for _, t := range pq.tokens {
		pq.plain = append(pq.plain, textfold.FoldPlain(t))
	}
	clean, ignored := withoutNoise(pq.tokens)
	pq.clean = clean
	pq.setAside(ignored)
	if len(ignored) > 0 {
		// "Firma Lutte GmbH in Altenberge" fills 30 characters by
		// chance: a text with words around the name is typed, not cut
		pq.cut, pq.cutAside = false, nil
	}
	pq.readings = []reading{newReading(pq.tokens)}
	if len(ignored) > 0 {
		pq.readings = append(pq.readings, newReading(pq.clean))
	}
	if uncut, ok := withoutSuffix(pq.clean, pq.cutAside); ok && len(uncut) > 0 {
		// a cut name's last letters tell nothing, or they are a seat
		// typed after the name ("... in Hof"): both readings
		pq.readings = append(pq.readings, newReading(uncut))
	}
	pq.address = isAddress(pq.clean)
	pq.houseNumber = hasHouseNumber(pq.clean)
	if !pq.hasForm && !pq.hasRef && !pq.address {
		pq.person = personName(pq.clean)
		if len(pq.person) > 0 {
			pq.surname = newTokenList(pq.person[len(pq.person)-1:]).toks[0]
		}
	}
}

// courtText is what a text said of the court: the text less what
// remains of it ("AG Marburg" of "Müller GmbH AG Marburg"), as near as
// words go.
func courtText(text, rest string) string {
	words := strings.Fields(text)
	for _, w := range strings.Fields(rest) {
		if i := slices.Index(words, w); i >= 0 {
			words = slices.Delete(words, i, i+1)
		}
	}
	return strings.Trim(strings.Join(words, " "), " ,;")
}

// fieldLengths are the lengths at which systems cut a name: the name
// fields of ERP systems, bank transfers and supplier lists hold 30, 35,
// 40 or 50 characters.
var fieldLengths = [...]int{30, 35, 40, 50}

// cutName reads a name that fills a field length to its last character
// ("Initiative zur Unterstützung von Me") as cut there: its last word is
// searched as the start of a word, as a word still being typed is, and a
// last word too short to start one (textfold.MinWordStart) is also
// read without (cutAside, readText). A name that starts with its words,
// a last word of digits too, matches as far as they go (cutWords,
// cutStart). It returns the name to read.
func cutName(pq *parsedQuery, name string) string {
	n := utf8.RuneCountInString(name)
	last, _ := utf8.DecodeLastRuneInString(name)
	if !slices.Contains(fieldLengths[:], n) || !unicode.IsLetter(last) && !unicode.IsDigit(last) {
		return name
	}
	// even a text whose last word reads as a legal form or a number may
	// be cut ("FADIS Fahrzeug Distribution Se" of "... Services GmbH",
	// "Turn- und Sportverein Nordstrand von 190" of "... von 1903 e. V.")
	pq.cutWords = textfold.Tokens(textfold.Fold(name))
	if !unicode.IsLetter(last) || endsInLegalForm(name) {
		return name
	}
	pq.cut = true
	i := strings.LastIndexFunc(name, unicode.IsSpace)
	if i < 0 {
		return name
	}
	if word := name[i+1:]; utf8.RuneCountInString(word) < textfold.MinWordStart {
		pq.cutAside = textfold.Tokens(textfold.Fold(word))
	}
	return name
}

// withoutSuffix returns tokens less suffix, when they end in it.
func withoutSuffix(tokens, suffix []string) ([]string, bool) {
	n := len(tokens) - len(suffix)
	if len(suffix) == 0 || n < 0 || !slices.Equal(tokens[n:], suffix) {
		return nil, false
	}
	return tokens[:n], true
}

// endsInLegalForm reports whether a name's last word is its legal form
// ("Neue Heimat Südbayerische Wohnstätten eG"): a whole name, not a cut one.
func endsInLegalForm(name string) bool {
	_, form, ok := register.SplitLegalForm(name)
	tokens := textfold.Tokens(textfold.Fold(name))
	return ok && len(tokens) > 0 && len(form.Words) > 0 && tokens[len(tokens)-1] == form.Words[len(form.Words)-1]
}

// setAside keeps the words of the text set aside as clues of their own
// (a text read again, as a register reference's, replaces them).
func (pq *parsedQuery) setAside(words []string) {
	pq.clues = slices.DeleteFunc(pq.clues, func(c clue) bool { return c.source == fromAside })
	for _, w := range words {
		pq.clues.add(clue{kind: clueName, source: fromAside, text: w})
	}
}

// asideWords are the words of the text set aside.
func (pq *parsedQuery) asideWords() []string {
	var out []string
	for _, c := range pq.clues {
		if c.source == fromAside {
			out = append(out, c.text)
		}
	}
	return out
}

// leiPrefixes are the labels people paste in front of an LEI.
var leiPrefixes = []string{"lei-code", "lei code", "lei-nr.", "lei-nr", "lei nr.", "lei nr", "lei"}

// trimLEIPrefix removes a label such as "LEI:" or "LEI-Code" from the
// start of q, when what follows could be an LEI.
func trimLEIPrefix(q string) string {
	lower := strings.ToLower(q)
	for _, p := range leiPrefixes {
		if strings.HasPrefix(lower, p) {
			rest := strings.TrimLeft(q[len(p):], " :#.-\t")
			if register.LooksLikeLEI(rest) {
				return rest
			}
		}
	}
	return q
}

// dropNoise removes tokens that carry no identity: connectors and
// punctuation-only leftovers. Tokens without any come back as they are.
func dropNoise(tokens []string) []string {
	if !slices.ContainsFunc(tokens, isNoise) {
		return tokens
	}
	out := tokens[:0:0]
	for _, t := range tokens {
		if !isNoise(t) {
			out = append(out, t)
		}
	}
	return out
}

func isNoise(token string) bool { return token == "&" || token == "" }

// readAsRegister drops the LEI reading of a query that is also a register
// reference, when no profile carries the LEI.
func (pq *parsedQuery) readAsRegister() {
	if !pq.leiShape || pq.leiErr != nil {
		return
	}
	pq.leiShape, pq.lei = false, ""
	pq.readText(pq.rest)
}

// distinctiveTokens counts the tokens that can tell one company from
// another: not generic words, not stop words, not single letters.
func (pq *parsedQuery) distinctiveTokens() int {
	n := 0
	for _, t := range pq.clean {
		if tokenWeight(t) >= 1 && utf8.RuneCountInString(t) > 1 {
			n++
		}
	}
	return n
}

// isShort reports whether the query is a short ambiguous clue whose
// confidence is capped: no identifier, fewer than two distinctive tokens
// ("Müller", "Bau GmbH", "AG", "Berlin"), and short as text. A long run
// of one word ("aaaa..." of 300 letters) is no short clue; it finds
// nothing to cap.
func (pq *parsedQuery) isShort() bool {
	if pq.hasRef || (pq.leiShape && pq.leiErr == nil) {
		return false
	}
	if pq.clues.has(clueOfficer, fromLine) || pq.clues.has(clueAddress, fromLine) {
		return false
	}
	if pq.clues.has(clueRegister, fromProperty) || pq.leiKnown {
		return false
	}
	return pq.distinctiveTokens()+pq.clues.softClues() < 2 && utf8.RuneCountInString(pq.raw) <= maxShortRunes
}

// maxShortRunes is the longest query that can be short: longer than the
// longest one-word company names people type ("Donaudampfschifffahrt...").
const maxShortRunes = 60
