package resolver

import (
	"context"
	"fmt"
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// resolveBlock answers a pasted block. An LEI line or a register line
// anchors as a typed identifier does, the name line then confirming or
// contradicting it (registerNameEvidence). Without them the name, with the
// seat, is searched as typed; persons and the street are searched too, and
// every candidate gains what the block's persons and address confirm
// (blockEvidence), capped below exact: text alone never makes a candidate
// exact.
func resolveBlock(ctx context.Context, idx Index, req Request, lines []string) (*Result, []*scored, error) {
	b := readBlock(lines)
	pq := blockQuery(b)
	given, _ := readProperties(req.Properties)
	pq.clues = append(pq.clues, given...)
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
		return nil, nil, fmt.Errorf("resolve pasted block: %w", err)
	}
	u := understand(pq, ranked, notes)
	u.LineDetails = b.lines
	for _, l := range b.lines {
		u.Lines = append(u.Lines, LineText(l))
	}
	return &Result{Candidates: candidates(ranked, req.Limit), Understanding: u}, ranked, nil
}

// blockQuery is the query a block asks: its register reference (the court
// from another line when the number's line names none), its LEI, and as
// text its name and seat, or without a name its first person or its
// address.
func blockQuery(b *block) *parsedQuery {
	pq := &parsedQuery{block: b, clues: append(clueList(nil), b.clues...)}
	for i := range pq.clues {
		if pq.clues[i].kind == clueAddress {
			pq.clues[i].text = b.street() // weighed with its postcode
		}
	}
	if ref, _, ok := register.FindRef(b.register); ok {
		if court, named := b.clues.first(clueCourt, fromLine); named && ref.Court == "" {
			ref.Court = court.court
		}
		pq.ref, pq.hasRef = ref, true
		pq.clues.add(clue{kind: clueRegister, source: fromLine, text: b.register, ref: ref})
	}
	if lei, ok := b.clues.first(clueLEI, fromLine); ok {
		pq.leiShape = true
		pq.lei, pq.leiErr = register.ParseLEI(lei.text)
	}
	pq.raw = b.query()
	pq.readText(pq.raw)
	return pq
}

// query is what a block asks as text: its name, or without one its first
// person or its street, with its seat.
func (b *block) query() string {
	text := b.text(clueName)
	persons := b.persons()
	switch {
	case text == "" && len(persons) > 0:
		text = strings.Join(persons[0], " ")
	case text == "" && b.text(clueAddress) != "":
		text = b.street()
	}
	if seat := b.text(clueSeat); seat != "" && !strings.Contains(textfold.Fold(text), textfold.Fold(seat)) {
		text += " " + seat
	}
	return strings.TrimSpace(text)
}

// street is the block's street with its postcode, as addressHolds reads
// them together; "" without a street line.
func (b *block) street() string {
	street := b.text(clueAddress)
	if street == "" {
		return ""
	}
	return street + " " + b.text(cluePostcode)
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
		if confirmed := blockEvidence(pq, s); s.evidence || confirmed {
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
	for i, p := range b.persons() {
		if i == maxPersonSearches {
			break
		}
		if !anyNamed(found, func(s *scored) bool { _, ok := officerNamed(s.p, p); return ok }) {
			out = append(out, companydocs.TextQuery{NameTerms: p, Only: companydocs.OnlyOfficers, Fuzzy: true, Discover: req.Discover})
		}
	}
	street, seat := b.street(), b.text(clueSeat)
	if street != "" && !anyNamed(found, func(s *scored) bool { return addressHolds(s.p, street) }) {
		words := textfold.Tokens(textfold.Fold(street + " " + seat))
		out = append(out, companydocs.TextQuery{NameTerms: words, SeatWords: textfold.Tokens(textfold.Fold(seat)),
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

// blockEvidence weighs what the block's lines say of a text candidate
// (weighClues: its persons and street confirm it), and caps it below
// exact; it reports whether they confirmed anything.
func blockEvidence(pq *parsedQuery, s *scored) bool {
	confirmed := weighClues(pq, s, fromLine)
	s.anchored = false
	s.cap(PastedTextCap, ReasonPastedTextCap, companydocs.ReasonParams{})
	return confirmed
}

// officerNamed returns the officer of p who bears the person's name.
func officerNamed(p *companydocs.Profile, person []string) (companydocs.Officer, bool) {
	pl := newTokenList(person)
	for _, o := range p.Officers {
		if personMatches(pl, newTokenList(textfold.Tokens(textfold.Fold(o.Name)))) {
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
	for _, t := range textfold.Tokens(textfold.Fold(p.Address)) {
		have[t] = true
	}
	for _, t := range textfold.Tokens(textfold.Fold(street)) {
		if !have[t] && !(strings.HasSuffix(t, "str") && have[t+"asse"]) {
			return false
		}
	}
	return true
}
