package resolver

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"companydocs"
	"companydocs/messages"
	"companydocs/register"
	"companydocs/textfold"
)

// Index is what the resolver needs of a search index generation.
type Index interface {
	// Profile returns the profile with this id, or nil when there is none.
	Profile(id string) (*companydocs.Profile, error)
	// ByNumber returns every entry with this register type and number, at
	// any court, with any suffix or former court.
	ByNumber(t register.Type, number string) ([]*companydocs.Profile, error)
	// ByLEI returns the profiles carrying this LEI.
	ByLEI(lei register.LEI) ([]*companydocs.Profile, error)
	// SearchText returns profiles whose names, seats (and in deep mode
	// previous names, officers, addresses) match the query.
	SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error)
}

// Result is the answer to a search.
type Result struct {
	Candidates    []companydocs.Candidate `json:"candidates"`
	Understanding Understanding           `json:"query_understanding"`
}

// Resolve answers one search request against one index generation.
func Resolve(ctx context.Context, idx Index, req Request) (*Result, error) {
	res, _, err := resolve(ctx, idx, req)
	return res, err
}

// resolve is Resolve, with the candidates ranked (more than the page
// shows) from which the page's confidences are read.
func resolve(ctx context.Context, idx Index, req Request) (*Result, []*scored, error) {
	if err := req.validate(); err != nil {
		return nil, nil, err
	}
	if lines := splitBlock(req.Query); isBlock(lines) {
		return resolveBlock(ctx, idx, req, lines)
	}
	pq := parseQuery(req.Query)
	given, propertyNotes := readProperties(req.Properties)
	pq.clues = append(pq.clues, given...)
	pq.completes = req.Completes || pq.cut
	if c, ok := pq.clues.first(clueCourt, fromProperty); ok && pq.hasRef && pq.ref.Court == "" {
		pq.ref.Court = c.court // a typed number's court from its column
	}
	found, notes, err := resolveIdentifiers(idx, pq, req)
	if err != nil {
		return nil, nil, fmt.Errorf("resolve %q: %w", req.Query, err)
	}
	ranked, err := rankFound(ctx, idx, pq, req, found)
	if err != nil {
		return nil, nil, fmt.Errorf("resolve %q: %w", req.Query, err)
	}
	notes = append(notes, propertyNotes...)
	return &Result{
		Candidates:    candidates(ranked, req.Limit),
		Understanding: understand(pq, ranked, notes),
	}, ranked, nil
}

// resolveIdentifiers looks up the typed LEI, then the typed register
// reference, then the identifiers given as properties, until one finds
// entries.
func resolveIdentifiers(idx Index, pq *parsedQuery, req Request) ([]*scored, []companydocs.ReasonDetail, error) {
	var (
		found []*scored
		err   error
		notes []companydocs.ReasonDetail
	)
	if pq.leiShape && pq.leiErr == nil {
		found, notes, err = resolveLEI(idx, pq, pq.lei)
	}
	if err == nil && len(found) == 0 && pq.hasRef {
		pq.readAsRegister()
		found, notes, err = resolveRegister(idx, pq, req)
	}
	if err == nil && len(found) == 0 {
		var more []companydocs.ReasonDetail
		found, more, err = resolveGivenIdentifiers(idx, pq, req)
		notes = append(notes, more...)
	}
	return found, notes, err
}

// rankFound ranks the entries found by an identifier; with none, or only
// entries whose name contradicts the text's, the text's companies are
// searched too, each marked with the identifier it does not bear.
func rankFound(ctx context.Context, idx Index, pq *parsedQuery, req Request, found []*scored) ([]*scored, error) {
	if len(pq.tokens) == 0 || len(found) > 0 && !allConflict(found) {
		return rank(found, pq, nil), nil
	}
	ranked, err := resolveText(ctx, idx, pq, req)
	if err != nil {
		return nil, err
	}
	if len(found) > 0 {
		ranked = rank(append(found, ranked...), pq, nil)
	}
	return ranked, nil
}

// resolveGivenIdentifiers looks up the LEI and then the register number
// given as properties, when the text held neither: each is looked up as
// the typed one is, the text's name confirming or contradicting the entry.
func resolveGivenIdentifiers(idx Index, pq *parsedQuery, req Request) ([]*scored, []companydocs.ReasonDetail, error) {
	var notes []companydocs.ReasonDetail
	if c, ok := pq.clues.first(clueLEI, fromProperty); ok {
		found, more, err := resolveLEI(idx, pq, c.lei)
		if err != nil || len(found) > 0 {
			pq.leiKnown = len(found) > 0
			return found, more, err
		}
		notes = more
	}
	if c, ok := pq.clues.first(clueRegister, fromProperty); ok && !pq.hasRef {
		pq.ref, pq.hasRef = c.ref, true
		found, more, err := resolveRegister(idx, pq, req)
		return found, append(notes, more...), err
	}
	return nil, notes, nil
}

// allConflict reports whether every candidate found conflicts with the
// query (scored.conflict).
func allConflict(found []*scored) bool {
	for _, s := range found {
		if !s.conflict {
			return false
		}
	}
	return true
}

// resolveLEI anchors a checksum-valid LEI (typed, or given as a
// property); a name given beside it that contradicts the entry's takes the
// anchor away.
func resolveLEI(idx Index, pq *parsedQuery, lei register.LEI) ([]*scored, []companydocs.ReasonDetail, error) {
	profiles, err := idx.ByLEI(lei)
	if err != nil {
		return nil, nil, err
	}
	if len(profiles) == 0 {
		return nil, []companydocs.ReasonDetail{{Code: NoteLEIUnknown, Params: companydocs.ReasonParams{LEI: string(lei)}}}, nil
	}
	var out []*scored
	for _, p := range profiles {
		s := &scored{p: p, confidence: AnchoredConfidence, anchored: len(profiles) == 1, parts: scoreParts{identifier: AnchoredConfidence}}
		s.reason(ReasonLEIMatches, companydocs.ReasonParams{LEI: string(lei)})
		if len(pq.tokens) > 0 && textEvidence(pq, p).score < conflictingName {
			s.anchored, s.conflict = false, true
			s.confidence -= NameConflictPenalty
			s.reason(ReasonNameConflict, companydocs.ReasonParams{Name: p.Name})
		}
		statusEvidence(p, s)
		s.confidence = min(s.confidence, AnchoredConfidence)
		weighClues(pq, s, fromProperty)
		out = append(out, s)
	}
	return out, nil, nil
}

// resolveRegister scores every entry carrying the queried type and number.
func resolveRegister(idx Index, pq *parsedQuery, req Request) ([]*scored, []companydocs.ReasonDetail, error) {
	all, err := idx.ByNumber(pq.ref.Type, pq.ref.Number)
	if err != nil {
		return nil, nil, err
	}
	var entries []*companydocs.Profile
	for _, p := range all {
		if req.Discover || !p.NeedsDiscover() {
			entries = append(entries, p)
		}
	}
	if len(entries) == 0 {
		return nil, []companydocs.ReasonDetail{{Code: NoteRegisterEntryUnknown, Params: companydocs.ReasonParams{RegisterNumber: pq.ref.NumberKey(), Court: courtNameOrEmpty(pq.ref.Court)}}}, nil
	}
	atCourt := entries
	if pq.ref.Court != "" {
		atCourt = filter(entries, func(p *companydocs.Profile) bool { return register.SameCourt(p.Ref.Court, pq.ref.Court) })
	}
	matching := filter(atCourt, func(p *companydocs.Profile) bool { return identityMatches(pq.ref, p.Ref) })
	live := filter(matching, func(p *companydocs.Profile) bool { return !p.Removed })
	var out []*scored
	for _, p := range entries {
		out = append(out, scoreRegister(pq, p, len(entries), len(atCourt), len(matching), len(live)))
	}
	var notes []companydocs.ReasonDetail
	if pq.ref.Court != "" && len(atCourt) == 0 {
		notes = append(notes, companydocs.ReasonDetail{Code: NoteNoEntryAtCourt, Params: companydocs.ReasonParams{RegisterNumber: pq.ref.NumberKey(), Court: courtName(pq.ref.Court)}})
	}
	return out, notes, nil
}

// scoreRegister scores one entry found by its register number.
// entriesWithNumber counts the entries with this type and number at any
// court, atCourt those at the named court,
// matching those that also agree on the suffix, live those not removed.
func scoreRegister(pq *parsedQuery, p *companydocs.Profile, entriesWithNumber, atCourt, matching, live int) *scored {
	// the number, the court, the suffix and the status each give a reason
	s := &scored{p: p, registerMatch: true, confidence: RegisterNumberWeight, reasons: make([]companydocs.ReasonDetail, 0, 4)}
	s.reason(ReasonRegisterNumberMatches, companydocs.ReasonParams{RegisterNumber: string(p.Ref.Type) + " " + p.Ref.Number})
	courtOK := registerCourtEvidence(pq, p, s)
	suffixOK := registerSuffixEvidence(pq, p, s)
	nameConflict := registerNameEvidence(pq, p, s)
	s.conflict = nameConflict
	s.parts.identifier = s.confidence
	statusEvidence(p, s)
	unique := courtOK && suffixOK && live == 1 && !p.Removed
	switch {
	case pq.ref.Court == "":
		s.reason(ReasonNoCourtGiven, companydocs.ReasonParams{RegisterNumber: pq.ref.NumberKey(), Entries: entriesWithNumber})
		s.cap(NoCourtCap, ReasonNoCourtCap, companydocs.ReasonParams{})
	case courtOK && atCourt > 1 && !unique && !(suffixOK && matching == 1):
		s.cap(SharedNumberCap, ReasonSharedNumberCap, companydocs.ReasonParams{RegisterNumber: pq.ref.NumberKey(), Entries: atCourt})
	case unique && !nameConflict:
		s.anchored = true
		s.confidence = AnchoredConfidence
		if atCourt > 1 {
			s.reason(ReasonOnlyLiveEntryAtCourt, companydocs.ReasonParams{Entries: atCourt})
		}
	}
	s.confidence = clamp(s.confidence)
	weighClues(pq, s, fromProperty)
	return s
}

// registerCourtEvidence weighs the court named with a register number;
// it reports whether the entry is at that court.
func registerCourtEvidence(pq *parsedQuery, p *companydocs.Profile, s *scored) bool {
	switch {
	case pq.ref.Court == "":
		return false
	case register.SameCourt(p.Ref.Court, pq.ref.Court):
		s.confidence += CourtWeight
		s.reason(ReasonCourtMatches, companydocs.ReasonParams{Court: courtName(p.Ref.Court)})
		return true
	}
	s.confidence -= CourtWeight
	s.reason(ReasonCourtDiffers, companydocs.ReasonParams{Court: courtName(p.Ref.Court), QueryCourt: courtName(pq.ref.Court)})
	return false
}

// registerSuffixEvidence weighs the suffix and former court named with a
// register number; it reports whether they agree with the entry's.
func registerSuffixEvidence(pq *parsedQuery, p *companydocs.Profile, s *scored) bool {
	suffixOK := identityMatches(pq.ref, p.Ref)
	switch {
	case suffixOK && pq.ref.FormerCourt != "":
		s.confidence += SuffixWeight
		s.reason(ReasonFormerCourtMatches, companydocs.ReasonParams{FormerCourt: courtName(p.Ref.FormerCourt)})
	case suffixOK && p.Ref.Suffix != "":
		s.confidence += SuffixWeight
		s.reason(ReasonSuffixMatches, companydocs.ReasonParams{Suffix: p.Ref.Suffix})
	case suffixOK:
		s.confidence += SuffixWeight
	case pq.ref.Suffix != "" && pq.ref.Suffix != p.Ref.Suffix:
		s.confidence -= SuffixWeight
		s.reason(ReasonSuffixDiffers, companydocs.ReasonParams{Suffix: p.Ref.Suffix, QuerySuffix: pq.ref.Suffix})
	case pq.ref.FormerCourt != "":
		s.confidence -= SuffixWeight
		s.reason(ReasonFormerCourtDiffers, companydocs.ReasonParams{FormerCourt: courtName(p.Ref.FormerCourt), QueryFormerCourt: courtName(pq.ref.FormerCourt)})
	}
	return suffixOK
}

// registerNameEvidence weighs a name given next to a register number; it
// reports whether the name contradicts the entry.
func registerNameEvidence(pq *parsedQuery, p *companydocs.Profile, s *scored) bool {
	if len(pq.tokens) == 0 {
		return false
	}
	ev := textEvidence(pq, p)
	score, reasons := ev.score, ev.reasons
	if score < conflictingName {
		s.confidence -= NameConflictPenalty
		s.reason(ReasonNameConflict, companydocs.ReasonParams{Name: p.Name})
		return true
	}
	s.confidence += RegisterNameWeight * score
	s.reasons = append(s.reasons, reasons...)
	return false
}

// resolveText finds candidates by name, seat and the other text fields,
// and ranks them.
//
// The first rankWindowOf hits are ranked together; when they hold fewer
// candidates than the page asks for, the hits after them, up to
// recallSize, are ranked among themselves and follow (the index orders
// its hits by score and profile id, so the first hits of a larger recall
// are those of a smaller one). A page of N is thus the first N of a page
// of MaxLimit, and a search costs what its window costs.
//
// Officers and former names are also searched alone (fieldSearches), so
// that other companies' name words do not crowd their matches out; the
// best rankWindow hits of each join the first search's. Outside deep
// mode, former names are searched only when no candidate's current name
// matches the query closely (or an officer or the address holds every
// word of it): a name that some company bears today is answered by the
// name, and a former name's clauses would make every such search walk
// more postings.
func resolveText(ctx context.Context, idx Index, pq *parsedQuery, req Request) ([]*scored, error) {
	q := textQueryOf(pq, req)
	window, err := searchWindow(ctx, idx, q, pq, 0, rankWindowOf(pq, req))
	if err != nil {
		return nil, err
	}
	found := window.found
	for _, field := range fieldSearches(q, pq, window) {
		alone := q
		alone.Only = field
		more, err := searchWindow(ctx, idx, alone, pq, 0, fieldWindow)
		if err != nil {
			return nil, err
		}
		found = append(found, more.found...)
	}
	if q, ok := givenOfficerSearch(pq, req, found); ok {
		more, err := searchWindow(ctx, idx, q, pq, 0, fieldWindow)
		if err != nil {
			return nil, err
		}
		found = append(found, more.found...)
	}
	// an exact name and seat anchors only when it is unique among the
	// hits ranked first; one found after them never does
	markExactNameSeat(found, pq)
	ranked := rank(found, pq, nil)
	if window.full && window.size < recallSize && len(ranked) < req.Limit {
		rest, err := searchWindow(ctx, idx, q, pq, window.size, recallSize)
		if err != nil {
			return nil, err
		}
		for _, s := range rest.found {
			s.late = true
		}
		ranked = append(ranked, rank(rest.found, pq, ranked)...)
	}
	return ranked, nil
}

// fieldSearches are the fields searched alone after the first search:
// officers when the query reads as a person and no candidate of the first
// search has the person as an officer (in a large register the names that
// share a first name or the surname outrank the person's companies,
// deep mode's sound-alikes most of all), and former names outside deep
// mode when no candidate answers the query (textWindow.covered).
func fieldSearches(q companydocs.TextQuery, pq *parsedQuery, first textWindow) []companydocs.SearchField {
	var out []companydocs.SearchField
	if len(pq.person) > 0 && !first.personFound() {
		out = append(out, companydocs.OnlyOfficers)
	}
	if !q.Deep && !first.covered() {
		out = append(out, companydocs.OnlyFormerNames)
	}
	return out
}

// givenOfficerSearch is the search of the officer given as a property
// among officers alone, when no candidate the text found bears that
// person: the company may rank below other names in the text's window. Its
// hits are scored against the text, as every candidate is, so that only
// those whose name the text supports join.
func givenOfficerSearch(pq *parsedQuery, req Request, found []*scored) (companydocs.TextQuery, bool) {
	officer, ok := pq.clues.first(clueOfficer, fromProperty)
	if !ok {
		return companydocs.TextQuery{}, false
	}
	if anyNamed(found, func(s *scored) bool { _, ok := officerNamed(s.p, officer.words); return ok }) {
		return companydocs.TextQuery{}, false
	}
	return companydocs.TextQuery{NameTerms: officer.words, Only: companydocs.OnlyOfficers, Fuzzy: true, Discover: req.Discover}, true
}

// rankWindowOf is how many hits are ranked together for a query. Names
// and seats are what the index's score orders best; a person, an address
// and deep mode's wider net match fields that score below a name word of
// some other company, so their answer may come later in the index's order.
func rankWindowOf(pq *parsedQuery, req Request) int {
	if req.Mode == ModeDeep || len(pq.person) > 0 || pq.address || pq.houseNumber {
		return recallSize
	}
	return rankWindow
}

// textQueryOf is the index query of a text search.
func textQueryOf(pq *parsedQuery, req Request) companydocs.TextQuery {
	q := companydocs.TextQuery{
		NameTerms: pq.tokens,
		SeatWords: append(append([]string{}, pq.tokens...), placeSpellings(pq.tokens)...),
		Fuzzy:     true,
		Deep:      req.Mode == ModeDeep,
		Officers:  len(pq.person) > 0,
		Address:   pq.address || pq.houseNumber,
		Completes: pq.completes,
		Discover:  req.Discover,
	}
	if pq.hasForm {
		q.LegalFormTerms = pq.form.Words
	}
	// a seat and a form given boost the companies that have them, as the
	// query's own would; they are no name words
	if city, ok := pq.clues.first(clueSeat, fromProperty); ok {
		q.SeatWords = append(append(q.SeatWords, city.words...), placeSpellings(city.words)...)
	}
	if form, ok := pq.clues.first(clueLegalForm, fromProperty); ok && !pq.hasForm {
		q.LegalFormTerms = form.form.Words
	}
	pq.deep = q.Deep
	return q
}

// A textWindow holds the candidates scored from a range of a text
// search's hits; full reports that the index had hits for the whole
// range, and may have more.
type textWindow struct {
	found []*scored
	size  int
	full  bool
}

// covered reports whether some candidate answers the query by its current
// name, an officer or its address (scored.covers).
func (w textWindow) covered() bool {
	for _, s := range w.found {
		if s.covers {
			return true
		}
	}
	return false
}

// personFound reports whether some candidate's officer holds every word
// of the query.
func (w textWindow) personFound() bool {
	for _, s := range w.found {
		if s.field == fieldOfficer {
			return true
		}
	}
	return false
}

// searchWindow scores the index's hits from to to.
func searchWindow(ctx context.Context, idx Index, q companydocs.TextQuery, pq *parsedQuery, from, to int) (textWindow, error) {
	q.Limit, q.Offset = to, from
	hits, err := idx.SearchText(ctx, q)
	if err != nil {
		return textWindow{}, err
	}
	var out []*scored
	for _, h := range hits {
		// The index casts a wide net (fuzzy, phonetic); a hit in which the
		// resolver finds no evidence at all is noise.
		if s := scoreText(pq, h.Profile); s.evidence {
			out = append(out, s)
		}
	}
	return textWindow{found: out, size: to, full: from+len(hits) >= to}, nil
}

// scoreText scores a candidate found by text.
func scoreText(pq *parsedQuery, p *companydocs.Profile) *scored {
	ev := textEvidence(pq, p)
	s := &scored{p: p, confidence: ev.score, reasons: ev.reasons, seatMatched: ev.seat, nameExact: ev.exact,
		evidence: ev.score > 0, field: ev.field, person: ev.person, covers: ev.covers, parts: scoreParts{text: ev.score}}
	if !ev.cut {
		legalFormEvidence(pq, p, s)
	}
	statusEvidence(p, s)
	if pq.leiShape && pq.leiErr != nil {
		s.cap(InvalidLEICap, ReasonInvalidLEICap, companydocs.ReasonParams{})
	}
	s.confidence = clamp(s.confidence)
	weighClues(pq, s, fromProperty, fromText)
	return s
}

// markExactNameSeat anchors a text candidate whose normalised name and seat
// equal the query's when no other candidate shares them.
func markExactNameSeat(found []*scored, pq *parsedQuery) {
	var hit *scored
	n := 0
	for _, s := range found {
		if s.nameExact && s.seatMatched && legalFormAgrees(pq, s.p) {
			hit = s
			n++
		}
	}
	if n != 1 || pq.isShort() || personAlone(pq, hit.p) || !hit.p.Verified || pq.block != nil || hit.disagreed {
		return
	}
	hit.anchored = true
	hit.confidence = max(hit.confidence, ExactNameSeatConfidence)
	hit.reason(ReasonOnlyEntryNameSeat, companydocs.ReasonParams{})
}

// personAlone reports whether the query is a person's name (and a seat)
// and nothing else, which no company's name pins down even when a sole
// trader is registered under it ("Friedrich Stock", Duisburg): the person
// may be an officer of other companies.
func personAlone(pq *parsedQuery, p *companydocs.Profile) bool {
	if len(pq.person) == 0 {
		return false
	}
	base, _, _ := register.SplitLegalForm(p.Name)
	return len(dropNoise(base)) == len(pq.person)
}

func legalFormAgrees(pq *parsedQuery, p *companydocs.Profile) bool {
	return !pq.hasForm || p.LegalForm == pq.form.Code
}

// rank applies the short-query cap, keeps at most one exact candidate and
// orders: exact register matches first, then by confidence, verified
// registry-cache before verified discovery before the rest, live before
// removed. ahead are candidates ranked before found, left as they are:
// found leaves out their profiles, and the shared-officer and exact rules
// count them.
func rank(found []*scored, pq *parsedQuery, ahead []*scored) []*scored {
	found = dedupe(found, ahead)
	if pq.isShort() {
		for _, s := range found {
			s.anchored = false
			s.cap(ShortQueryCap, ReasonShortQueryCap, companydocs.ReasonParams{})
		}
	}
	if person, n := sharedPerson(append(append([]*scored(nil), ahead...), found...)); n > 1 {
		// a person who is an officer of several companies names none of
		// them: the query is as ambiguous as a short one
		for _, s := range found {
			s.anchored = false
			s.cap(ShortQueryCap, ReasonSharedOfficerCap, companydocs.ReasonParams{Person: person, Companies: n})
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return less(found[i], found[j]) })
	exactSeen := len(ahead) > 0 && ahead[0].anchored && ahead[0].confidence >= ExactThreshold
	for _, s := range found {
		if s.anchored && s.confidence >= ExactThreshold {
			if exactSeen {
				s.anchored = false
				s.cap(SecondExactCap, ReasonSecondExactCap, companydocs.ReasonParams{})
			}
			exactSeen = true
		}
	}
	return found
}

// sharedPerson returns the officer matched by the most candidates (their
// best evidence), and how many.
func sharedPerson(found []*scored) (string, int) {
	count := map[string]int{}
	best, n := "", 0
	for _, s := range found {
		if s.field != fieldOfficer {
			continue
		}
		count[s.person]++
		if c := count[s.person]; c > n || c == n && s.person < best {
			best, n = s.person, c
		}
	}
	return officerDisplayName(found, best), n
}

func officerDisplayName(found []*scored, person string) string {
	for _, s := range found {
		for _, o := range s.p.Officers {
			if s.field == fieldOfficer && strings.Join(textfold.Tokens(textfold.Fold(o.Name)), " ") == person {
				return o.Name
			}
		}
	}
	return person
}

func less(a, b *scored) bool {
	if ea, eb := a.anchored, b.anchored; ea != eb {
		return ea
	}
	if ra, rb := a.registerMatch && a.anchored, b.registerMatch && b.anchored; ra != rb {
		return ra
	}
	if math.Abs(a.confidence-b.confidence) > 1e-9 {
		return a.confidence > b.confidence
	}
	if ua, ub := max(a.uncapped, a.confidence), max(b.uncapped, b.confidence); math.Abs(ua-ub) > 1e-9 {
		return ua > ub
	}
	if ta, tb := sourceRank(a.p), sourceRank(b.p); ta != tb {
		return ta < tb
	}
	if a.p.Removed != b.p.Removed {
		return !a.p.Removed
	}
	return a.p.ID < b.p.ID
}

// sourceRank orders verified registry-cache, verified discovery, the rest.
func sourceRank(p *companydocs.Profile) int {
	switch {
	case p.Verified && p.Source == companydocs.SourceRegistryCache:
		return 0
	case p.Verified:
		return 1
	}
	return 2
}

// dedupe keeps the first candidate of each profile, and none of a profile
// among ahead.
func dedupe(found, ahead []*scored) []*scored {
	seen := map[string]bool{}
	for _, s := range ahead {
		seen[s.p.ID] = true
	}
	out := found[:0]
	for _, s := range found {
		if !seen[s.p.ID] {
			seen[s.p.ID] = true
			out = append(out, s)
		}
	}
	return out
}

// candidates converts scored profiles into the API's candidates. The
// confidence never rises down the page: a candidate shows at most what
// the one above it shows.
func candidates(ranked []*scored, limit int) []companydocs.Candidate {
	out := []companydocs.Candidate{}
	held := 1.0
	for i, s := range ranked {
		if i == limit {
			break
		}
		held = min(held, confidenceOf(confidenceInputOf(ranked, i)))
		out = append(out, toCandidate(s, held))
	}
	return out
}

// confidenceInputOf is what the confidence of the i-th ranked candidate
// is read from. The margin of the first is over the second when both were
// ranked together: a candidate ranked after the first window (scored.late)
// is there only on a page long enough to ask for it, and a page of one
// must show what a page of fifty shows.
func confidenceInputOf(ranked []*scored, i int) confidenceInput {
	s := ranked[i]
	in := confidenceInput{score: s.confidence, first: i == 0, reasons: s.reasons}
	switch {
	case i > 0:
		in.margin = s.confidence - ranked[0].confidence
	case len(ranked) > 1 && !ranked[1].late:
		in.margin = s.confidence - ranked[1].confidence
	default:
		in.margin = s.confidence
	}
	return in
}

// detailsOf returns the reasons of s for its candidate: the scored
// profile's own slice, clipped so that nothing appended to either is
// seen by the other (a detail is some 400 bytes: a copy for every
// candidate of every search was garbage for nothing), and [] for none.
func detailsOf(s *scored) []companydocs.ReasonDetail {
	if len(s.reasons) == 0 {
		return []companydocs.ReasonDetail{}
	}
	return slices.Clip(s.reasons)
}

// toCandidate converts a scored profile shown with a confidence.
func toCandidate(s *scored, confidence float64) companydocs.Candidate {
	p := s.p
	c := companydocs.Candidate{
		Name:              p.Name,
		City:              p.Seat,
		Court:             p.CourtName(),
		CourtCode:         p.Ref.Court,
		RegistryNumber:    registryNumber(p.Ref),
		Source:            p.Source,
		Confidence:        confidence,
		Score:             s.confidence,
		ConfidenceLabel:   label(s, confidence),
		ConfidenceReasons: reasonTextsOf(messages.English, s.reasons),
		ReasonDetails:     detailsOf(s),
		OrderingEligible:  p.OrderingEligible(),
		LegalForm:         p.LegalForm,
		Status:            p.CandidateStatus(),
		Documents:         append([]companydocs.DocumentType{}, p.Documents...),
	}
	if p.Verified {
		c.ProfileID = p.ID
	}
	if p.Source == companydocs.SourceDiscovery {
		c.DiscoveryCandidateID = p.ID
	}
	if len(p.LEIs) > 0 {
		c.LEI = string(p.LEIs[0].LEI)
	}
	if c.Documents == nil {
		c.Documents = []companydocs.DocumentType{}
	}
	return c
}

func registryNumber(r register.Ref) string {
	if r.Number == "" {
		return ""
	}
	return r.NumberKey()
}

func clamp(x float64) float64 { return max(0, min(1, x)) }

func filter(ps []*companydocs.Profile, keep func(*companydocs.Profile) bool) []*companydocs.Profile {
	var out []*companydocs.Profile
	for _, p := range ps {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// identityMatches compares the parts of a reference beyond court, type
// and number: the former court when the query names one, and the suffix.
// The court is scored on its own, so the entry's stands in for the query's.
func identityMatches(q, p register.Ref) bool {
	q.Court = p.Court
	return q.Names(p)
}

func courtName(code string) string {
	if c, ok := register.CourtByCode(code); ok {
		return c.Name
	}
	return code
}
