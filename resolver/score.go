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

// textEvidence scores a profile against the query's name tokens, trying the
// current name, previous names and officers, with and without the tokens
// that spell its seat. It returns the best explanation.
func textEvidence(pq *parsedQuery, p *companydocs.Profile) (score float64, reasons []string, seat, exact bool) {
	type try struct {
		score   float64
		reasons []string
		seat    bool
		exact   bool
	}
	var best try
	consider := func(t try) {
		if t.score > best.score {
			best = t
		}
	}
	baseWords, _, _ := companydocs.SplitLegalForm(p.Name)
	base := newTokenList(dropNoise(baseWords))
	// Former names and officers are folded once, not once per reading of
	// the query.
	previous := make([]tokenList, len(p.PreviousNames))
	for i, prev := range p.PreviousNames {
		pb, _, _ := companydocs.SplitLegalForm(prev)
		previous[i] = newTokenList(dropNoise(pb))
	}
	officers := make([]tokenList, len(p.Officers))
	for i, o := range p.Officers {
		officers[i] = newTokenList(companydocs.Tokens(companydocs.Fold(o.Name)))
	}
	for _, withSeat := range []bool{false, true} {
		tokens := pq.tokens
		seatOK := false
		if withSeat {
			if tokens, seatOK = splitSeat(pq.tokens, p.Seat); !seatOK {
				continue
			}
			if len(tokens) == 0 {
				consider(try{score: SeatWeight, seat: true, reasons: []string{
					fmt.Sprintf("Seat %s matches", p.Seat), "Only a seat was given, no name"}})
				continue
			}
		}
		seatBonus := 0.0
		var seatReasons []string
		if seatOK {
			seatBonus = SeatWeight
			seatReasons = []string{fmt.Sprintf("Seat %s matches", p.Seat)}
		}
		query := newTokenList(tokens)
		m := matchName(query, base)
		t := try{score: NameWeight*m.score + seatBonus, seat: seatOK}
		t.reasons = append(nameReasons(m, tokens, base.words), seatReasons...)
		if m.numberConflict {
			t.score -= NumberMismatchPenalty
			t.reasons = append(t.reasons, "Numbers in the name differ")
		}
		t.exact = m.score >= fullNameMatch && strings.Join(tokens, " ") == strings.Join(base.words, " ")
		consider(t)
		for i, prev := range p.PreviousNames {
			pm := matchName(query, previous[i])
			if pm.score < partialNameMatch || pm.numberConflict {
				continue
			}
			consider(try{
				score:   NameWeight*pm.score*FormerNameFactor + seatBonus,
				reasons: append([]string{fmt.Sprintf("Former name '%s' matches", prev)}, seatReasons...),
				seat:    seatOK,
			})
		}
		for i, o := range p.Officers {
			om := matchName(query, officers[i])
			if om.recall < fullRecall {
				continue
			}
			consider(try{
				score:   NameWeight*om.score*OfficerFactor + seatBonus,
				reasons: append([]string{fmt.Sprintf("Officer %s (%s) matches", o.Name, positionOrRole(o))}, seatReasons...),
				seat:    seatOK,
			})
		}
	}
	return best.score, best.reasons, best.seat, best.exact
}

func positionOrRole(o companydocs.Officer) string {
	if o.Position != "" {
		return o.Position
	}
	return "officer"
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
		return []string{fmt.Sprintf("Name matches partly (%d%% of the query's words)", int(math.Round(m.recall*100)))}
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
