package resolver

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"companydocs/textfold"

	"github.com/agnivade/levenshtein"
)

// genericWords are frequent in company names and say little about which
// company is meant; they weigh weightGeneric instead of 1.
var genericWords = wordSet(`holding verwaltung verwaltungs verwaltungsgesellschaft immobilien
	beteiligung beteiligungs beteiligungsgesellschaft service services deutschland gesellschaft
	handel handels bau consulting management international gruppe group invest vermoegensverwaltung
	vermoegensverwaltungs grundstuecks grundstuecksgesellschaft projekt partner partners verlag
	vertrieb vertriebs technik systems solutions gmbh ag kg co europe germany trading immobilienverwaltung
	objekt verein stiftung energie software media medien marketing praxis autohaus`)

// stopWords connect words and identify nothing.
var stopWords = wordSet(`der die das des dem den fuer fur von vom zu zur zum im in am an auf bei mit und & of the and
	e v st`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// tokenWeight says how much a folded token counts towards identity.
func tokenWeight(t string) float64 {
	if w, ok := wordWeights[t]; ok {
		return w
	}
	return 1
}

// wordWeights holds the weight of the generic and stop words, read once
// for every word of every candidate's names.
var wordWeights = func() map[string]float64 {
	m := map[string]float64{}
	for w := range genericWords {
		m[w] = weightGeneric
	}
	for w := range stopWords {
		m[w] = weightStop
	}
	return m
}()

// token is a folded token with its plain folding (ä -> a), its length in
// runes, whether it is a number and its weight, computed once per name
// rather than once per pair of tokens. A query's last token is
// a start when the word is still being typed (Request.Completes): it
// matches every word it starts as if typed whole.
type token struct {
	folded, plain string
	runes         int
	number        bool
	weight        float64
	start         bool
}

// tokenList is a name's folded tokens, with their plain foldings.
type tokenList struct {
	words []string
	toks  []token
}

func newTokenList(folded []string) tokenList {
	l := tokenList{words: folded, toks: make([]token, len(folded))}
	for i, t := range folded {
		l.toks[i] = newToken(t)
	}
	return l
}

// plainWords are the list's tokens in their plain spelling (plainOf).
func (l tokenList) plainWords() []string {
	out := make([]string, len(l.toks))
	for i, t := range l.toks {
		out[i] = t.plain
	}
	return out
}

func newToken(folded string) token {
	return token{folded: folded, plain: plainOf(folded), runes: utf8.RuneCountInString(folded),
		number: isNumber(folded), weight: tokenWeight(folded)}
}

// plainOf returns textfold.FoldPlain of a folded token. Folded tokens
// are almost always plain lower-case ASCII letters and digits, which
// FoldPlain leaves as they are ("und" aside, which Fold never leaves).
func plainOf(t string) string {
	for i := 0; i < len(t); i++ {
		if c := t[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return textfold.FoldPlain(t)
		}
	}
	if t == "und" {
		return textfold.FoldPlain(t)
	}
	return t
}

// tokenSims returns how well a matches b and how well b matches a, which
// differ only in prefix matches: the Levenshtein distance, the costly
// part, is computed once for both.
func tokenSims(a, b token) (ab, ba float64) {
	if a.start && len(b.folded) > len(a.folded) && strings.HasPrefix(b.folded, a.folded) && a.runes >= textfold.MinWordStart {
		return simExact, simExact
	}
	x, y := a.folded, b.folded
	if x == y {
		return simExact, simExact
	}
	if a.plain == b.plain {
		return simPlain, simPlain
	}
	if a.number || b.number {
		return 0, 0
	}
	if sim, ok := typoSim(a, b); ok {
		return sim, sim
	}
	if a.runes >= 4 && strings.HasPrefix(y, x) {
		ab = simPrefix
	}
	if b.runes >= 4 && strings.HasPrefix(x, y) {
		ba = simPrefix
	}
	return ab, ba
}

// typoSim returns the similarity of two words within the typo budget of
// the shorter, and whether they are.
func typoSim(a, b token) (float64, bool) {
	n, m := a.runes, b.runes
	// the distance is at least the difference in length
	budget := textfold.TypoBudget(min(n, m))
	if budget <= 0 || abs(n-m) > budget || lettersApart(a.folded, b.folded, budget) {
		return 0, false
	}
	d := levenshtein.ComputeDistance(a.folded, b.folded)
	if d > budget {
		return 0, false
	}
	return simTypo - simPerEdit*float64(d-1), true
}

func abs(x int) int { return max(x, -x) }

// lettersApart reports whether ASCII words x and y differ by more than
// budget edits for their letters alone: an edit changes the count of at
// most two letters by one each, so the counts' differences, summed, are at
// most twice the distance. Most pairs a name match compares are two
// unrelated words of about one length, which this tells apart for a
// fraction of what the Levenshtein distance costs. A word with other bytes
// is never apart.
func lettersApart(x, y string, budget int) bool {
	// a count beyond int8 wraps to a smaller one, which can only make two
	// words look closer than they are, never apart
	var counts [128]int8
	for i := 0; i < len(x); i++ {
		if x[i] >= utf8.RuneSelf {
			return false
		}
		counts[x[i]]++
	}
	for i := 0; i < len(y); i++ {
		if y[i] >= utf8.RuneSelf {
			return false
		}
		counts[y[i]]--
	}
	apart := 0
	for _, w := range [2]string{x, y} {
		for i := 0; i < len(w); i++ {
			apart += abs(int(counts[w[i]]))
			counts[w[i]] = 0
		}
	}
	return apart > 2*budget
}

func isNumber(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
}

// nameMatch is the similarity of query tokens to a name's tokens.
type nameMatch struct {
	score float64 // 0..1
	// recall is the weighted share of query tokens found in the name.
	recall float64
	// numberConflict is set when both carry numbers and they differ.
	numberConflict bool
}

// matchName scores query tokens against name tokens: weighted recall of
// the query and weighted precision over the name (recallShare,
// precisionShare).
func matchName(query, name tokenList) nameMatch {
	if len(query.words) == 0 || len(name.words) == 0 {
		return nameMatch{}
	}
	if len(query.words) != len(name.words) && sameLetters(query.words, name.words) {
		return nameMatch{score: simCompound, recall: simCompound}
	}
	recall, precision := covers(query.toks, name.toks)
	m := nameMatch{score: recallShare*recall + precisionShare*precision, recall: recall}
	m.numberConflict = numbersDiffer(query.words, name.words)
	return m
}

// sameLetters reports whether a and b spell the same letters once their
// spaces are dropped ("auto haus" and "autohaus"), without joining them.
func sameLetters(a, b []string) bool {
	i, j := 0, 0 // position in a[0] and b[0]
	for {
		for len(a) > 0 && a[0] == "" {
			a = a[1:]
		}
		for len(b) > 0 && b[0] == "" {
			b = b[1:]
		}
		if len(a) == 0 || len(b) == 0 {
			break
		}
		if a[0][i] != b[0][j] {
			return false
		}
		if i++; i == len(a[0]) {
			a, i = a[1:], 0
		}
		if j++; j == len(b[0]) {
			b, j = b[1:], 0
		}
	}
	return len(a) == 0 && len(b) == 0
}

// covers returns the weighted shares of the tokens of a matched by some
// token of b, and of b matched by some token of a, comparing each pair
// once.
func covers(a, b []token) (aCovered, bCovered float64) {
	var bufA, bufB [16]float64
	bestA, bestB := zeros(bufA[:0], len(a)), zeros(bufB[:0], len(b))
	for i, x := range a {
		for j, y := range b {
			xy, yx := tokenSims(x, y)
			bestA[i], bestB[j] = max(bestA[i], xy), max(bestB[j], yx)
		}
	}
	return weightedShare(a, bestA), weightedShare(b, bestB)
}

// zeros returns n zeros in buf's array when they fit.
func zeros(buf []float64, n int) []float64 {
	return append(buf, make([]float64, n)...)
}

// weightedShare is the weighted share of toks matched, given each token's
// best match.
func weightedShare(toks []token, best []float64) float64 {
	var total, got float64
	for i, x := range toks {
		w := x.weight
		total += w
		got += w * best[i]
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// numbersDiffer reports whether the query names a number that the name
// does not carry while the name carries another ("Objekt 1" vs "Objekt 2").
func numbersDiffer(query, name []string) bool {
	nameHasNumber, missing := false, false
	for _, t := range name {
		nameHasNumber = nameHasNumber || isNumber(t)
	}
	for _, t := range query {
		if isNumber(t) && !hasNumber(name, t) {
			missing = true
		}
	}
	return nameHasNumber && missing
}

// hasNumber reports whether tokens hold the number n, leading zeros aside.
func hasNumber(tokens []string, n string) bool {
	n = strings.TrimLeft(n, "0")
	for _, t := range tokens {
		if isNumber(t) && strings.TrimLeft(t, "0") == n {
			return true
		}
	}
	return false
}

// seatForms are a seat's tokens in the plain spelling of its folded tokens
// ("koeln") and, where it differs, as FoldPlain spells the seat ("koln"),
// computed once per query and seat (seatFormsOf).
type seatForms struct{ folded, plain []string }

// seatFormsOf returns the forms of seat, computed once per query: the
// candidates of a query share few seats.
func (pq *parsedQuery) seatFormsOf(seat string) seatForms {
	if sf, ok := pq.seats[seat]; ok {
		return sf
	}
	if pq.seats == nil {
		pq.seats = make(map[string]seatForms)
	}
	sf := newSeatForms(seat)
	pq.seats[seat] = sf
	return sf
}

func newSeatForms(seat string) seatForms {
	folded := textfold.Tokens(textfold.Fold(seat))
	sf := seatForms{folded: make([]string, len(folded))}
	for i, t := range folded {
		sf.folded[i] = plainOf(t)
	}
	if strings.IndexFunc(seat, func(r rune) bool { return r >= utf8.RuneSelf }) < 0 {
		return sf // FoldPlain spells an ASCII seat as Fold does
	}
	if plain := textfold.Tokens(textfold.FoldPlain(seat)); !slices.Equal(plain, sf.folded) {
		sf.plain = plain
	}
	return sf
}

// splitSeat removes the tokens that spell the candidate's seat from the
// query tokens, so that "Müller GmbH Köln" matches name "Müller" at seat
// "Köln"; queryPlain are the query tokens in plain spelling (plainOf). It
// returns the remaining tokens and whether the seat matched.
func splitSeat(query, queryPlain []string, seat seatForms) ([]string, bool) {
	if len(seat.folded) == 0 {
		return query, false
	}
	if rest, ok := splitSeatTokens(query, queryPlain, seat.folded); ok {
		return rest, true
	}
	// typed without umlauts: "Koln" for "Köln"
	if seat.plain != nil {
		return splitSeatTokens(query, queryPlain, seat.plain)
	}
	return query, false
}

func splitSeatTokens(query, queryPlain, seatTokens []string) ([]string, bool) {
	// The seat may be written shortened: "Freiburg" for "Freiburg im
	// Breisgau", so match a prefix of the seat's tokens of at least one.
	// The last place first: a seat typed after a name that holds it
	// ("Bienenzuchtverein Schweinfurt 1872 e.V. Schweinfurt") leaves the
	// name's words in their order.
	for n := len(seatTokens); n >= 1; n-- {
		want := seatTokens[:n]
		for i := len(query) - n; i >= 0; i-- {
			if slices.Equal(queryPlain[i:i+n], want) {
				rest := append(append([]string{}, query[:i]...), query[i+n:]...)
				return rest, true
			}
		}
	}
	return query, false
}

// queryList is the token list of a query's words (a reading, less a
// candidate's seat), its last token marked a start when the query's last
// word is still being typed and the candidate's seat did not take it.
func queryList(pq *parsedQuery, words []string) tokenList {
	query := newTokenList(words)
	if n := len(query.toks); n > 0 && pq.beingTyped(query.words, query.words[n-1]) {
		query.toks[n-1].start = true
	}
	return query
}

// beingTyped reports whether word is the query's last word, still being
// typed, and the last of tokens, the query's words a candidate's seat left.
func (pq *parsedQuery) beingTyped(tokens []string, word string) bool {
	return pq.completes && len(tokens) > 0 && tokens[len(tokens)-1] == word &&
		len(pq.tokens) > 0 && pq.tokens[len(pq.tokens)-1] == word
}
