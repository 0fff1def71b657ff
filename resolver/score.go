package resolver

import (
	"fmt"
	"math"
	"strings"

	"companydocs"
)

// scored is a candidate profile under evaluation.
type scored struct {
	p          *companydocs.Profile
	confidence float64
	reasons    []string
	// anchored is set when an identifier pins the candidate down; only
	// anchored candidates may be labelled exact.
	anchored bool
	// registerMatch is set for candidates found by their register number.
	registerMatch bool
	// seatMatched is set when the query named the candidate's seat.
	seatMatched bool
	// nameExact is set when the normalised name equals the query's.
	nameExact bool
	// uncapped is the confidence before any cap: among candidates capped
	// to the same value, the one with more evidence ranks first.
	uncapped float64
	// evidence is set when the query's text supports the candidate at all.
	evidence bool
	// field is where a text candidate's evidence came from, person the
	// folded name of the officer who matched.
	field, person string
	// capped notes caps that applied, in words, once each.
	capped map[string]bool
}

func (s *scored) reason(format string, args ...any) {
	s.reasons = append(s.reasons, fmt.Sprintf(format, args...))
}

// cap lowers the confidence to limit and says why, once.
func (s *scored) cap(limit float64, why string) {
	if s.confidence <= limit {
		return
	}
	s.uncapped = max(s.uncapped, s.confidence)
	s.confidence = limit
	if s.capped == nil {
		s.capped = map[string]bool{}
	}
	if !s.capped[why] {
		s.capped[why] = true
		s.reasons = append(s.reasons, why)
	}
}

// Fields a text candidate's best evidence came from.
const (
	fieldName       = "name"
	fieldFormerName = "former_name"
	fieldOfficer    = "officer"
	fieldAddress    = "address"
	fieldSeat       = "seat"
)

// evidence is the best explanation of a text candidate.
type evidence struct {
	score   float64
	reasons []string
	seat    bool
	exact   bool
	// field says where the evidence came from; person is the folded name
	// of the officer who matched.
	field  string
	person string
}

// textEvidence scores a profile against the query's name tokens, trying the
// current name, previous names, officers and the address, with and without
// the tokens that spell its seat and the noise words around a name. It
// returns the best explanation.
func textEvidence(pq *parsedQuery, p *companydocs.Profile) evidence {
	var best evidence
	consider := func(e evidence) {
		if e.score > best.score {
			best = e
		}
	}
	f := newProfileFields(pq, p)
	for _, reading := range pq.readings {
		for _, withSeat := range []bool{false, true} {
			tokens := reading.tokens
			seatOK := false
			if withSeat {
				if tokens, seatOK = splitSeat(reading.tokens, reading.plain, f.seat); !seatOK {
					continue
				}
				if len(tokens) == 0 {
					consider(evidence{score: SeatWeight, seat: true, field: fieldSeat, reasons: []string{
						fmt.Sprintf("Seat %s matches", p.Seat), "Only a seat was given, no name"}})
					continue
				}
			}
			fieldEvidence(pq, p, f, tokens, seatOK, consider)
		}
	}
	return best
}

// profileFields are a profile's names folded once, not once per reading
// of the query.
type profileFields struct {
	base     tokenList
	previous []tokenList
	officers []tokenList
	address  tokenList
	seat     seatForms
}

// newProfileFields folds the fields the query can match: officers unless
// the query names a legal form outside deep mode (a person has none), the
// address when the query may hold one.
func newProfileFields(pq *parsedQuery, p *companydocs.Profile) *profileFields {
	baseWords, _, _ := companydocs.SplitLegalForm(p.Name)
	f := &profileFields{base: newTokenList(dropNoise(baseWords))}
	f.previous = make([]tokenList, len(p.PreviousNames))
	for i, prev := range p.PreviousNames {
		pb, _, _ := companydocs.SplitLegalForm(prev)
		f.previous[i] = newTokenList(dropNoise(pb))
	}
	f.seat = newSeatForms(p.Seat)
	if !pq.hasForm || pq.deep {
		f.officers = make([]tokenList, len(p.Officers))
		for i, o := range p.Officers {
			f.officers[i] = newTokenList(companydocs.Tokens(companydocs.Fold(o.Name)))
		}
	}
	if p.Address != "" && (pq.address || pq.houseNumber) {
		f.address = newTokenList(companydocs.Tokens(companydocs.Fold(p.Address + " " + p.Seat)))
	}
	return f
}

// fieldEvidence offers consider the evidence of tokens in every field.
func fieldEvidence(pq *parsedQuery, p *companydocs.Profile, f *profileFields, tokens []string, seatOK bool, consider func(evidence)) {
	seatBonus := 0.0
	var seatReasons []string
	if seatOK {
		seatBonus = SeatWeight
		seatReasons = []string{fmt.Sprintf("Seat %s matches", p.Seat)}
	}
	with := func(reason string) []string { return append([]string{reason}, seatReasons...) }
	query := newTokenList(tokens)
	m := matchName(query, f.base)
	e := evidence{score: NameWeight*m.score + seatBonus, seat: seatOK, field: fieldName}
	e.reasons = append(nameReasons(m, tokens, f.base.words), seatReasons...)
	if m.numberConflict {
		e.score -= NumberMismatchPenalty
		e.reasons = append(e.reasons, "Numbers in the name differ")
	}
	e.exact = m.score >= fullNameMatch && strings.Join(tokens, " ") == strings.Join(f.base.words, " ")
	consider(e)
	for i, prev := range p.PreviousNames {
		pm := matchName(query, f.previous[i])
		if pm.score < partialNameMatch || pm.numberConflict {
			continue
		}
		consider(evidence{score: NameWeight*pm.score*FormerNameFactor + seatBonus, seat: seatOK, field: fieldFormerName,
			reasons: with(fmt.Sprintf("Former name %s matches", prev))})
	}
	officerFactor := OfficerFactor
	if len(pq.person) > 0 {
		officerFactor = PersonOfficerFactor
	}
	for i, officer := range f.officers {
		o := p.Officers[i]
		om := matchName(query, officer)
		if om.recall < fullRecall {
			continue
		}
		consider(evidence{score: NameWeight*om.score*officerFactor + seatBonus, seat: seatOK, field: fieldOfficer,
			person:  strings.Join(officer.words, " "),
			reasons: with(fmt.Sprintf("%s %s matches", positionText(o), o.Name))})
	}
	if (pq.address || pq.houseNumber) && len(f.address.words) > 0 {
		am := matchName(query, f.address)
		if am.recall >= closeNameMatch && !numbersDiffer(query.words, f.address.words) {
			consider(evidence{score: NameWeight*am.recall*AddressFactor + seatBonus, seat: seatOK, field: fieldAddress,
				reasons: with(fmt.Sprintf("Registered address %s matches", strings.TrimSuffix(strings.TrimSpace(p.Address), ".")))})
		}
	}
}

// positionText names an officer's position in English where it is one of
// the common ones.
func positionText(o companydocs.Officer) string {
	switch strings.ToLower(o.Position) {
	case "geschäftsführer", "geschäftsführerin":
		return "Managing director"
	case "vorstand", "vorstandsmitglied", "vorstandsvorsitzender":
		return "Board member"
	case "prokurist", "prokuristin":
		return "Authorised signatory (Prokurist)"
	case "inhaber", "inhaberin":
		return "Owner"
	case "persönlich haftender gesellschafter", "persönlich haftende gesellschafterin":
		return "General partner"
	case "liquidator", "liquidatorin":
		return "Liquidator"
	case "":
		return "Officer"
	}
	return "Officer (" + o.Position + ")"
}

// nameReasons explains a name match in one sentence.
func nameReasons(m nameMatch, query, name []string) []string {
	switch {
	case m.score >= fullNameMatch:
		return []string{"Name matches after normalisation"}
	case m.score >= closeNameMatch:
		return []string{"Name matches closely (spelling variant or extra words)"}
	case m.score >= partialNameMatch && m.recall >= fullRecall:
		return []string{"Name contains every word of the query, and more"}
	case m.score >= partialNameMatch:
		return []string{fmt.Sprintf("Name matches partly (%d%% agreement with the query's words)", int(math.Round(m.recall*100)))}
	case m.score > 0:
		return []string{"Name matches weakly"}
	}
	if len(query) == 0 {
		return nil
	}
	return []string{"Name does not match"}
}

// legalFormEvidence compares the query's legal form with the profile's.
func legalFormEvidence(pq *parsedQuery, p *companydocs.Profile, s *scored) {
	if !pq.hasForm {
		return
	}
	if p.LegalForm == pq.form.Code {
		s.confidence += LegalFormWeight
		s.reason("Legal form %s matches", pq.form.Code)
		return
	}
	if p.LegalForm != "" {
		s.reason("Legal form differs: %s, not %s", p.LegalForm, pq.form.Code)
	}
}

// statusEvidence adds verification and register status, which never raise
// eligibility by themselves but explain it.
func statusEvidence(p *companydocs.Profile, s *scored) {
	if p.Verified {
		s.confidence += VerifiedWeight
	}
	switch {
	case p.Source == companydocs.SourceDiscovery && !p.Verified:
		s.reason("Discovery record not verified: %s", missingText(p))
		s.cap(UnverifiedCap, "Unverified discovery record: confidence capped")
	case p.Source == companydocs.SourceDiscovery:
		s.reason("Verified discovery record (GLEIF, fully corroborated)")
	}
	if p.Removed {
		s.reason("Removed from the register: not orderable")
	} else if p.Verified && !p.OrderingEligible() {
		s.reason("The register holds no AD or CD document for this entry: not orderable")
	}
}

func missingText(p *companydocs.Profile) string {
	if p.Discovery == nil || len(p.Discovery.Missing) == 0 {
		return "no authoritative register confirms it"
	}
	return strings.Join(p.Discovery.Missing, "; ")
}

// label turns a confidence into a label; only anchored candidates can be
// exact.
func label(s *scored) string {
	switch {
	case s.anchored && s.confidence >= ExactThreshold:
		return companydocs.LabelExact
	case s.confidence >= PossibleThreshold && (s.p.Verified || s.p.Source != companydocs.SourceDiscovery):
		return companydocs.LabelPossible
	}
	return companydocs.LabelNeedsVerification
}
