package resolver

import (
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// readProperties reads validated properties into clues (source
// fromProperty), each once: the register reference (register_number with
// court) and the LEI are looked up as identifiers; the seat, address,
// officer, court and legal form confirm or contradict each candidate
// (weighClues). None of them is ever added to the query's text. The notes
// say which properties could not be read, and were not used.
func readProperties(p Properties) (clueList, []companydocs.ReasonDetail) {
	var r propertyReader
	if p.IsZero() {
		return nil, nil
	}
	r.city(p.City)
	r.address(p.Address, p.PostalCode)
	r.court(p.Court)
	r.register(p.RegisterNumber)
	r.lei(p.LEI)
	if words := textfold.Tokens(textfold.Fold(p.Officer)); len(words) > 0 {
		r.clues.add(clue{kind: clueOfficer, source: fromProperty, text: p.Officer, words: words})
	}
	r.legalForm(p.LegalForm)
	return r.clues, r.notes
}

// propertyReader reads properties into clues and notes.
type propertyReader struct {
	clues clueList
	notes []companydocs.ReasonDetail
}

func (r *propertyReader) unread(property, value string) {
	r.notes = append(r.notes, companydocs.ReasonDetail{Code: NotePropertyUnread, Params: companydocs.ReasonParams{Property: property, Text: value}})
}

func (r *propertyReader) city(city string) {
	words := textfold.Tokens(textfold.Fold(city))
	if len(words) == 0 {
		return
	}
	c := clue{kind: clueSeat, source: fromProperty, text: city, words: words}
	for _, t := range words {
		c.plain = append(c.plain, plainOf(t))
	}
	r.clues.add(c)
}

// address reads the street and postcode given, as addressHolds reads
// them together.
func (r *propertyReader) address(street, postcode string) {
	if postcode != "" {
		r.clues.add(clue{kind: cluePostcode, source: fromProperty, text: postcode})
	}
	if address := strings.TrimSpace(street + " " + postcode); address != "" {
		r.clues.add(clue{kind: clueAddress, source: fromProperty, text: address})
	}
}

func (r *propertyReader) court(court string) {
	if court == "" {
		return
	}
	if c, ok := register.LookupCourt(court); ok {
		r.clues.add(clue{kind: clueCourt, source: fromProperty, text: court, court: c.Code})
	} else {
		r.unread("court", court)
	}
}

// register reads a register number, at the court given beside it when
// it names none.
func (r *propertyReader) register(number string) {
	if number == "" {
		return
	}
	ref, _, ok := register.FindRef(number)
	if !ok {
		r.unread("register_number", number)
		return
	}
	if court, given := r.clues.first(clueCourt, fromProperty); given && ref.Court == "" {
		ref.Court = court.court
	}
	r.clues.add(clue{kind: clueRegister, source: fromProperty, text: number, ref: ref})
}

func (r *propertyReader) lei(lei string) {
	if lei == "" {
		return
	}
	if parsed, err := register.ParseLEI(trimLEIPrefix(lei)); err == nil {
		r.clues.add(clue{kind: clueLEI, source: fromProperty, text: lei, lei: parsed})
	} else {
		r.unread("lei", lei)
	}
}

func (r *propertyReader) legalForm(form string) {
	if form == "" {
		return
	}
	if base, f, ok := register.SplitLegalForm(form); ok && len(base) == 0 {
		r.clues.add(clue{kind: clueLegalForm, source: fromProperty, text: form, form: f})
	} else {
		r.unread("legal_form", form)
	}
}

// softClues counts the clues beside the name that tell one company of a
// name from another as a seat typed after it does: a seat, an address,
// an officer given as properties. (Identifiers are counted by isShort
// itself.)
func (l clueList) softClues() int {
	n := 0
	for _, kind := range []clueKind{clueSeat, clueAddress, clueOfficer} {
		if l.has(kind, fromProperty) {
			n++
		}
	}
	return n
}
