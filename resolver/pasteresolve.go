package resolver

import (
	"context"
	"fmt"
	"strings"

	"companydocs"
)

// resolveBlock answers a pasted block. An LEI line or a register line
// anchors as a typed identifier does, the name line then confirming or
// contradicting it (registerNameEvidence). Without them the name, with the
// seat, is searched as typed; persons and the street are searched too, and
// every candidate gains what the block's persons and address confirm
// (blockEvidence), capped below exact: text alone never makes a candidate
// exact.
func resolveBlock(ctx context.Context, idx Index, req Request, lines []string) (*Result, error) {
	b := readBlock(lines)
	pq := blockQuery(b)
	pq.props = readProperties(req.Properties)
	var (
		found []*scored
		notes []companydocs.ReasonDetail
		err   error
	)
	if pq.leiShape && pq.leiErr == nil {
		found, notes, err = resolveLEI(idx, pq, pq.lei)
	}
	if err == nil && len(found) == 0 && pq.hasRef {
		var more []companydocs.ReasonDetail
		found, more, err = resolveRegister(idx, pq, req)
		notes = append(notes, more...)
	}
	var ranked []*scored
	switch {
	case err != nil:
	case len(found) > 0:
		ranked = rank(found, pq, nil)
	default:
		ranked, err = resolveBlockText(ctx, idx, pq, b, req)
	}
	if err != nil {
		return nil, fmt.Errorf("resolve pasted block: %w", err)
	}
	u := understand(pq, ranked, notes)
	u.LineDetails = b.lines
	for _, l := range b.lines {
		u.Lines = append(u.Lines, LineText(l))
	}
	return &Result{Candidates: candidates(ranked, req.Limit), Understanding: u}, nil
}

// blockQuery is the query a block asks: its register reference (the court
// from another line when the number's line names none), its LEI, and as
// text its name and seat, or without a name its first person or its
// address.
func blockQuery(b *block) *parsedQuery {
	pq := &parsedQuery{block: b}
	if ref, _, ok := companydocs.FindRegisterRef(b.register); ok {
		if ref.Court == "" {
			ref.Court = b.court
		}
		pq.ref, pq.hasRef = ref, true
	}
	if b.lei != "" {
		pq.leiShape = true
		pq.lei, pq.leiErr = companydocs.ParseLEI(b.lei)
	}
	pq.raw = b.text()
	pq.readText(pq.raw)
	return pq
}

// text is what a block asks as text.
func (b *block) text() string {
	text := b.name
	switch {
	case text == "" && len(b.persons) > 0:
		text = strings.Join(b.persons[0], " ")
	case text == "" && b.street != "":
		text = b.street + " " + b.postcode
	}
	if b.seat != "" && !strings.Contains(companydocs.Fold(text), companydocs.Fold(b.seat)) {
		text += " " + b.seat
	}
	return strings.TrimSpace(text)
}

// resolveBlockText searches the block's text as typed, then its persons
// among officers and its street among addresses, and ranks the
// candidates of all with the block's evidence. The text search ranks its
// window (rankWindow) whatever the page size, so that the other searches'
// candidates join one ranking that does not depend on the limit; the
// hits after the window, which a typed name's longer page reaches for,
// are left out: a block's answer is confirmed by its persons and address,
// which their own searches find.
func resolveBlockText(ctx context.Context, idx Index, pq *parsedQuery, b *block, req Request) ([]*scored, error) {
	all := req
	all.Limit = rankWindow
	var found []*scored
	if len(pq.tokens) > 0 {
		ranked, err := resolveText(ctx, idx, pq, all)
		if err != nil {
			return nil, err
		}
		found = ranked
	}
	for _, q := range blockSearches(b, req, found) {
		q.Limit = fieldWindow
		hits, err := idx.SearchText(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			found = append(found, scoreText(pq, h.Profile))
		}
	}
	var out []*scored
	for _, s := range found {
		// like a typed search's, a hit without evidence is noise
		if confirmed := blockEvidence(b, s); s.evidence || confirmed {
			out = append(out, s)
		}
	}
	return rank(out, pq, nil), nil
}

// blockSearches are the searches of a block beside its text: each of its
// first persons among officers, its street among addresses (that field
// alone: a street's words in other fields, names above all, are what
// made this the dearest search of a block). A search is left out when a
// candidate the text found by its name already bears that person or
// address: it would add only other companies of the same director or at
// the same address, which the block's name outranks, at the cost of a
// search each.
func blockSearches(b *block, req Request, found []*scored) []companydocs.TextQuery {
	var out []companydocs.TextQuery
	for i, p := range b.persons {
		if i == maxPersonSearches {
			break
		}
		if !anyNamed(found, func(s *scored) bool { _, ok := officerNamed(s.p, p); return ok }) {
			out = append(out, companydocs.TextQuery{NameTerms: p, Only: companydocs.OnlyOfficers, Fuzzy: true, Discover: req.Discover})
		}
	}
	street := b.street + " " + b.postcode
	if b.street != "" && !anyNamed(found, func(s *scored) bool { return addressHolds(s.p, street) }) {
		words := companydocs.Tokens(companydocs.Fold(street + " " + b.seat))
		out = append(out, companydocs.TextQuery{NameTerms: words, SeatWords: companydocs.Tokens(companydocs.Fold(b.seat)),
			Only: companydocs.OnlyAddress, Discover: req.Discover})
	}
	return out
}

// anyNamed reports whether a candidate found by its name (text evidence)
// satisfies holds.
func anyNamed(found []*scored, holds func(*scored) bool) bool {
	for _, s := range found {
		if s.evidence && holds(s) {
			return true
		}
	}
	return false
}

// maxPersonSearches is how many of a block's persons are searched among
// officers: an imprint names one to three; each search costs as much as
// a name's.
const maxPersonSearches = 2

// blockEvidence adds what the block's persons and street confirm of a
// text candidate, and caps it below exact; it reports whether they
// confirmed anything.
func blockEvidence(b *block, s *scored) bool {
	confirmed := false
	if o, ok := officerOf(b, s.p); ok {
		confirmed = true
		s.confidence += PastedOfficerWeight
		s.reason(ReasonOfficerMatches, companydocs.ReasonParams{Person: o.Name, Position: o.Position})
	}
	if b.street != "" && addressHolds(s.p, b.street+" "+b.postcode) {
		confirmed = true
		s.confidence += PastedAddressWeight
		s.reason(ReasonAddressMatches, companydocs.ReasonParams{Address: strings.TrimSuffix(strings.TrimSpace(s.p.Address), ".")})
	}
	s.anchored = false
	s.confidence = clamp(s.confidence)
	s.cap(PastedTextCap, ReasonPastedTextCap, companydocs.ReasonParams{})
	return confirmed
}

// officerOf returns an officer of p who bears the name of one of the
// block's persons.
func officerOf(b *block, p *companydocs.Profile) (companydocs.Officer, bool) {
	for _, person := range b.persons {
		if o, ok := officerNamed(p, person); ok {
			return o, true
		}
	}
	return companydocs.Officer{}, false
}

// officerNamed returns the officer of p who bears the person's name.
func officerNamed(p *companydocs.Profile, person []string) (companydocs.Officer, bool) {
	pl := newTokenList(person)
	for _, o := range p.Officers {
		if personMatches(pl, newTokenList(companydocs.Tokens(companydocs.Fold(o.Name)))) {
			return o, true
		}
	}
	return companydocs.Officer{}, false
}

// addressHolds reports whether p's registered address holds every word of
// the street, house number and postcode given.
func addressHolds(p *companydocs.Profile, street string) bool {
	if p.Address == "" {
		return false
	}
	have := map[string]bool{}
	for _, t := range companydocs.Tokens(companydocs.Fold(p.Address)) {
		have[t] = true
	}
	for _, t := range companydocs.Tokens(companydocs.Fold(street)) {
		if !have[t] && !(strings.HasSuffix(t, "str") && have[t+"asse"]) {
			return false
		}
	}
	return true
}
