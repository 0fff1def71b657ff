package index

import (
	"context"
	"fmt"
	"sort"

	bindex "github.com/blevesearch/bleve_index_api"
)

// A token in more than max(minCommonDocs, documents/commonDivisor) names
// is common: "&", "fuer", "bau", "service". Fuzzy expansion is skipped for
// common tokens, even in deep mode: they are spelled right, and their
// neighbours in the dictionary are common too.
const (
	minCommonDocs = 1000
	commonDivisor = 50
)

// A name token found in at least fuzzySkipDocs names is taken as spelled
// right in standard mode: building the Levenshtein automaton of every token
// costs more than the rest of a typical search. Deep mode also expands
// tokens found in up to fuzzyDeepDocs names (rare surnames and words); a
// more frequent token is a first name or a common word, spelled right,
// whose neighbours in the dictionary are as frequent and only add postings
// to skip through (BENCHMARKS.md, "Figures behind code comments").
const (
	fuzzySkipDocs = 5
	fuzzyDeepDocs = 1000
)

// termStats reads document frequencies from one snapshot of the index. A
// read error is kept (err) rather than returned by each lookup, so that the
// query can be built in one pass; the search fails with it afterwards
// instead of running without the clause the failed lookup would have
// decided.
type termStats struct {
	ctx    context.Context
	r      bindex.IndexReader
	common uint64
	err    error
	// segs are the reader's segments, whose postings lists, read once per
	// term, hold the frequencies: building a query asks for some (a
	// token's name and seat frequencies) more than once
	segs *segments
	// deadCounts and novel are the generation's, which segs keep
	deadCounts *deadCounts
	novel      *novelTerms
}

type fieldTerm struct{ field, term string }

// fail keeps the first read error.
func (s *termStats) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (g *Generation) newTermStats(ctx context.Context) (*termStats, error) {
	adv, err := g.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("index reader: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("index reader: %w", err)
	}
	docs, err := r.DocCount()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("document count: %w", err)
	}
	return &termStats{ctx: ctx, r: r, common: max(minCommonDocs, docs/commonDivisor), deadCounts: g.deadCounts, novel: g.novel}, nil
}

func (s *termStats) close() {
	if s != nil {
		s.r.Close()
	}
}

// docFreq returns the number of documents holding term in field; 0 without
// statistics, or after a read error, which s.err then holds.
func (s *termStats) docFreq(field, term string) uint64 {
	if s == nil || s.err != nil {
		return 0
	}
	n, err := s.count(field, term)
	if err != nil {
		s.fail(fmt.Errorf("document frequency of %q in %s: %w", term, field, err))
		return 0
	}
	return n
}

// count reads the documents holding term in field: from each segment's
// postings list of the term, less its deleted documents, when the reader
// is scorch's (a term field reader, which opens iterators too, costs
// several times more); from a term field reader otherwise.
func (s *termStats) count(field, term string) (uint64, error) {
	segs, err := s.segments()
	if err != nil {
		tfr, err := s.r.TermFieldReader(s.ctx, []byte(term), field, false, false, false)
		if err != nil {
			return 0, err
		}
		defer tfr.Close()
		return tfr.Count(), nil
	}
	p, err := segs.postings(field, term)
	if err != nil {
		return 0, err
	}
	return p.count, nil
}

// segments returns the segments of s's reader, read once.
func (s *termStats) segments() (*segments, error) {
	if s.segs == nil {
		segs, err := segmentsOf(s.r)
		if err != nil {
			return nil, err
		}
		segs.deadCounts = s.deadCounts
		segs.deadBits = s.deadCounts.deadBitsOf(segs)
		segs.novel = s.novel
		s.segs = segs
	}
	return s.segs, nil
}

func (s *termStats) threshold() uint64 {
	if s == nil {
		return ^uint64(0)
	}
	return s.common
}

// fuzzyWorthwhile reports whether a name token should also be matched with
// typos.
func (s *termStats) fuzzyWorthwhile(term string, deep bool) bool {
	df := s.docFreq(fieldName, term)
	if df > s.threshold() {
		return false
	}
	return (deep && df <= fuzzyDeepDocs) || s == nil || df+s.docFreq(fieldNamePlain, term) < fuzzySkipDocs
}

// A fuzzyTerm is a dictionary term within the edit distance of a token.
type fuzzyTerm struct {
	term     string
	distance uint8
}

// fuzzyTerms returns the terms of field within distance edits of term
// that share its first prefix runes, the term itself left out, at most
// maxFuzzyTerms in term order; nil without statistics, or after a read
// error, which s.err then holds. The reader must be scorch's (dictFuzzy);
// another is an error, not a search without typo matches.
func (s *termStats) fuzzyTerms(field, term string, distance, prefix int) []fuzzyTerm {
	if s == nil || s.err != nil {
		return nil
	}
	segs, err := s.segments()
	if err != nil {
		s.fail(fmt.Errorf("fuzzy terms of %q in %s: %w", term, field, err))
		return nil
	}
	found, err := segs.fuzzy(field, term, distance, prefixOf(term, prefix))
	if err != nil {
		s.fail(fmt.Errorf("fuzzy terms of %q in %s: %w", term, field, err))
		return nil
	}
	out := found[:0]
	for _, f := range found {
		if f.term != term && len(out) < maxFuzzyTerms && s.held(field, f.term) {
			out = append(out, f)
		}
	}
	return out
}

// held reports whether a term of a dictionary is held by a live document.
// A deleted document's terms stay in its segment's dictionary until the
// segment is merged, which a generation built on another's leaves to the
// next full build: a walk of the dictionaries would count them where a
// full build of the same profiles has none (index/DESIGN.md,
// "Incremental builds"). Without deleted documents every term is held,
// and nothing is looked up.
func (s *termStats) held(field, term string) bool {
	segs, err := s.segments()
	if err != nil || !segs.hasDeleted() {
		return true
	}
	held, err := segs.holdsLive(field, term)
	if err != nil {
		s.fail(fmt.Errorf("live documents of %q in %s: %w", term, field, err))
	}
	return held
}

// maxFuzzyTerms bounds the typo matches of one token, as bleve's own
// fuzzy query does with its clause limit.
const maxFuzzyTerms = 200

// prefixOf returns the first n runes of s.
func prefixOf(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// A completion is a term that a typed start completes, and its documents.
type completion struct {
	term string
	docs uint64
}

// completions returns the terms of field that start with prefix, the
// prefix itself left out, the most frequent first (then in term order):
// at most keep of the first scan in term order. nil after a read error,
// which s.err then holds. The frequencies are the terms' postings, not
// the dictionary entries' counts: zap's dictionary iterator reports 1 for
// every term after one stored as a single hit.
func (s *termStats) completions(field, prefix string, keep, scan int) []completion {
	if s == nil || s.err != nil {
		return nil
	}
	terms, err := s.termsStarting(field, prefix, scan)
	if err != nil {
		s.fail(fmt.Errorf("terms starting %q in %s: %w", prefix, field, err))
		return nil
	}
	out := make([]completion, 0, len(terms))
	for _, t := range terms {
		if n := s.docFreq(field, t); n > 0 {
			out = append(out, completion{term: t, docs: n})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].docs > out[j].docs })
	return out[:min(keep, len(out))]
}

// termsStarting returns the first max terms of field that start with
// prefix, in term order, the prefix itself left out.
func (s *termStats) termsStarting(field, prefix string, max int) ([]string, error) {
	dict, err := s.r.FieldDictPrefix(field, []byte(prefix))
	if err != nil {
		return nil, err
	}
	defer dict.Close()
	var out []string
	for len(out) < max {
		e, err := dict.Next()
		if err != nil || e == nil {
			return out, err
		}
		if e.Term != prefix && s.held(field, e.Term) {
			out = append(out, e.Term)
		}
	}
	return out, nil
}
