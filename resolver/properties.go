package resolver

import (
	"strings"

	"companydocs"
)

// givenClues are a request's properties as the resolver reads them, each
// once: the register reference (register_number with court) and the LEI
// are looked up as identifiers; the seat, address, officer, court and
// legal form confirm or contradict each candidate (applyProperties). None
// of them is ever added to the query's text.
type givenClues struct {
	ref    companydocs.RegisterRef
	hasRef bool
	lei    companydocs.LEI
	// court is the court code of the court property, used on its own
	// when no register number is given.
	court string
	// city is the seat given as folded tokens, cityPlain in the plain
	// spelling splitSeat compares (plainOf); display the text given.
	city, cityPlain []string
	cityText        string
	// address is the street and postcode given, as addressHolds reads it.
	address string
	officer []string
	form    companydocs.LegalForm
	hasForm bool
	// notes say which properties could not be read, and were not used.
	notes []companydocs.ReasonDetail
}

// readProperties reads validated properties; nil when none is given.
func readProperties(p Properties) *givenClues {
	if p.IsZero() {
		return nil
	}
	g := &givenClues{cityText: p.City, city: companydocs.Tokens(companydocs.Fold(p.City))}
	for _, t := range g.city {
		g.cityPlain = append(g.cityPlain, plainOf(t))
	}
	g.address = strings.TrimSpace(p.Address + " " + p.PostalCode)
	if p.Court != "" {
		if c, ok := companydocs.LookupCourt(p.Court); ok {
			g.court = c.Code
		} else {
			g.unread("court", p.Court)
		}
	}
	if p.RegisterNumber != "" {
		if ref, _, ok := companydocs.FindRegisterRef(p.RegisterNumber); ok {
			if ref.Court == "" {
				ref.Court = g.court
			}
			g.ref, g.hasRef = ref, true
		} else {
			g.unread("register_number", p.RegisterNumber)
		}
	}
	if p.LEI != "" {
		if lei, err := companydocs.ParseLEI(trimLEIPrefix(p.LEI)); err == nil {
			g.lei = lei
		} else {
			g.unread("lei", p.LEI)
		}
	}
	if p.Officer != "" {
		g.officer = companydocs.Tokens(companydocs.Fold(p.Officer))
	}
	if p.LegalForm != "" {
		if base, form, ok := companydocs.SplitLegalForm(p.LegalForm); ok && len(base) == 0 {
			g.form, g.hasForm = form, true
		} else {
			g.unread("legal_form", p.LegalForm)
		}
	}
	return g
}

func (g *givenClues) unread(property, value string) {
	g.notes = append(g.notes, companydocs.ReasonDetail{Code: NotePropertyUnread, Params: companydocs.ReasonParams{Property: property, Text: value}})
}

// softClues counts the clues beside the name that tell one company of a
// name from another as a seat typed after it does: a seat, an address,
// an officer. (Identifiers are counted by isShort itself.)
func (g *givenClues) softClues() int {
	if g == nil {
		return 0
	}
	n := 0
	for _, given := range []bool{len(g.city) > 0, g.address != "", len(g.officer) > 0} {
		if given {
			n++
		}
	}
	return n
}

// applyProperties weighs what the properties say of a candidate. An
// identifier given for another entry (register number, LEI) makes the
// candidate conflicting: never anchored, capped below exact, whatever its
// name says, since ordering the wrong company is the worst answer there
// is. A seat, address, officer, court or legal form that disagrees lowers
// the confidence and keeps a text match from being anchored; on a
// candidate anchored by its identifier it only lowers it, not below
// exact: a company moves, changes its form and its officers under the
// same register entry.
func applyProperties(pq *parsedQuery, s *scored) {
	g := pq.props
	if g == nil {
		return
	}
	p := s.p
	// a candidate found by its register number had its court weighed
	// with it (scoreRegister)
	if g.court != "" && !s.registerMatch && p.Ref.Court != "" {
		if companydocs.SameCourt(p.Ref.Court, g.court) {
			s.agree(PropertyCourtWeight, ReasonCourtMatches, companydocs.ReasonParams{Court: courtName(p.Ref.Court)})
		} else {
			s.disagree(PropertyCourtWeight, ReasonCourtDiffers, companydocs.ReasonParams{Court: courtName(p.Ref.Court), QueryCourt: courtName(g.court)})
		}
	}
	if len(g.city) > 0 && p.Seat != "" {
		switch agrees, whole := seatAgrees(g, p); {
		case !agrees:
			s.disagree(SeatWeight, ReasonSeatDiffers, companydocs.ReasonParams{Seat: p.Seat, QuerySeat: g.cityText})
		case s.seatMatched: // counted from the query's text already
		case whole:
			s.seatMatched = true
			s.agree(SeatWeight, ReasonSeatMatches, companydocs.ReasonParams{Seat: p.Seat})
		default:
			// the seat is a part of the place given ("Neunkirchen" of
			// "Neunkirchen-Altenseelbach"): half the weight, and no
			// name and seat anchor on it
			s.agree(SeatWeight/2, ReasonSeatMatches, companydocs.ReasonParams{Seat: p.Seat})
		}
	}
	if g.address != "" && p.Address != "" {
		address := strings.TrimSuffix(strings.TrimSpace(p.Address), ".")
		if addressHolds(p, g.address) {
			s.agree(PropertyAddressWeight, ReasonAddressMatches, companydocs.ReasonParams{Address: address})
		} else {
			s.disagree(PropertyMismatchPenalty, ReasonAddressDiffers, companydocs.ReasonParams{Address: address, QueryAddress: g.address})
		}
	}
	if len(g.officer) > 0 && len(p.Officers) > 0 {
		if o, ok := officerNamed(p, g.officer); ok {
			s.agree(PropertyOfficerWeight, ReasonOfficerMatches, companydocs.ReasonParams{Person: o.Name, Position: o.Position})
		} else {
			s.disagree(PropertyMismatchPenalty, ReasonOfficerNotFound, companydocs.ReasonParams{Person: strings.Join(g.officer, " ")})
		}
	}
	if g.hasForm && !pq.hasForm && p.LegalForm != "" {
		if p.LegalForm == g.form.Code {
			s.agree(LegalFormWeight, ReasonLegalFormMatches, companydocs.ReasonParams{LegalForm: g.form.Code})
		} else {
			s.disagree(LegalFormWeight, ReasonLegalFormDiffers, companydocs.ReasonParams{LegalForm: p.LegalForm, QueryLegalForm: g.form.Code})
		}
	}
	// last, so that nothing above lifts a conflicting candidate over
	// its cap
	if g.hasRef && !sameNumber(g.ref, p.Ref) {
		s.identityConflict(ReasonRegisterNumberDiffers, companydocs.ReasonParams{RegisterNumber: registryNumber(p.Ref), QueryRegisterNumber: g.ref.NumberKey()})
	}
	if g.lei != "" && !carriesLEI(p, g.lei) && pq.leiKnown {
		s.identityConflict(ReasonLEIDiffers, companydocs.ReasonParams{QueryLEI: string(g.lei)})
	}
	s.confidence = clamp(s.confidence)
}

// agree adds a property's weight; an anchored candidate is at its
// ceiling already.
func (s *scored) agree(weight float64, code string, params companydocs.ReasonParams) {
	s.reason(code, params)
	if !s.anchored {
		s.confidence += weight
	}
}

// disagree takes a property's weight away and keeps a text match from
// being anchored; an identifier anchor stays exact (applyProperties).
func (s *scored) disagree(weight float64, code string, params companydocs.ReasonParams) {
	s.reason(code, params)
	s.disagreed = true
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
func sameNumber(given, entry companydocs.RegisterRef) bool {
	return given.Type == entry.Type && given.Number == entry.Number
}

func carriesLEI(p *companydocs.Profile, lei companydocs.LEI) bool {
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
func seatAgrees(g *givenClues, p *companydocs.Profile) (agrees, whole bool) {
	rest, ok := splitSeat(g.city, g.cityPlain, newSeatForms(p.Seat))
	return ok, ok && len(rest) == 0
}
