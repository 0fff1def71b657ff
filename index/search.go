package index

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/blevesearch/bleve/v2"
	bsearch "github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bolt "go.etcd.io/bbolt"

	"companydocs"
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
	boostNameBase      = 15.0 // all name tokens, in order, and nothing else
	boostNameKey       = 20.0 // whole normalised name including the legal form
	boostNameForm      = 2.0  // name token of a name with the query's legal form
	boostSeatKey       = 6.0  // whole seat equals the city
	boostSeat          = 3.0  // seat token equals a city token
	boostPreviousNames = 5.0  // deep: token of a former name
	boostOfficers      = 3.0  // deep: token of an officer's name
	boostAddress       = 1.5  // deep: address token
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

// fuzzyDistance scales typo tolerance to the token length: short tokens
// would match too much. It also returns the prefix that must match exactly,
// which bounds how many dictionary terms a fuzzy query expands to.
func fuzzyDistance(term string) (distance, prefix int) {
	switch n := len([]rune(term)); {
	case n <= 3:
		return 0, 0
	case n <= 7:
		return 1, 1
	default:
		return 2, 2
	}
}

// SearchText finds the profiles best matching q, best first, at most
// q.Limit (default 10, capped at 200). A hit matches a name token that is
// not common, or the whole name; common tokens, the city and the legal form
// only raise scores. q.Fuzzy adds typo matches for tokens rarely or never
// seen in names; q.Deep adds typo matches for every uncommon token, former
// names, officers, address and Kölner Phonetik codes. Without q.Discover
// discovery profiles are left out. An empty query gives no hits.
func (g *Generation) SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error) {
	stats, err := g.newTermStats(ctx)
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	bq := buildQuery(q, stats)
	stats.close()
	if bq == nil {
		return nil, nil
	}
	req := bleve.NewSearchRequestOptions(bq, limitOf(q), 0, false)
	res, err := g.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	sortTies(res.Hits)
	hits := make([]companydocs.Hit, 0, len(res.Hits))
	err = g.db.View(func(tx *bolt.Tx) error {
		for _, h := range res.Hits {
			p, err := getProfile(tx, h.ID)
			if err != nil {
				return err
			}
			if p == nil {
				return fmt.Errorf("indexed profile %q missing from profile store", h.ID)
			}
			hits = append(hits, companydocs.Hit{Profile: p, Score: h.Score})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search index %s: %w", g.ID(), err)
	}
	return hits, nil
}

// sortTies orders hits of equal score by profile id. bleve orders them by
// internal document number, which differs between builds of the same data.
// Sorting the returned hits is free; asking bleve to sort by score and id
// (which would also fix which tied hits make the cut at the limit) costs
// 10-20% of a search in BenchmarkSearchText.
func sortTies(hits bsearch.DocumentMatchCollection) {
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
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

// buildQuery turns q into a bleve query: the name clauses must match (or,
// without name terms, the city); common name tokens, city and legal form add
// to the score; discovery profiles are excluded unless asked for; a court
// code filters.
func buildQuery(q companydocs.TextQuery, stats *termStats) query.Query {
	nameTerms := cleanTerms(q.NameTerms, maxNameTerms)
	formTerms := cleanTerms(q.LegalFormTerms, maxLegalFormTerms)
	rare, common := stats.splitCommon(nameTerms)
	form := legalFormCode(formTerms)
	must := nameQuery(rare, nameTerms, formTerms, form, q, stats)
	var should []query.Query
	if c := cityQuery(strings.ToLower(strings.TrimSpace(q.City))); c != nil {
		should = append(should, c)
	}
	if must == nil && len(should) > 0 {
		must, should = should[0], nil
	}
	if must == nil {
		return nil
	}
	bq := query.NewBooleanQuery([]query.Query{must}, should, nil)
	for _, t := range common {
		bq.AddShould(termQuery(t, form, q, stats, false))
	}

	if !q.Discover {
		bq.AddMustNot(term(fieldSource, companydocs.SourceDiscovery, 1))
	}
	if f := courtFilter(q.CourtCode); f != nil {
		bq.AddFilter(f)
	}
	return bq
}

// nameQuery matches any of the rare name tokens (more tokens, more score)
// or the whole name.
func nameQuery(rare, all, formTerms []string, form string, q companydocs.TextQuery, stats *termStats) query.Query {
	if len(all) == 0 {
		return nil
	}
	var clauses []query.Query
	for _, t := range rare {
		clauses = append(clauses, termQuery(t, form, q, stats, stats.fuzzyWorthwhile(t, q.Deep)))
	}
	joined := strings.Join(all, " ")
	clauses = append(clauses, term(fieldNameBase, joined, boostNameBase))
	if key := companydocs.NameKey(strings.TrimSpace(joined + " " + strings.Join(formTerms, " "))); key != "" {
		clauses = append(clauses, term(fieldNameKey, key, boostNameKey))
	}
	return query.NewDisjunctionQuery(clauses)
}

// termQuery matches one name token in every way the mode allows; form is
// the query's legal form (see nameFormTerm), fuzzy says whether the token
// may be matched with typos.
func termQuery(t, form string, q companydocs.TextQuery, stats *termStats, fuzzy bool) query.Query {
	clauses := []query.Query{
		term(fieldName, t, boostName),
		term(fieldNamePlain, t, boostNamePlain),
	}
	if form != "" {
		clauses = append(clauses, term(fieldNameForm, nameFormTerm(t, form), boostNameForm))
	}
	if fuzzy && (q.Fuzzy || q.Deep) {
		if distance, prefix := fuzzyDistance(t); distance > 0 {
			fq := query.NewFuzzyQuery(t)
			fq.SetField(fieldName)
			fq.SetFuzziness(distance)
			fq.SetPrefix(prefix)
			fq.SetBoost(boostNameFuzzy)
			clauses = append(clauses, fq)
		}
	}
	if q.Deep {
		clauses = append(clauses,
			term(fieldPreviousNames, t, boostPreviousNames),
			term(fieldOfficers, t, boostOfficers),
			term(fieldAddress, t, boostAddress))
		if code := companydocs.Phonetic(t); code != "" && !stats.isCommon(fieldPhonetic, code) {
			clauses = append(clauses, term(fieldPhonetic, code, boostPhonetic))
		}
	}
	return query.NewDisjunctionQuery(clauses)
}

// legalFormCode returns the canonical code of the legal form the query's
// legal-form tokens spell, "" if none.
func legalFormCode(formTerms []string) string {
	if len(formTerms) == 0 {
		return ""
	}
	if _, form, ok := companydocs.SplitLegalForm(strings.Join(formTerms, " ")); ok {
		return form.Code
	}
	return ""
}

// cityQuery boosts profiles whose seat is the city, or contains its tokens.
func cityQuery(city string) query.Query {
	if city == "" {
		return nil
	}
	clauses := []query.Query{term(fieldSeatKey, city, boostSeatKey)}
	for _, t := range strings.Fields(city) {
		clauses = append(clauses, term(fieldSeat, t, boostSeat))
	}
	return query.NewDisjunctionQuery(clauses)
}

func courtFilter(code string) query.Query {
	codes := courtCodes(strings.TrimSpace(code))
	if len(codes) == 0 {
		return nil
	}
	var clauses []query.Query
	for _, c := range codes {
		clauses = append(clauses, term(fieldCourt, c, 1))
	}
	return query.NewDisjunctionQuery(clauses)
}

func term(field, value string, boost float64) query.Query {
	tq := query.NewTermQuery(value)
	tq.SetField(field)
	tq.SetBoost(boost)
	return tq
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
