package resolver

import (
	"strings"

	"companydocs"
	"companydocs/register"
)

// A clue is one piece of evidence a request gives about the company it
// means, whatever the request's shape: a typed text, the lines of a
// pasted block and the properties beside them are each read into one
// list of clues (clueList), and one scorer (weighClues) weighs them
// against every candidate.
type clue struct {
	kind   clueKind
	source clueSource
	// text is the clue as given ("Amtsgericht Marburg", "Hauptstr. 5").
	text string
	// words are its folded words (a seat, officer or address), plain the
	// seat's words in the plain spelling splitSeat compares (plainOf).
	words, plain []string
	// ref is a register reference, lei an LEI, court a court's code, form
	// a legal form: what the clue of that kind names.
	ref   register.Ref
	lei   register.LEI
	court string
	form  register.LegalForm
}

// clueKind says what a clue names.
type clueKind uint8

// The kinds of clue.
const (
	clueName clueKind = iota
	clueSeat
	cluePostcode
	clueAddress
	clueCourt
	clueRegister
	clueLEI
	clueOfficer
	clueLegalForm
	clueFormerName
)

// clueSource says where a clue came from.
type clueSource uint8

// The sources of clues.
const (
	// fromText is a typed text (a one-line query).
	fromText clueSource = iota
	// fromLine is a line of a pasted block.
	fromLine
	// fromProperty is a property beside the query (Properties).
	fromProperty
	// fromAside is a word set aside: it names nothing weighed.
	fromAside
)

// clueList is the clues of a request, in the order read.
type clueList []clue

// add appends a clue.
func (l *clueList) add(c clue) { *l = append(*l, c) }

// first returns the first clue of a kind from one of the sources.
func (l clueList) first(kind clueKind, sources ...clueSource) (clue, bool) {
	for _, c := range l {
		if c.kind == kind && hasSource(sources, c.source) {
			return c, true
		}
	}
	return clue{}, false
}

// has reports whether the list holds a clue of a kind from one of the
// sources.
func (l clueList) has(kind clueKind, sources ...clueSource) bool {
	_, ok := l.first(kind, sources...)
	return ok
}

// all returns the clues of a kind from one of the sources.
func (l clueList) all(kind clueKind, sources ...clueSource) []clue {
	return l.appendAll(nil, kind, sources...)
}

// appendAll appends the clues all returns to dst.
func (l clueList) appendAll(dst []clue, kind clueKind, sources ...clueSource) []clue {
	for _, c := range l {
		if c.kind == kind && hasSource(sources, c.source) {
			dst = append(dst, c)
		}
	}
	return dst
}

func hasSource(sources []clueSource, s clueSource) bool {
	for _, x := range sources {
		if x == s {
			return true
		}
	}
	return false
}

// clueWeight is what a clue of a kind from a source adds to a candidate
// it agrees with, and takes from one it disagrees with. A pasted line's
// person or street that a candidate does not bear takes nothing: an
// imprint names other persons and addresses too.
type clueWeight struct{ agree, disagree float64 }

// clueWeights are the weights by source and kind (see weights.go for
// the constants and how they add up).
var clueWeights = map[clueSource]map[clueKind]clueWeight{
	fromProperty: {
		clueCourt:     {PropertyCourtWeight, PropertyCourtWeight},
		clueSeat:      {SeatWeight, SeatWeight},
		clueAddress:   {PropertyAddressWeight, PropertyMismatchPenalty},
		clueOfficer:   {PropertyOfficerWeight, PropertyMismatchPenalty},
		clueLegalForm: {LegalFormWeight, LegalFormWeight},
	},
	fromText: {
		clueCourt: {PropertyCourtWeight, PropertyCourtWeight},
	},
	fromLine: {
		clueCourt:   {PropertyCourtWeight, PropertyCourtWeight},
		clueAddress: {PastedAddressWeight, 0},
		clueOfficer: {PastedOfficerWeight, 0},
	},
}

// clueOrder is the order in which a source's clues are weighed, which is
// the order of their reasons.
var clueOrder = map[clueSource][]clueKind{
	fromProperty: {clueCourt, clueSeat, clueAddress, clueOfficer, clueLegalForm},
	fromText:     {clueCourt},
	fromLine:     {clueOfficer, clueAddress, clueCourt},
}

// weighClues is the one scorer of clues beside the name: it weighs what
// the clues of the sources given say of a candidate (clueWeights), and
// reports whether a person or address confirmed it. An identifier given
// as a property for another entry (register number, LEI) makes the
// candidate conflicting: never anchored, capped below exact, whatever its
// name says, since ordering the wrong company is the worst answer there
// is. A clue that disagrees lowers the confidence and keeps a text match
// from being anchored; on a candidate anchored by its identifier it only
// lowers it, not below exact: a company moves, changes its form and its
// officers under the same register entry.
func weighClues(pq *parsedQuery, s *scored, sources ...clueSource) (confirmed bool) {
	// weighed for every candidate: the clues are gathered on the stack
	var buf [4]clue
	for _, source := range sources {
		for _, kind := range clueOrder[source] {
			clues := pq.clues.appendAll(buf[:0], kind, source)
			if len(clues) > 0 && weighKind(pq, s, kind, clues, clueWeights[source][kind]) {
				confirmed = true
			}
		}
		if source == fromProperty {
			// last, so that nothing above lifts a conflicting candidate
			// over its cap
			weighIdentifiers(pq, s)
		}
	}
	s.confidence = clamp(s.confidence)
	return confirmed
}

// weighKind weighs the clues of one kind and source; it reports whether
// a person or address agreed.
func weighKind(pq *parsedQuery, s *scored, kind clueKind, clues []clue, w clueWeight) bool {
	switch kind {
	case clueCourt:
		weighCourt(s, clues[0], w)
	case clueSeat:
		weighSeat(s, clues[0])
	case clueAddress:
		return weighAddress(s, clues[0], w)
	case clueOfficer:
		return weighOfficers(s, clues, w)
	case clueLegalForm:
		if !pq.hasForm {
			weighForm(s, clues[0], w)
		}
	}
	return false
}

// weighCourt weighs a court named without a register number; a candidate
// found by its register number had its court weighed with it
// (scoreRegister).
func weighCourt(s *scored, c clue, w clueWeight) {
	p := s.p
	if s.registerMatch || p.Ref.Court == "" {
		return
	}
	if register.SameCourt(p.Ref.Court, c.court) {
		s.agree(w.agree, ReasonCourtMatches, companydocs.ReasonParams{Court: courtName(p.Ref.Court)})
	} else {
		s.disagree(w.disagree, ReasonCourtDiffers, companydocs.ReasonParams{Court: courtName(p.Ref.Court), QueryCourt: courtName(c.court)})
	}
}

// weighSeat weighs a seat given: the whole seat agreeing adds SeatWeight
// (once: a seat in the query's text counted it already), a part of the
// place given ("Neunkirchen" of "Neunkirchen-Altenseelbach") half of it,
// and no name and seat anchor on it.
func weighSeat(s *scored, c clue) {
	p := s.p
	if len(c.words) == 0 || p.Seat == "" {
		return
	}
	switch agrees, whole := seatAgrees(c, p); {
	case !agrees:
		s.disagree(SeatWeight, ReasonSeatDiffers, companydocs.ReasonParams{Seat: p.Seat, QuerySeat: c.text})
	case s.seatMatched:
	case whole:
		s.seatMatched = true
		s.agree(SeatWeight, ReasonSeatMatches, companydocs.ReasonParams{Seat: p.Seat})
	default:
		s.agree(SeatWeight/2, ReasonSeatMatches, companydocs.ReasonParams{Seat: p.Seat})
	}
}

// weighAddress weighs a street with house number and postcode.
func weighAddress(s *scored, c clue, w clueWeight) bool {
	p := s.p
	if p.Address == "" {
		return false
	}
	address := strings.TrimSuffix(strings.TrimSpace(p.Address), ".")
	if addressHolds(p, c.text) {
		s.agree(w.agree, ReasonAddressMatches, companydocs.ReasonParams{Address: address})
		return true
	}
	if w.disagree > 0 {
		s.disagree(w.disagree, ReasonAddressDiffers, companydocs.ReasonParams{Address: address, QueryAddress: c.text})
	}
	return false
}

// weighOfficers weighs persons: the first of them who is an officer of
// the candidate agrees.
func weighOfficers(s *scored, clues []clue, w clueWeight) bool {
	p := s.p
	for _, c := range clues {
		if o, ok := officerNamed(p, c.words); ok {
			s.agree(w.agree, ReasonOfficerMatches, companydocs.ReasonParams{Person: o.Name, Position: o.Position})
			return true
		}
	}
	if w.disagree > 0 && len(p.Officers) > 0 {
		s.disagree(w.disagree, ReasonOfficerNotFound, companydocs.ReasonParams{Person: strings.Join(clues[0].words, " ")})
	}
	return false
}

// weighForm weighs a legal form given beside a text that names none.
func weighForm(s *scored, c clue, w clueWeight) {
	form := formOf(s.p)
	switch {
	case form == c.form.Code:
		s.agree(w.agree, ReasonLegalFormMatches, companydocs.ReasonParams{LegalForm: c.form.Code})
	case formDiffers(form, c.form.Code):
		s.disagree(w.disagree, ReasonLegalFormDiffers, companydocs.ReasonParams{LegalForm: form, QueryLegalForm: c.form.Code})
	}
}

// weighIdentifiers marks a candidate that a register number or an LEI
// given as a property names another entry than.
func weighIdentifiers(pq *parsedQuery, s *scored) {
	p := s.p
	if c, ok := pq.clues.first(clueRegister, fromProperty); ok && !sameNumber(c.ref, p.Ref) {
		s.identityConflict(ReasonRegisterNumberDiffers, companydocs.ReasonParams{RegisterNumber: registryNumber(p.Ref), QueryRegisterNumber: c.ref.NumberKey()})
	}
	if c, ok := pq.clues.first(clueLEI, fromProperty); ok && !carriesLEI(p, c.lei) && pq.leiKnown {
		s.identityConflict(ReasonLEIDiffers, companydocs.ReasonParams{QueryLEI: string(c.lei)})
	}
}

// agree adds a clue's weight; an anchored candidate is at its ceiling
// already.
func (s *scored) agree(weight float64, code string, params companydocs.ReasonParams) {
	s.reason(code, params)
	if !s.anchored {
		s.confidence += weight
		s.parts.clues += weight
	}
}

// disagree takes a clue's weight away and keeps a text match from being
// anchored; an identifier anchor stays exact (weighClues).
func (s *scored) disagree(weight float64, code string, params companydocs.ReasonParams) {
	s.reason(code, params)
	s.disagreed = true
	s.parts.clues -= weight
	if s.anchored {
		s.confidence = max(s.confidence-weight, ExactThreshold)
		return
	}
	s.confidence -= weight
}

// identityConflict marks a candidate that an identifier given names
// another entry than: never exact.
func (s *scored) identityConflict(code string, params companydocs.ReasonParams) {
	s.reason(code, params)
	s.conflict, s.disagreed, s.anchored = true, true, false
	s.confidence -= IdentifierConflictPenalty
	if s.confidence > IdentifierConflictCap {
		s.uncapped = max(s.uncapped, s.confidence)
		s.confidence = IdentifierConflictCap
	}
}

// sameNumber reports whether an entry bears the register type and
// number given; its court is weighed on its own (a company that moved
// keeps its number at its new court only by chance, and the court says
// which).
func sameNumber(given, entry register.Ref) bool {
	return given.Type == entry.Type && given.Number == entry.Number
}

func carriesLEI(p *companydocs.Profile, lei register.LEI) bool {
	for _, l := range p.LEIs {
		if l.LEI == lei {
			return true
		}
	}
	return false
}

// seatAgrees reports whether the city given names the candidate's seat,
// and whether it names it whole: the city is the seat, or its first words
// ("Frankfurt" for "Frankfurt am Main", "Koeln" for "Köln"); not whole
// when the seat is only a part of the city given ("Neunkirchen" of
// "Neunkirchen-Altenseelbach").
func seatAgrees(c clue, p *companydocs.Profile) (agrees, whole bool) {
	rest, ok := splitSeat(c.words, c.plain, newSeatForms(p.Seat))
	return ok, ok && len(rest) == 0
}
