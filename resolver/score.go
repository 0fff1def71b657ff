package resolver

import (
	"math"
	"slices"
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// scored is a candidate profile under evaluation.
type scored struct {
	p          *companydocs.Profile
	confidence float64
	reasons    []companydocs.ReasonDetail
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
	// covers is set when the current name matches the query closely
	// (closeNameMatch: a spelling variant, a typo or an extra generic word
	// apart), or an officer or the address holds every word of it (in some
	// reading of the query).
	covers bool
	// field is where a text candidate's evidence came from, person the
	// folded name of the officer who matched.
	field, person string
	// capped notes the reason codes of caps that applied, once each.
	capped map[string]bool
	// disagreed is set when a property given disagrees with the
	// candidate (weighClues): a text match is then not anchored.
	// conflict is set when a register number or LEI given names another
	// entry, or the name given contradicts an identifier's entry.
	disagreed, conflict bool
	// parts are the components of the raw score, confidence.
	parts scoreParts
	// late is set for a candidate ranked after the first window
	// (resolveText), on a page longer than the window's candidates.
	late bool
}

// scoreParts are the components a candidate's raw score (scored.confidence,
// before its caps) was added up from, kept beside it for the confidence a
// client sees (confidenceOf).
type scoreParts struct {
	// text is the best evidence of the query's text (textEvidence: a
	// name, former name, officer or address, with the seat).
	text float64
	// identifier is what a register number (with its court, suffix and
	// the name beside it) or an LEI gave.
	identifier float64
	// form is the legal form typed agreeing, verified the verified
	// entry's weight.
	form, verified float64
	// clues is what the clues beside the name added and took away
	// (weighClues).
	clues float64
}

// confidenceOf is the one place the confidence a client sees is computed:
// the probability, fitted on the evaluation (calibration.go), that a
// candidate is the company meant, from its score, its reasons, its place
// and its margin (confidenceInput), rounded to three places.
func confidenceOf(in confidenceInput) float64 {
	return math.Round(calibratedConfidence(in)*1000) / 1000
}

// reason adds a reason; params holds the values its sentence names.
func (s *scored) reason(code string, params companydocs.ReasonParams) {
	s.reasons = append(s.reasons, companydocs.ReasonDetail{Code: code, Params: params})
}

// cap lowers the confidence to limit and says why (a reason code), once.
func (s *scored) cap(limit float64, code string, params companydocs.ReasonParams) {
	if s.confidence <= limit {
		return
	}
	s.uncapped = max(s.uncapped, s.confidence)
	s.confidence = limit
	if s.capped == nil {
		s.capped = map[string]bool{}
	}
	if !s.capped[code] {
		s.capped[code] = true
		s.reason(code, params)
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
	reasons []companydocs.ReasonDetail
	// named holds what a name's reasons are written from, once the
	// evidence is the best (nameEvidence.reasons): a name is matched in
	// several readings of the query, and a reason is some 300 bytes
	named  nameEvidence
	seat   bool
	exact  bool
	covers bool // see scored.covers
	// cut is set for a name that starts with a cut text (cutStart):
	// the legal form the text names is the name's own.
	cut bool
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
	covers := false
	consider := func(e evidence) {
		covers = covers || e.covers
		// of two readings that explain as much, the one whose name is
		// the query's as typed: a name that holds its seat twice
		// matches as well without one of them
		if e.score > best.score || e.score == best.score && e.exact && !best.exact {
			best = e
		}
	}
	f := newProfileFields(pq, p)
	for i := range pq.readings {
		reading := &pq.readings[i]
		whole := fieldMatch{pq: pq, p: p, f: f, query: reading.queryList(pq)}
		fieldEvidence(&whole, false, consider)
		tokens, seatOK := splitSeat(reading.tokens, reading.plain, f.seat)
		switch {
		case !seatOK:
		case len(tokens) == 0:
			consider(evidence{score: SeatWeight, seat: true, field: fieldSeat, reasons: []companydocs.ReasonDetail{
				{Code: ReasonSeatMatches, Params: companydocs.ReasonParams{Seat: p.Seat}}, {Code: ReasonSeatOnly}}})
		default:
			fieldEvidence(&fieldMatch{pq: pq, p: p, f: f, query: queryList(pq, tokens)}, true, consider)
		}
		if seatOK && f.holdsSeat() {
			// a name that carries its seat ("AIC Ingenieurgesellschaft
			// für Bauplanung Chemnitz GmbH" at Chemnitz) names the seat
			// where the query holds the name: its town word counts for
			// both, as when the town is typed after the name again; not
			// where the name matches only partly, whose town word may be
			// all it shares ("Agroservice GmbH Halberstadt" and
			// "Straßenbau Halberstadt GmbH"). The whole reading's name
			// match is the one above, seat and all.
			whole.withSeat()
			if e := whole.name(); e.covers {
				consider(e)
			}
		}
	}
	if e, ok := cutStart(pq, p); ok {
		consider(e)
		covers = true
	}
	best.covers = covers
	if best.named.set {
		best.reasons = best.named.reasons()
	}
	return best
}

// cutStart is the evidence of a name that starts with the words of a text
// a field's length cut (pq.cutWords), the last of them as the start of a
// word, and goes on after them ("Hartmann Gesellschaft mit besc" for
// "Hartmann Gesellschaft mit beschränkter Haftung, Trier"): the name as
// far as the field holds it, legal form and all, is the whole text, as
// much evidence as a whole name. A name that another starts with too
// ranks beside it, and the margin between them says so.
func cutStart(pq *parsedQuery, p *companydocs.Profile) (evidence, bool) {
	cut := pq.cutWords
	if len(cut) == 0 {
		return evidence{}, false
	}
	name := textfold.Tokens(textfold.Fold(p.Name))
	last := len(cut) - 1
	if len(name) < len(cut) || !strings.HasPrefix(plainOf(name[last]), plainOf(cut[last])) ||
		len(name) == len(cut) && len(name[last]) == len(cut[last]) {
		return evidence{}, false
	}
	for i := range last {
		if plainOf(name[i]) != plainOf(cut[i]) {
			return evidence{}, false
		}
	}
	return evidence{score: NameWeight * fullNameMatch, field: fieldName, covers: true, cut: true,
		reasons: []companydocs.ReasonDetail{{Code: ReasonNameStartsAsCut}}}, true
}

// sharesOnlyFirstName reports whether the query reads as a person whose
// surname the company's name does not hold, as written or within the typo
// budget ("Helmut Bachmann KG" for "Helmut Siegmund"): that name is
// another person's, and a first name in common is no evidence of it. Its
// officers, former names and address may still be. tokens are the query's
// words less the candidate's seat. The reading does not hold where the
// surname is the candidate's seat ("Günther Rosa Uetersen" for "Günther
// Rosa" at Uetersen), nor where the name holds a word the query has
// besides the person's ("Heinz-Aliwn zur Schüder BBG" for "Heinz-Alwin zur
// Schüder BBG"): such a word is evidence of the name.
func sharesOnlyFirstName(pq *parsedQuery, tokens []string, base tokenList) bool {
	if len(pq.person) < 2 || !slices.Contains(tokens, pq.person[len(pq.person)-1]) {
		return false
	}
	surname := pq.surname
	// a surname still being typed ("Kurt Meiss") matches the names it starts
	surname.start = pq.beingTyped(tokens, pq.person[len(pq.person)-1])
	for _, w := range base.toks {
		if sim, _ := tokenSims(surname, w); sim > simPrefix {
			return false
		}
	}
	for _, t := range tokens {
		if !slices.Contains(pq.person, t) && slices.Contains(base.words, t) {
			return false
		}
	}
	return true
}

// profileFields are a profile's names folded once, not once per reading
// of the query.
type profileFields struct {
	base     tokenList
	previous []tokenList
	officers []tokenList
	address  tokenList
	seat     seatForms
	// nameHoldsSeat says whether the current name holds the seat's
	// words, once asked (holdsSeat): only a query that holds them asks.
	nameHoldsSeat, seatChecked bool
}

// holdsSeat reports whether the current name holds the seat's words.
func (f *profileFields) holdsSeat() bool {
	if !f.seatChecked {
		_, f.nameHoldsSeat = splitSeat(f.base.words, f.base.plainWords(), f.seat)
		f.seatChecked = true
	}
	return f.nameHoldsSeat
}

// newProfileFields folds the fields the query can match: officers unless
// the query names a legal form outside deep mode (a person has none), the
// address when the query may hold one.
func newProfileFields(pq *parsedQuery, p *companydocs.Profile) *profileFields {
	baseWords, _, _ := register.SplitLegalForm(p.Name)
	f := &profileFields{base: newTokenList(dropNoise(baseWords))}
	f.previous = make([]tokenList, len(p.PreviousNames))
	for i, prev := range p.PreviousNames {
		pb, _, _ := register.SplitLegalForm(prev)
		f.previous[i] = newTokenList(dropNoise(pb))
	}
	f.seat = pq.seatFormsOf(p.Seat)
	if !pq.hasForm || pq.deep {
		f.officers = make([]tokenList, len(p.Officers))
		for i, o := range p.Officers {
			f.officers[i] = newTokenList(textfold.Tokens(textfold.Fold(o.Name)))
		}
	}
	if p.Address != "" && (pq.address || pq.houseNumber) {
		f.address = newTokenList(textfold.Tokens(textfold.Fold(p.Address + " " + p.Seat)))
	}
	return f
}

// fieldEvidence offers consider the evidence of the query's words (a
// reading, less the candidate's seat when seatOK) in every field, as
// matched by fe, whose name match the seat-in-name reading shares.
func fieldEvidence(fe *fieldMatch, seatOK bool, consider func(evidence)) {
	if seatOK {
		fe.withSeat()
	}
	if !sharesOnlyFirstName(fe.pq, fe.query.words, fe.f.base) {
		consider(fe.name())
	}
	fe.formerNames(consider)
	fe.officers(consider)
	fe.address(consider)
}

// fieldMatch is the query's words matched against a profile's fields,
// with the seat's bonus and reason when the reading left the seat out.
type fieldMatch struct {
	pq        *parsedQuery
	p         *companydocs.Profile
	f         *profileFields
	query     tokenList
	seatOK    bool
	seatBonus float64
	// nameMatch is the query matched against the current name, once
	// matched is set
	nameMatch nameMatch
	matched   bool
}

// withSeat counts the candidate's seat as matched.
func (fe *fieldMatch) withSeat() {
	fe.seatOK, fe.seatBonus = true, SeatWeight
}

// seatReasons are the reasons the seat adds: none unless it matched.
func seatReasons(seatOK bool, seat string) []companydocs.ReasonDetail {
	if !seatOK {
		return nil
	}
	return []companydocs.ReasonDetail{{Code: ReasonSeatMatches, Params: companydocs.ReasonParams{Seat: seat}}}
}

// with returns a reason followed by the seat's.
func (fe *fieldMatch) with(code string, params companydocs.ReasonParams) []companydocs.ReasonDetail {
	return append([]companydocs.ReasonDetail{{Code: code, Params: params}}, seatReasons(fe.seatOK, fe.p.Seat)...)
}

// name is the evidence of the current name.
func (fe *fieldMatch) name() evidence {
	tokens, f := fe.query.words, fe.f
	if !fe.matched {
		fe.nameMatch, fe.matched = matchName(fe.query, f.base), true
	}
	m := fe.nameMatch
	e := evidence{score: NameWeight*m.score + fe.seatBonus, seat: fe.seatOK, field: fieldName, covers: m.score >= closeNameMatch && !m.numberConflict}
	if m.numberConflict {
		e.score -= NumberMismatchPenalty
	}
	e.named = nameEvidence{nameMatch: m, set: true, query: tokens, name: f.base.words, seatOK: fe.seatOK, seat: fe.p.Seat}
	e.exact = m.score >= fullNameMatch && slices.Equal(tokens, f.base.words)
	return e
}

// nameEvidence is a name match, with what its reasons say.
type nameEvidence struct {
	nameMatch
	set         bool
	query, name []string
	seatOK      bool
	seat        string
}

// reasons explains the name match, and the seat's when it counted.
func (n *nameEvidence) reasons() []companydocs.ReasonDetail {
	reasons := append(nameReasons(n.nameMatch, n.query, n.name), seatReasons(n.seatOK, n.seat)...)
	if n.numberConflict {
		reasons = append(reasons, companydocs.ReasonDetail{Code: ReasonNameNumbersDiffer})
	}
	return reasons
}

// formerNames offers the evidence of each previous name that matches.
func (fe *fieldMatch) formerNames(consider func(evidence)) {
	for i, prev := range fe.p.PreviousNames {
		pm := matchName(fe.query, fe.f.previous[i])
		if pm.score < partialNameMatch || pm.numberConflict {
			continue
		}
		consider(evidence{score: NameWeight*pm.score*FormerNameFactor + fe.seatBonus, seat: fe.seatOK, field: fieldFormerName,
			reasons: fe.with(ReasonFormerNameMatches, companydocs.ReasonParams{FormerName: prev})})
	}
}

// officers offers the evidence of each officer who holds every word of
// the query, or is the person it names.
func (fe *fieldMatch) officers(consider func(evidence)) {
	officerFactor := OfficerFactor
	if len(fe.pq.person) > 0 {
		officerFactor = PersonOfficerFactor
	}
	for i, officer := range fe.f.officers {
		o := fe.p.Officers[i]
		om := matchName(fe.query, officer)
		if om.recall < fullRecall && !(len(fe.pq.person) > 0 && personMatches(fe.query, officer)) {
			continue
		}
		consider(evidence{score: NameWeight*om.score*officerFactor + fe.seatBonus, seat: fe.seatOK, field: fieldOfficer, covers: true,
			person:  strings.Join(officer.words, " "),
			reasons: fe.with(ReasonOfficerMatches, companydocs.ReasonParams{Person: o.Name, Position: o.Position})})
	}
}

// address offers the evidence of the registered address when the query
// may hold one.
func (fe *fieldMatch) address(consider func(evidence)) {
	pq, f := fe.pq, fe.f
	if !(pq.address || pq.houseNumber) || len(f.address.words) == 0 {
		return
	}
	am := matchName(fe.query, f.address)
	if am.recall >= closeNameMatch && !numbersDiffer(fe.query.words, f.address.words) {
		consider(evidence{score: NameWeight*am.recall*AddressFactor + fe.seatBonus, seat: fe.seatOK, field: fieldAddress, covers: am.recall >= closeNameMatch,
			reasons: fe.with(ReasonAddressMatches, companydocs.ReasonParams{Address: strings.TrimSuffix(strings.TrimSpace(fe.p.Address), ".")})})
	}
}

// nameReasons explains a name match in one reason.
func nameReasons(m nameMatch, query, name []string) []companydocs.ReasonDetail {
	code, params := "", companydocs.ReasonParams{}
	switch {
	case m.score >= fullNameMatch:
		code = ReasonNameMatches
	case m.score >= closeNameMatch:
		code = ReasonNameMatchesClosely
	case m.score >= partialNameMatch && m.recall >= fullRecall:
		code = ReasonNameContainsQuery
	case m.score >= partialNameMatch:
		code, params.Percent = ReasonNameMatchesPartly, int(math.Round(m.recall*100))
	case m.score > 0:
		code = ReasonNameMatchesWeakly
	case len(query) == 0:
		return nil
	default:
		code = ReasonNameDoesNotMatch
	}
	return []companydocs.ReasonDetail{{Code: code, Params: params}}
}

// legalFormEvidence compares the query's legal form with the profile's.
func legalFormEvidence(pq *parsedQuery, p *companydocs.Profile, s *scored) {
	if !pq.hasForm {
		return
	}
	if p.LegalForm == pq.form.Code {
		s.confidence += LegalFormWeight
		s.parts.form += LegalFormWeight
		s.reason(ReasonLegalFormMatches, companydocs.ReasonParams{LegalForm: pq.form.Code})
		return
	}
	if form := formOf(p); formDiffers(form, pq.form.Code) {
		s.reason(ReasonLegalFormDiffers, companydocs.ReasonParams{LegalForm: form, QueryLegalForm: pq.form.Code})
	}
}

// partnershipMark is what a name without a legal form of its own says
// when it ends its people's names in "& Co." ("Walter Müller & Co.",
// "Busch & Cie.", "Hartmut Weiss u. Co."): partners stand behind it, as
// behind a KG or an OHG, and no company with a capital of its own (a
// GmbH, an AG, a UG) nor a sole trader bears such a name without its
// form.
const partnershipMark = "& Co."

// partnersWords are the folded words after "&" that say partners stand
// behind a name.
var partnersWords = map[string]bool{"co": true, "cie": true, "compagnie": true}

// formOf is the legal form a candidate bears: its record's, or, where the
// record names none (ingest reads it from the name, which knows no "&
// Co." alone), partnershipMark when its name holds one.
func formOf(p *companydocs.Profile) string {
	if p.LegalForm != "" {
		return p.LegalForm
	}
	toks := textfold.Tokens(textfold.Fold(p.Name))
	for i := 1; i < len(toks); i++ {
		if toks[i-1] == "&" && partnersWords[toks[i]] {
			return partnershipMark
		}
	}
	return ""
}

// formDiffers reports whether a candidate's form (formOf) contradicts the
// form asked: partnershipMark contradicts every form but a KG's and an
// OHG's, and a candidate without a form contradicts none.
func formDiffers(form, asked string) bool {
	switch form {
	case "":
		return false
	case partnershipMark:
		return asked != "KG" && asked != "OHG"
	}
	return form != asked
}

// statusEvidence adds verification and register status, which never raise
// eligibility by themselves but explain it.
func statusEvidence(p *companydocs.Profile, s *scored) {
	if p.Verified {
		s.confidence += VerifiedWeight
		s.parts.verified += VerifiedWeight
	}
	switch {
	case p.Source == companydocs.SourceDiscovery && !p.Verified:
		s.reason(ReasonDiscoveryUnverified, companydocs.ReasonParams{Gaps: missing(p)})
		s.cap(UnverifiedCap, ReasonUnverifiedCap, companydocs.ReasonParams{})
	case p.Source == companydocs.SourceDiscovery:
		s.reason(ReasonDiscoveryVerified, companydocs.ReasonParams{})
	}
	if p.Removed {
		s.reason(ReasonRemoved, companydocs.ReasonParams{})
	} else if p.Verified && !p.OrderingEligible() {
		s.reason(ReasonNoOrderableDocument, companydocs.ReasonParams{})
	}
}

// missing is what keeps a discovery record from being verified, as the
// ingest wrote it down.
func missing(p *companydocs.Profile) []companydocs.VerificationGap {
	if p.Discovery == nil {
		return nil
	}
	return append([]companydocs.VerificationGap(nil), p.Discovery.Missing...)
}

// The label follows the confidence shown (label): exact only for an
// anchored candidate (an identifier, or a unique exact name and seat)
// whose score reaches ExactThreshold and whose confidence reaches
// ExactConfidence; needs_verification whenever the confidence is below
// PossibleConfidence, and for a discovery record not verified whatever
// its confidence (it cannot be ordered until it is); possible above
// PossibleConfidence otherwise. Both thresholds are on the confidence the
// client sees, so the label never says more than the number:
// TestEvaluationLabelsFollowConfidence checks every answer of the
// evaluation.
const (
	// ExactConfidence is the least confidence an exact candidate shows.
	ExactConfidence = 0.90
	// PossibleConfidence is the confidence a possible (or exact)
	// candidate shows more than: at or below it, the candidate is at
	// least as likely not to be the company meant as to be it.
	PossibleConfidence = 0.50
)

// label is the label of a candidate shown with a confidence.
func label(s *scored, confidence float64) string {
	switch {
	case s.anchored && s.confidence >= ExactThreshold && confidence >= ExactConfidence:
		return companydocs.LabelExact
	case confidence > PossibleConfidence && (s.p.Verified || s.p.Source != companydocs.SourceDiscovery):
		return companydocs.LabelPossible
	}
	return companydocs.LabelNeedsVerification
}
