package resolver

import (
	"regexp"
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// block is a pasted block as read: what each line was used as, and the
// clues the lines give (source fromLine).
type block struct {
	// lines say what each line was used as, or why it was set aside.
	lines []companydocs.ReasonDetail
	clues clueList
	// register is the register lines joined, which give the register
	// reference together (the number on one, the court on another).
	register string
	// loose are the lines no rule read, in order, with their index in
	// lines: the name and persons without a label are among them.
	loose []looseLine
}

// set keeps c as the block's one clue of its kind: a later street or
// postcode line replaces an earlier one.
func (b *block) set(c clue) {
	for i := range b.clues {
		if b.clues[i].kind == c.kind {
			b.clues[i] = c
			return
		}
	}
	b.clues.add(c)
}

// addFirst keeps c unless the block has a clue of its kind already: the
// first name, seat or court line counts.
func (b *block) addFirst(c clue) {
	if !b.clues.has(c.kind, fromLine) {
		b.clues.add(c)
	}
}

// text returns the text of the block's clue of a kind, "" for none.
func (b *block) text(kind clueKind) string {
	c, _ := b.clues.first(kind, fromLine)
	return c.text
}

// persons are the folded names of the persons the block names.
func (b *block) persons() [][]string {
	var out [][]string
	for _, c := range b.clues.all(clueOfficer, fromLine) {
		out = append(out, c.words)
	}
	return out
}

// addPerson keeps a person the block names.
func (b *block) addPerson(words []string) {
	b.clues.add(clue{kind: clueOfficer, source: fromLine, text: strings.Join(words, " "), words: words})
}

type looseLine struct {
	text string
	at   int
}

// Labels of used lines, folded (foldLabel).
var (
	personLabels = wordSetLines(`geschaeftsfuehrer
		geschaeftsfuehrerin
		geschaeftsfuehrung
		geschaeftsfuehrende gesellschafter
		geschaeftsfuehrender gesellschafter
		geschaeftsfuehrende gesellschafterin
		vertretungsberechtigter geschaeftsfuehrer
		vertretungsberechtigte geschaeftsfuehrer
		vertretungsberechtigt
		vertretungsberechtigte
		vertreten durch
		vertreten durch den geschaeftsfuehrer
		vertreten durch die geschaeftsfuehrer
		vertreten durch den vorstand
		vorstand
		vorstaende
		vorstandsmitglieder
		vorstandsvorsitzender
		vorstandsvorsitzende
		vorsitzender des vorstands
		vorsitzende des vorstands
		vorsitzender des aufsichtsrats
		vorsitzende des aufsichtsrats
		vorsitzender des aufsichtsrates
		aufsichtsratsvorsitzender
		aufsichtsratsvorsitzende
		aufsichtsrat
		inhaber
		inhaberin
		prokurist
		prokuristin
		prokura
		partner
		komplementaer
		persoenlich haftende gesellschafterin
		persoenlich haftender gesellschafter
		liquidator
		ceo
		managing director
		managing directors
		managing director s
		managing director in
		director
		directors
		represented by
		represented by the managing director
		represented by the board
		authorised representative
		authorized representative
		board
		board of directors
		management board
		executive board
		members of the board
		chairman of the board
		chairman of the supervisory board
		owner
		geschaeftsleitung
		verantwortlich
		vorsitzender
		vorsitzende
		1 vorsitzender
		1 vorsitzende`)
	seatLabels     = wordSetLines("sitz\nsitz der gesellschaft\nsitz des vereins\nsitz der genossenschaft\ngesellschaftssitz\nsatzungssitz\nsitz des unternehmens\nregistered office\nregistered seat\nseat")
	nameLabels     = wordSetLines("firma\nname\nfirmenname\nunternehmen\nanbieter\ndiensteanbieter\nbetreiber\nherausgeber\ngesellschaft\nverein")
	registerLabels = wordSetLines(`registergericht
		register
		registernummer
		registernr
		regnr
		handelsregister
		handelsregisternummer
		handelsregistereintrag
		handelsregistereintragung
		eintragung
		eingetragen
		registereintrag
		registereintragung
		amtsgericht
		vereinsregister
		vereinsregisternummer
		genossenschaftsregister
		partnerschaftsregister
		hrb
		hra
		vr
		eintragung im handelsregister
		eintragung im vereinsregister
		eingetragen im handelsregister
		eingetragen im vereinsregister
		eingetragen beim amtsgericht
		registergericht und registernummer
		handelsregister und registernummer
		register court
		registry court
		registration court
		court of registration
		commercial register
		commercial registry
		trade register
		register of companies
		registration number
		registration no
		register number
		company number
		local court
		district court
		registered at
		registered with
		registered in`)
	// registerWords start a register line without a colon.
	registerWords = wordSet(`registergericht amtsgericht handelsregister vereinsregister genossenschaftsregister
		partnerschaftsregister eingetragen eintragung registernummer registereintrag ag hrb hra vr gnr pr hr`)
	// courtWords start a register line only with a register reference
	// or a court in it: they start names too ("AG Wohnen", "Local
	// Heroes GmbH", "VR Bank").
	courtWords = wordSet(`ag vr pr registered register registry commercial registration local district`)
)

func wordSetLines(s string) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = true
		}
	}
	return m
}

// Address lines: a street with house number, a postcode with city.
var (
	streetPattern   = regexp.MustCompile(`^(\p{L}[\p{L}\p{M}.'\- ]{1,60}?)\s+(\d{1,4}\s?[a-zA-Z]?(\s?[-–/]\s?\d{1,4}\s?[a-zA-Z]?)?)$`)
	postcodePattern = regexp.MustCompile(`^(?:D\s?-\s?)?(\d{5})\s+(\p{L}[\p{L}\p{M} .()/\-]{1,50})$`)
	streetPrefixes  = wordSet(`am an auf im in zum zur unter hinter vor bei alte alter altes neue neuer neues grosse grosser kleine kleiner ober unter obere untere`)
)

// readBlock reads the lines of a pasted block.
func readBlock(lines []string) *block {
	b := &block{}
	for _, line := range lines {
		b.readLine(strings.Trim(line, " \u00a0-–—*•>"))
	}
	b.readLoose()
	return b
}

// use notes what a line was used as or why it was set aside.
func (b *block) use(code string, params companydocs.ReasonParams) {
	b.lines = append(b.lines, companydocs.ReasonDetail{Code: code, Params: params})
}

func (b *block) readLine(line string) {
	if line == "" || b.readLEI(line) {
		return
	}
	if code, ok := setAside(line); ok {
		b.use(code, rp{Text: line})
		return
	}
	if b.readLabelled(line) {
		return
	}
	if registerLine(line) {
		b.readRegister(line)
		return
	}
	if !b.readAddress(line) {
		b.loose = append(b.loose, looseLine{line, len(b.lines)})
		b.use(AsideUnknown, rp{Text: line}) // until readLoose decides
	}
}

// readLEI reads a line that is an LEI, labelled or not.
func (b *block) readLEI(line string) bool {
	lei := trimLEIPrefix(line)
	if !register.LooksLikeLEI(lei) || lei == line && !validLEI(lei) {
		return false
	}
	b.set(clue{kind: clueLEI, source: fromLine, text: lei})
	b.use(LineLEI, rp{Text: line, LEI: strings.ToUpper(strings.Join(strings.Fields(lei), ""))})
	return true
}

// readLabelled reads a line by its label: persons, the seat, the name,
// the register.
func (b *block) readLabelled(line string) bool {
	label, value, labelled := cutLabel(line)
	switch {
	case !labelled:
		return false
	case personLabels[label]:
		b.readPersons(line, value, label)
	case seatLabels[label] && value != "":
		b.readSeat(line, value)
	case nameLabels[label] && value != "":
		b.set(clue{kind: clueName, source: fromLine, text: value})
		b.use(LineName, rp{Text: line})
	case registerLabels[label]:
		b.readRegister(line)
	default:
		return false
	}
	return true
}

// validLEI reports whether an unlabelled line is an LEI: its checksum
// holds ("Registernummer HRB 987" has the shape of one too).
func validLEI(s string) bool {
	_, err := register.ParseLEI(s)
	return err == nil
}

// registerLine reports whether an unlabelled line is a register line:
// it starts with a register word ("Amtsgericht München HRB 6684",
// "eingetragen im Handelsregister ...") or is a register reference alone.
func registerLine(line string) bool {
	words := strings.Fields(foldLabel(line))
	if len(words) == 0 {
		return false
	}
	_, rest, ok := register.FindRef(line)
	switch {
	case courtWords[words[0]]:
		return ok || courtAlone(line)
	case registerWords[words[0]]:
		return ok || len(words) <= 6
	}
	return ok && strings.TrimSpace(strings.Trim(rest, ",;:()")) == ""
}

// courtAlone reports whether a line names a court and nothing else:
// "AG Freiburg", "Local Court of Siegburg".
func courtAlone(line string) bool {
	_, rest, ok := register.FindCourt(line)
	return ok && strings.TrimSpace(strings.Trim(rest, ",;:()")) == ""
}

// readRegister keeps a register line for the reference the lines give
// together, and the court it names.
func (b *block) readRegister(line string) {
	params := rp{Text: line}
	if ref, _, ok := register.FindRef(line); ok {
		params.RegisterNumber = ref.NumberKey()
		params.Court = courtNameOrEmpty(ref.Court)
	}
	if params.Court == "" {
		// a line whose reference names its court names no other
		b.readCourt(line, &params)
	}
	b.register = strings.TrimSpace(b.register + " " + line)
	b.use(LineRegister, params)
}

// readCourt keeps the court a register line names without a reference's.
func (b *block) readCourt(line string, params *rp) {
	if court, ok := courtIn(line); ok {
		params.Court = court.Name
		b.addFirst(clue{kind: clueCourt, source: fromLine, text: line, court: court.Code})
	}
}

// courtPunctuation spaces what may stand around a court's name in a
// register line.
var courtPunctuation = strings.NewReplacer(",", " ", ";", " ", "(", " ( ", ")", " ) ")

// courtIn finds the court a register line names after "Amtsgericht",
// "AG", "Local Court" or a label ("Registergericht: München"), in one to
// three words.
func courtIn(line string) (register.Court, bool) {
	if c, _, ok := register.FindCourt(line); ok {
		return c, true
	}
	_, value, labelled := cutLabel(line)
	words := strings.Fields(courtPunctuation.Replace(value))
	for i := range words {
		w := foldLabel(words[i])
		if !(labelled && i == 0) && !strings.HasPrefix(w, "amtsgericht") && w != "ag" && !strings.HasPrefix(w, "registergericht") {
			continue
		}
		from := i + 1
		if labelled && i == 0 && !strings.HasPrefix(w, "amtsgericht") && w != "ag" {
			from = i
		}
		for n := min(len(words)-from, 4); n >= 1; n-- {
			if c, ok := register.LookupCourt(strings.Join(words[from:from+n], " ")); ok {
				return c, true
			}
		}
	}
	return register.Court{}, false
}

func (b *block) readSeat(line, value string) {
	seat := strings.TrimSpace(strings.Split(value, ",")[0])
	b.addFirst(clue{kind: clueSeat, source: fromLine, text: seat})
	b.use(LineSeat, rp{Text: line, Seat: seat})
}

// readAddress reads a street with house number, a postcode with city, or
// both after a comma ("Hauptstr. 5, 12345 Berlin").
func (b *block) readAddress(line string) bool {
	street, place, _ := strings.Cut(line, ",")
	street, place = strings.TrimSpace(street), strings.TrimSpace(place)
	switch {
	case place != "" && isStreet(street) && postcodePattern.MatchString(place):
		b.set(clue{kind: clueAddress, source: fromLine, text: street})
		b.readPostcode(place)
	case place == "" && isStreet(street):
		b.set(clue{kind: clueAddress, source: fromLine, text: street})
	case place == "" && postcodePattern.MatchString(street):
		b.readPostcode(street)
	default:
		return false
	}
	b.use(LineAddress, rp{Text: line, Address: line})
	return true
}

func (b *block) readPostcode(s string) {
	m := postcodePattern.FindStringSubmatch(s)
	b.set(clue{kind: cluePostcode, source: fromLine, text: m[1]})
	b.addFirst(clue{kind: clueSeat, source: fromLine, text: strings.TrimSpace(m[2])})
}

// isStreet reports whether s is a street with house number: its street
// word ends in a street suffix ("Hauptstr. 5") or it starts with a
// preposition ("Am Markt 1", "In der Aue 3").
func isStreet(s string) bool {
	m := streetPattern.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	words := textfold.Tokens(textfold.Fold(m[1]))
	if len(words) == 0 || len(words) > 5 {
		return false
	}
	if streetPrefixes[words[0]] && len(words) >= 2 {
		return true
	}
	last := words[len(words)-1]
	for _, suffix := range streetSuffixes {
		if strings.HasSuffix(last, suffix) {
			return true
		}
	}
	return false
}

// readPersons reads a person line: "Geschäftsführer: Dr. Hans Müller, Eva
// Schmidt".
func (b *block) readPersons(line, value, label string) {
	persons := personsIn(value)
	if len(persons) == 0 {
		b.use(AsideUnknown, rp{Text: line})
		return
	}
	for _, p := range persons {
		b.addPerson(p)
		b.use(LinePerson, rp{Text: line, Person: displayName(value, p), Position: label})
	}
}

// readLoose decides the lines no rule read: the first that names a legal
// form is the name (else the first that is no person's name), lines that
// read as a person's name are persons ("Hans Müller" over
// "Geschäftsführer"), the rest identifies nothing.
func (b *block) readLoose() {
	name := -1
	if !b.clues.has(clueName, fromLine) {
		name = b.nameLine()
	}
	for i, l := range b.loose {
		switch {
		case i == name:
			b.set(clue{kind: clueName, source: fromLine, text: l.text})
			b.lines[l.at] = companydocs.ReasonDetail{Code: LineName, Params: rp{Text: l.text}}
		case readsAsPerson(l.text) != nil:
			p := readsAsPerson(l.text)
			b.addPerson(p)
			b.lines[l.at] = companydocs.ReasonDetail{Code: LinePerson, Params: rp{Text: l.text, Person: displayName(l.text, p)}}
		}
	}
}

// nameLine returns the index among the loose lines of the company's name.
func (b *block) nameLine() int {
	first := -1
	for i, l := range b.loose {
		if _, _, ok := register.SplitLegalForm(l.text); ok {
			return i
		}
		if first < 0 && readsAsPerson(l.text) == nil && !positionLine(l.text) {
			first = i
		}
	}
	return first
}

// positionLine reports whether a line only names a position
// ("Geschäftsführer", "Managing Director").
func positionLine(line string) bool {
	words := textfold.Tokens(textfold.Fold(line))
	for _, w := range words {
		if !positionWords[w] {
			return false
		}
	}
	return len(words) > 0
}
