package index

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime/debug"
	"sort"
	"strings"
	"unicode/utf8"

	bindex "github.com/blevesearch/bleve_index_api"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// Query weights. A name token matched as typed outweighs the same token
// through the umlaut-less spelling, which outweighs a typo match; an exact
// whole-name match adds the most. City and legal form only re-order hits
// that matched on the name (should clauses, never filters). Deep-mode
// fields weigh less than the name so that a company's own name still ranks
// first. The resolver turns the raw score into confidence; these constants
// only order hits.
const (
	boostName          = 10.0 // name token, folded spelling
	boostNamePlain     = 6.0  // name token typed without umlauts ("Muller" for "Müller")
	boostNameFuzzy     = 4.0  // name token within the edit distance of fuzzyDistance
	boostNamePrefix    = 4.0  // name word the last token starts, when completing (TextQuery.Completes)
	boostNameBase      = 15.0 // all name tokens, in order, and nothing else
	boostNameKey       = 20.0 // whole normalised name including the legal form
	boostNameForm      = 2.0  // name token of a name with the query's legal form
	boostSeatKey       = 6.0  // whole seat equals the city
	boostSeat          = 3.0  // seat token equals a city token
	boostPreviousNames = 5.0  // token of a former name (deep, or a search of former names alone)
	boostOfficers      = 3.0  // deep: token of an officer's name
	boostPerson        = 12.0 // token of an officer's name when the query reads as a person (or officers alone)
	boostAddress       = 1.5  // deep: address token
	boostAddressClue   = 6.0  // address token when the query may hold an address
	boostPhonetic      = 2.0  // deep: same Kölner Phonetik code
)

// Query bounds.
const (
	defaultLimit = 10
	maxLimit     = 200
	// maxNameTerms caps the name tokens used, keeping the query small
	// whatever the input.
	maxNameTerms = 12
	// maxLegalFormTerms caps the legal-form tokens used.
	maxLegalFormTerms = 6
)

// fuzzyDistance is the typo budget of a token (textfold.TypoBudget). It
// also returns the prefix that must match exactly, as long as the budget,
// which bounds how many dictionary terms a fuzzy query expands to.
func fuzzyDistance(term string) (distance, prefix int) {
	d := textfold.TypoBudget(utf8.RuneCountInString(term))
	return d, d
}

// SearchText finds the profiles best matching q, best first, at most
// q.Limit (default 10, capped at 200), less the q.Offset best. A hit
// matches a name token that is not common, or the whole name; common
// tokens, the city and the legal form only raise scores. q.Fuzzy adds
// typo matches for tokens rarely or never seen in names, but not for the
// words of a person or an address the query holds (clueWord); q.Deep adds typo
// matches for every uncommon token, former names, officers, address and
// Kölner Phonetik codes; q.Only matches one field alone. Without
// q.Discover discovery profiles are left out. An empty query gives no
// hits.
func (g *Generation) SearchText(ctx context.Context, q companydocs.TextQuery) (_ []companydocs.Hit, err error) {
	if err := g.usable(); err != nil {
		return nil, err
	}
	defer recoverFault(&err, g, debug.SetPanicOnFault(true))
	stats, err := g.newTermStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	defer stats.close()
	bq := buildQuery(q, stats)
	if stats.err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), stats.err)
	}
	if bq == nil {
		return nil, nil
	}
	segs, err := stats.segments()
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	found, err := g.topHits(ctx, segs, bq, limitOf(q))
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	found = found[min(max(q.Offset, 0), len(found)):]
	hits, err := g.profilesOf(segs, found)
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	return hits, nil
}

// profilesOf returns the profiles of the hits: each from its document's
// stored value (fieldProfile), or, in a generation before IndexVersion 9,
// whose documents hold none, from the profile store. A hit without its id
// gets it from its document's stored fields, read for the profile anyway.
func (g *Generation) profilesOf(segs *segments, found []hit) ([]companydocs.Hit, error) {
	hits := make([]companydocs.Hit, len(found))
	var unstored []int
	for i := range found {
		p, err := segs.storedProfile(&found[i])
		if err != nil {
			return nil, err
		}
		if p == nil {
			unstored = append(unstored, i)
		}
		hits[i].Profile = p
	}
	if len(unstored) == 0 {
		return hits, nil
	}
	err := g.store.lookup(func(t storeTx) error {
		for _, i := range unstored {
			p, err := t.profile(found[i].id)
			if err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("indexed profile %q missing from profile store", found[i].id)
			}
			hits[i].Profile = p
		}
		return nil
	})
	return hits, err
}

// A hit is a match of the query: its profile id (empty until its stored
// fields are read, when the id order put it in place), document number
// and score.
type hit struct {
	id    string
	doc   uint64
	score float64
}

// topHits returns the limit best hits of q in r, ties in profile-id order.
// bleve's own collector orders hits of equal score by internal document
// number, which differs between builds of the same data, and that order
// would also decide which tied hits make the cut at the limit; asking it to
// sort by id loads the id of every matching document, an eighth of a
// search. This collector keeps the best matches by score and every match
// that ties with the worst of them, and loads ids only for those.
func (g *Generation) topHits(ctx context.Context, segs *segments, q *textQuery, limit int) ([]hit, error) {
	s, err := q.newSearcher(segs)
	if err != nil {
		return nil, err
	}
	top, err := collect(ctx, s, limit, true)
	if err != nil {
		return nil, err
	}
	ranks := g.idRanks()
	if uint64(len(ranks)) != segs.numbers() {
		ranks = nil
	}
	return top.hits(segs.r, limit, ranks)
}

// collect returns the best limit matches of s and those tied with the
// worst of them. With prune, a document whose drive score plus the most
// its score clauses could add stays below the worst of a full top is
// passed over without reading its score clauses: it could not make the
// cut, so the result is the same.
func collect(ctx context.Context, s *textSearcher, limit int, prune bool) (*topMatches, error) {
	top, b := &topMatches{}, newBatch()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		floor := math.Inf(-1)
		if prune && len(top.best) == limit {
			floor = top.best[0].score
		}
		ok, err := s.next(b, floor)
		if err != nil {
			return nil, err
		}
		if !ok {
			return top, nil
		}
		for i, doc := range b.docs {
			if b.keep[i] && top.admits(b.scores[i], limit) && !s.segs.deleted(s.segs.locate(doc)) {
				top.add(match{doc, b.scores[i]}, limit)
			}
		}
	}
}

// A match is a document number and its score.
type match struct {
	doc   uint64
	score float64
}

// topMatches holds the best matches seen so far (a min-heap by score of at
// most limit), and the matches left out that tie with the worst of them.
type topMatches struct {
	best matchHeap
	tied []match
}

// admits reports whether a match scoring score would be kept, as best
// or tied. A batch holds deleted documents too (segments.postings), and
// only those a top would keep are looked up: a look-up per drive match
// was a third of what the tenth incremental generation at 5M spent more
// than a full build, its 625 KB of deleted-document bits read at random.
func (t *topMatches) admits(score float64, limit int) bool {
	return len(t.best) < limit || score >= t.best[0].score
}

func (t *topMatches) add(m match, limit int) {
	if len(t.best) < limit {
		heap.Push(&t.best, m)
		return
	}
	switch worst := t.best[0].score; {
	case m.score < worst:
	case m.score == worst:
		t.tied = append(t.tied, m)
	default:
		out := t.best[0]
		t.best[0] = m
		heap.Fix(&t.best, 0)
		if out.score < t.best[0].score {
			t.tied = t.tied[:0]
		} else {
			t.tied = append(t.tied, out)
		}
	}
}

// hits returns the best limit matches, by score and then profile id. With
// the documents' ranks by id they are put in that order by rank, and left
// without their ids, which the reads of their profiles give (profilesOf).
func (t *topMatches) hits(r bindex.IndexReader, limit int, ranks []uint32) ([]hit, error) {
	matches := append(t.best, t.tied...)
	if ranks != nil {
		sort.Slice(matches, func(i, j int) bool {
			if matches[i].score != matches[j].score {
				return matches[i].score > matches[j].score
			}
			return ranks[matches[i].doc] < ranks[matches[j].doc]
		})
		out := make([]hit, min(limit, len(matches)))
		for i := range out {
			out[i] = hit{doc: matches[i].doc, score: matches[i].score}
		}
		return out, nil
	}
	out := make([]hit, 0, len(matches))
	var id bindex.IndexInternalID
	for _, m := range matches {
		id = bindex.NewIndexInternalID(id, m.doc)
		ext, err := r.ExternalID(id)
		if err != nil {
			return nil, fmt.Errorf("document id: %w", err)
		}
		out = append(out, hit{id: ext, doc: m.doc, score: m.score})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	return out[:min(limit, len(out))], nil
}

// matchHeap is a min-heap of matches by score.
type matchHeap []match

func (h matchHeap) Len() int           { return len(h) }
func (h matchHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h matchHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *matchHeap) Push(x any)        { *h = append(*h, x.(match)) }
func (h *matchHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func limitOf(q companydocs.TextQuery) int {
	switch {
	case q.Limit <= 0:
		return defaultLimit
	case q.Limit > maxLimit:
		return maxLimit
	}
	return q.Limit
}

// driveBudget bounds the postings a name query walks. Name tokens are
// taken rarest first (by the documents all their clauses match) into the
// query every hit must match until their document frequencies add up to the
// budget; the rarest is always taken. The other tokens only add to the
// score of those hits, which costs a skip in their postings per hit instead
// of a walk of all of them. bleve's collector scores every document that
// matches the required query, so this bound, not the index size, sets the
// cost of a search: a name shares its rarest words with few others, and a
// document that lacks all of them is not the name searched for.
const driveBudget = 5000

// buildQuery turns q into a textQuery: the rarest name clauses and the
// whole name must match (or, without name terms, the city); the other name
// clauses, city and legal form add to the score; discovery profiles are
// excluded unless asked for; a court code filters.
func buildQuery(q companydocs.TextQuery, stats *termStats) *textQuery {
	nameTerms := cleanTerms(q.NameTerms, maxNameTerms)
	formTerms := cleanTerms(q.LegalFormTerms, maxLegalFormTerms)
	drive, score := nameQueries(nameTerms, formTerms, q, stats)
	city := seatClauses(q.SeatWords, stats)
	tq := &textQuery{drive: drive, score: score, filter: courtFilter(q.CourtCode)}
	switch {
	case drive != nil:
		if city != nil {
			tq.score = append(tq.score, city)
		}
	case city != nil:
		tq.drive = [][]clause{city}
	default:
		return nil
	}
	if !q.Discover {
		// only unverified discovery profiles: see sourceVerifiedDiscovery
		tq.exclude = []clause{{field: fieldSource, value: companydocs.SourceDiscovery, boost: 1}}
	}
	return tq
}

// nameQueries returns the query every hit must match (the rarest name
// tokens up to driveBudget, the whole name) and the score-only clauses of
// the other name tokens.
func nameQueries(terms, formTerms []string, q companydocs.TextQuery, stats *termStats) (drive, score [][]clause) {
	if len(terms) == 0 {
		return nil, nil
	}
	form := legalFormCode(formTerms)
	tokens := make([]tokenQuery, 0, len(terms))
	for _, t := range terms {
		if tq := newTokenQuery(t, form, q, stats); len(tq.clauses) > 0 {
			tokens = append(tokens, tq)
		}
	}
	sort.SliceStable(tokens, func(i, j int) bool { return tokens[i].order < tokens[j].order })
	var walked uint64
	typedDrives := false // the token being typed is in the drive
	last := terms[len(terms)-1]
	for i, tq := range tokens {
		if i == 0 || walked+tq.docs <= driveBudget {
			walked += tq.docs
			drive = append(drive, tq.clauses)
			typedDrives = typedDrives || tq.term == last
		} else {
			score = append(score, tq.scoreClauses())
		}
	}
	if q.Completes {
		// its completions drive where the token does, or where no token
		// does: a hit may hold the word being typed whole or in part
		if cs := completionClauses(last, stats); len(cs) > 0 {
			if typedDrives || len(drive) == 0 {
				drive = append(drive, cs)
			} else {
				score = append(score, cs)
			}
		}
	}
	if q.Only != "" {
		return drive, score
	}
	// the whole name as written: "Müller & Müller" is "mueller mueller",
	// though its clauses above take "mueller" once
	for _, c := range wholeNameClauses(allTerms(q.NameTerms, maxNameTerms), formTerms) {
		drive = append(drive, []clause{c})
	}
	return drive, score
}

// A tokenQuery holds the clauses that match one name token and the sum of
// the documents they match.
type tokenQuery struct {
	term    string
	clauses []clause
	docs    uint64
	order   uint64 // docs, and the seats the token names
	known   bool   // the token itself is a word of some name
}

// scoreClauses returns the clauses of a token that only adds to the score:
// without its typo matches when the token itself is a name word.
func (tq tokenQuery) scoreClauses() []clause {
	if !tq.known {
		return tq.clauses
	}
	out := make([]clause, 0, len(tq.clauses))
	for _, c := range tq.clauses {
		if !c.typo {
			out = append(out, c)
		}
	}
	return out
}

// wholeNameClauses match the name tokens in order and nothing else, and
// the whole normalised name with its legal form.
func wholeNameClauses(terms, formTerms []string) []clause {
	joined := strings.Join(terms, " ")
	out := []clause{{field: fieldNameBase, value: joined, boost: boostNameBase}}
	if key := register.NameKey(strings.TrimSpace(joined + " " + strings.Join(formTerms, " "))); key != "" {
		out = append(out, clause{field: fieldNameKey, value: key, boost: boostNameKey})
	}
	return out
}

// newTokenQuery returns the clauses that match name token t in every way
// the mode allows, leaving out those that match no document; form is the
// query's legal form (see nameFormTerm).
func newTokenQuery(t, form string, q companydocs.TextQuery, stats *termStats) tokenQuery {
	tq := tokenQuery{term: t}
	add := func(field, value string, boost float64) bool {
		df := stats.docFreq(field, value)
		if df > 0 {
			tq.clauses = append(tq.clauses, clause{field: field, value: value, boost: boost})
			tq.docs += df
			tq.order += df
		}
		return df > 0
	}
	// A token that names a seat is likely the query's city, which the city
	// clauses match; its documents count towards the order of tokens, so
	// that a company's own name words drive the search before a city word.
	tq.order = stats.docFreq(fieldSeat, t)
	if q.Only != "" {
		addOnly(t, q.Only, stats, add)
		return tq
	}
	tq.known = add(fieldName, t, boostName)
	add(fieldNamePlain, t, boostNamePlain)
	if form != "" {
		add(fieldNameForm, nameFormTerm(t, form), boostNameForm)
	}
	if (q.Fuzzy || q.Deep) && stats.fuzzyWorthwhile(t, q.Deep) && !clueWord(t, q, stats) {
		for _, e := range typoTerms(t, q.Deep, stats) {
			// bleve's fuzzy query weighs a term at distance d by 1/(d+1)
			if add(fieldName, e.term, boostNameFuzzy/float64(e.distance+1)) {
				tq.clauses[len(tq.clauses)-1].typo = true
			}
		}
	}
	addBeyondName(t, q, stats, add)
	return tq
}

// addClause adds a clause for value in field, if some document holds it,
// and reports whether one does.
type addClause = func(field, value string, boost float64) bool

// addOnly adds the clauses of a query that searches one field alone.
func addOnly(t string, only companydocs.SearchField, stats *termStats, add addClause) {
	switch only {
	case companydocs.OnlyFormerNames:
		add(fieldPreviousNames, t, boostPreviousNames)
	case companydocs.OnlyOfficers:
		add(fieldOfficers, t, boostPerson)
		addOfficerTypos(t, stats, add)
	case companydocs.OnlyAddress:
		add(fieldAddress, t, boostAddressClue)
	}
}

// addBeyondName adds the clauses over former names, officers, addresses
// and sounds that a clue or a deep search asks for.
func addBeyondName(t string, q companydocs.TextQuery, stats *termStats, add addClause) {
	if q.Deep {
		add(fieldPreviousNames, t, boostPreviousNames)
	}
	switch {
	case q.Officers:
		add(fieldOfficers, t, boostPerson)
		addOfficerTypos(t, stats, add)
	case q.Deep:
		add(fieldOfficers, t, boostOfficers)
	}
	switch {
	case q.Address:
		add(fieldAddress, t, boostAddressClue)
	case q.Deep:
		add(fieldAddress, t, boostAddress)
	}
	if q.Deep {
		if code := textfold.Phonetic(t); code != "" {
			add(fieldPhonetic, code, boostPhonetic)
		}
	}
}

// clueWord reports whether t is a word of the clue the query names
// besides a company's name: a word officers bear in a query that names a
// person, a word of some address in a query that holds one
// ("Immobilienstraße 12"), and in either a word some seat bears, the
// person's or the street's town ("Schellohne" in "Oskar Nölle
// Schellohne"). Such a word is spelled as written, a word of the clue,
// not a company's name word mistyped; its typo matches over the names
// would only widen the net, at the dearest lookup of a search (most of a
// millisecond at 5M for a long word).
func clueWord(t string, q companydocs.TextQuery, stats *termStats) bool {
	return q.Officers && stats.docFreq(fieldOfficers, t) > 0 || q.Address && stats.docFreq(fieldAddress, t) > 0 ||
		(q.Officers || q.Address) && stats.docFreq(fieldSeat, t) > 0
}

// completionClauses match the name words that token t starts, as typed
// so far into an autocompletion box, the most frequent first: at most
// maxCompletions of the first maxCompletionScan in term order, and only
// for a start of textfold.MinWordStart runes or more. They are a
// group of their own, beside the token's, so that they do not thin out
// the share of the token's own matches; and a group's score is its
// matches' times the share of its clauses matched, so each weighs as many
// times boostNamePrefix as there are completions: a name holding one
// completion gains what one word would.
func completionClauses(t string, stats *termStats) []clause {
	if utf8.RuneCountInString(t) < textfold.MinWordStart {
		return nil
	}
	found := stats.completions(fieldName, t, maxCompletions, maxCompletionScan)
	out := make([]clause, 0, len(found))
	for _, c := range found {
		out = append(out, clause{field: fieldName, value: c.term, boost: boostNamePrefix * float64(len(found))})
	}
	return out
}

// Completion bounds: the words kept, the words read.
const (
	maxCompletions    = 30
	maxCompletionScan = 1000
)

// addOfficerTypos adds the officers' name words within the typo budget of
// a person's name word that no officer bears (textfold.TypoBudget, as
// for company names): "Beeir" finds "Beier". A word officers bear is
// taken as written, and so is a word some seat bears: the person's town.
func addOfficerTypos(t string, stats *termStats, add addClause) {
	if stats.docFreq(fieldOfficers, t) > 0 || stats.docFreq(fieldSeat, t) > 0 {
		return
	}
	distance, _ := fuzzyDistance(t)
	if distance == 0 {
		return
	}
	// persons' names are short, and their second letter is mistyped as
	// often as any other ("Suegmund"): only the first must be right
	for _, e := range stats.fuzzyTerms(fieldOfficers, t, distance, 1) {
		add(fieldOfficers, e.term, boostPerson/float64(e.distance+1))
	}
}

// typoTerms returns the name terms within the edit distance of t. Outside
// deep mode the token is one seen in almost no name, most likely mistyped:
// a term one edit away is then taken as the word meant, and the automaton
// of two edits, which costs several times more to build and to run over
// the dictionary, is built only when there is none.
func typoTerms(t string, deep bool, stats *termStats) []fuzzyTerm {
	distance, prefix := fuzzyDistance(t)
	if distance == 0 {
		return nil
	}
	if distance == 2 && !deep {
		if terms := stats.fuzzyTerms(fieldName, t, 1, prefix); len(terms) > 0 {
			return terms
		}
	}
	return stats.fuzzyTerms(fieldName, t, distance, prefix)
}

// legalFormCode returns the canonical code of the legal form the query's
// legal-form tokens spell, "" if none.
func legalFormCode(formTerms []string) string {
	if len(formTerms) == 0 {
		return ""
	}
	if _, form, ok := register.SplitLegalForm(strings.Join(formTerms, " ")); ok {
		return form.Code
	}
	return ""
}

// seatClauses boost profiles whose seat is the words together, or has one
// of them; words that are no seat's are left out.
func seatClauses(words []string, stats *termStats) []clause {
	whole := strings.ToLower(strings.Join(strings.Fields(strings.Join(words, " ")), " "))
	if whole == "" {
		return nil
	}
	clauses := []clause{{field: fieldSeatKey, value: whole, boost: boostSeatKey}}
	for _, t := range strings.Fields(whole) {
		if stats.docFreq(fieldSeat, t) > 0 {
			clauses = append(clauses, clause{field: fieldSeat, value: t, boost: boostSeat})
		}
	}
	return clauses
}

// courtFilter returns the clauses of the court codes code stands for.
func courtFilter(code string) []clause {
	var clauses []clause
	for _, c := range courtCodes(strings.TrimSpace(code)) {
		clauses = append(clauses, clause{field: fieldCourt, value: c, boost: 1})
	}
	return clauses
}

// allTerms lower-cases terms and drops empty ones, keeping repeated ones,
// at most max.
func allTerms(terms []string, max int) []string {
	out := make([]string, 0, len(terms))
	for _, t := range terms {
		if t = strings.ToLower(strings.TrimSpace(t)); t != "" && len(out) < max {
			out = append(out, t)
		}
	}
	return out
}

// cleanTerms drops empty and repeated terms and keeps at most max; terms
// are lower-cased because the index holds lower-case tokens.
func cleanTerms(terms []string, max int) []string {
	out := make([]string, 0, len(terms))
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == max {
			break
		}
	}
	return out
}
