package index

import (
	"errors"
	"fmt"
	"sort"

	"github.com/blevesearch/bleve/v2/index/scorch"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	"github.com/blevesearch/vellum"
)

// dictFuzzy returns the terms of field within distance edits of term that
// start with prefix, with their distances, in term order: what scorch's
// FieldDictFuzzy returns (bleve_assumptions_test.go compares the two).
//
// scorch builds a complete Levenshtein DFA for every call: a table of
// 256 transitions for each state the term could need, some hundred
// kilobytes for a ten-letter term at two edits, zeroed and mostly unused.
// At 1.2M records that was half of all the bytes a search allocated
// (docs/benchmarks-history.md, "Search at half the cost"). The dictionary walk only
// visits the states the dictionary's terms lead to, so editAutomaton
// computes those as they are reached instead. It walks each segment's
// dictionary through scorch's public segment API and merges the terms.
func dictFuzzy(snap *scorch.IndexSnapshot, field, term string, distance int, prefix string) ([]fuzzyTerm, error) {
	w := newFuzzyWalk(term, distance, prefix)
	for _, s := range snap.Segments() {
		if err := w.segment(s.Segment(), field); err != nil {
			return nil, err
		}
	}
	return w.terms(), nil
}

// A fuzzyWalk collects the terms of one or more dictionaries within an
// edit distance of a term, each once.
type fuzzyWalk struct {
	a          *editAutomaton
	start, end []byte
	found      map[string]uint8
}

func newFuzzyWalk(term string, distance int, prefix string) *fuzzyWalk {
	w := &fuzzyWalk{a: newEditAutomaton(term, distance), found: map[string]uint8{}}
	if prefix != "" {
		w.start = []byte(prefix)
		w.end = prefixEnd(w.start)
	}
	return w
}

// segment adds the matching terms of seg's dictionary of field.
func (w *fuzzyWalk) segment(seg segment.Segment, field string) error {
	dict, err := seg.Dictionary(field)
	if err != nil {
		return fmt.Errorf("dictionary of %s: %w", field, err)
	}
	it := walkTerms(dict, w.a, w.start, w.end)
	e, err := it.Next()
	for ; err == nil && e != nil; e, err = it.Next() {
		if _, ok := w.found[e.Term]; ok {
			continue
		}
		d := uint8(e.EditDistance)
		if e.Term == string(w.start) {
			// vellum's iterator sets no distance for a match at its start
			// key, which it reaches without its walk; it reports 0
			_, d = w.a.MatchAndDistance(e.Term)
		}
		w.found[e.Term] = d
	}
	return err
}

// walkTerms iterates over the terms of dict that a accepts between start
// and end. It reads no postings where the dictionary can leave them
// (zap's AutomatonIteratorOmitCount, which scorch's own fuzzy walk uses
// too): a walk wants the terms, not their counts.
func walkTerms(dict segment.TermDictionary, a segment.Automaton, start, end []byte) segment.DictionaryIterator {
	if d, ok := dict.(dictionaryOmitCount); ok {
		return d.AutomatonIteratorOmitCount(a, start, end)
	}
	return dict.AutomatonIterator(a, start, end)
}

// dictionaryOmitCount is zap's dictionary walk without postings counts.
type dictionaryOmitCount interface {
	AutomatonIteratorOmitCount(a segment.Automaton, startKeyInclusive, endKeyExclusive []byte) segment.DictionaryIterator
}

// set adds the matching terms of an FST of terms (novelTerms).
func (w *fuzzyWalk) set(fst *vellum.FST) error {
	it, err := fst.Search(w.a, w.start, w.end)
	for ; err == nil; err = it.Next() {
		term, _ := it.Current()
		if _, ok := w.found[string(term)]; !ok {
			_, w.found[string(term)] = w.a.MatchAndDistance(string(term))
		}
	}
	if errors.Is(err, vellum.ErrIteratorDone) {
		return nil
	}
	return err
}

// terms returns the terms found, in term order.
func (w *fuzzyWalk) terms() []fuzzyTerm {
	out := make([]fuzzyTerm, 0, len(w.found))
	for t, d := range w.found {
		out = append(out, fuzzyTerm{term: t, distance: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].term < out[j].term })
	return out
}

// prefixEnd returns the first key after every key that starts with p, nil
// when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// editAutomaton accepts the UTF-8 strings within max edits of a query,
// an edit being an insertion, deletion or substitution of a character or
// a swap of two adjacent ones (the optimal string alignment distance, as
// vellum's Levenshtein automata with transpositions count). It implements
// vellum.FuzzyAutomaton over bytes.
//
// A state is one row of the edit distance table: the distances of the
// bytes read so far to each prefix of the query, with the last character
// and the state of the one before it, for swaps, and the bits of a
// character read in part. The dictionary walk is depth first: it asks
// for the successor of the state on top of its stack only, and drops a
// state before it takes another at the same depth. So a state is its
// depth (its slot), and a successor overwrites the slot after its
// predecessor's; the automaton holds one path of the walk, not every
// state the walk reached. TestDictFuzzy compares every lookup with the
// textbook table, which catches a walk that is not depth first.
type editAutomaton struct {
	query []rune
	max   uint8
	// slots[0] is the dead state, slots[1] the start, slots[k+1] the state
	// after k bytes
	slots []editState
	rows  []uint8 // row of slot k at k*(len(query)+1)
}

type editState struct {
	prev    int  // slot of the state before the last complete character, 0 for none
	chars   int  // complete characters read
	last    rune // the last complete character read
	partial rune // the bits of a character read in part
	need    uint8
	best    uint8 // the least distance in the row
}

func newEditAutomaton(query string, max int) *editAutomaton {
	a := &editAutomaton{query: []rune(query), max: uint8(min(max, 254))}
	n := len(a.query) + 1
	a.slots = make([]editState, 2, 32)
	a.rows = make([]uint8, 2*n, 32*n)
	for j := range n {
		a.rows[n+j] = a.saturate(j)
	}
	return a
}

// saturate caps a distance at max+1: past the budget, how far past does
// not matter, and rows stay in a byte.
func (a *editAutomaton) saturate(d int) uint8 { return uint8(min(d, int(a.max)+1)) }

func (a *editAutomaton) row(s int) []uint8 {
	n := len(a.query) + 1
	return a.rows[s*n : (s+1)*n]
}

func (a *editAutomaton) Start() int { return 1 }

func (a *editAutomaton) IsMatch(s int) bool {
	return s > 0 && a.slots[s].need == 0 && a.row(s)[len(a.query)] <= a.max
}

// CanMatch reports whether some continuation may still match: a row
// whose every distance is past the budget only grows (a swap reads the
// row before it, whose entries are at most one less than this row's
// neighbours, so it cannot bring one back).
func (a *editAutomaton) CanMatch(s int) bool { return s > 0 && a.slots[s].best <= a.max }

func (a *editAutomaton) WillAlwaysMatch(int) bool { return false }

// EditDistance returns the distance of a matching state's bytes to the
// query.
func (a *editAutomaton) EditDistance(s int) uint8 { return a.row(s)[len(a.query)] }

// MatchAndDistance walks input on an automaton of its own, leaving this
// one's path alone.
func (a *editAutomaton) MatchAndDistance(input string) (bool, uint8) {
	b := newEditAutomaton(string(a.query), int(a.max))
	s := b.Start()
	for i := 0; i < len(input) && s != 0; i++ {
		s = b.Accept(s, input[i])
	}
	if !b.IsMatch(s) {
		return false, 0
	}
	return true, b.EditDistance(s)
}

func (a *editAutomaton) Accept(s int, b byte) int {
	if s == 0 {
		return 0
	}
	st := a.slots[s]
	switch {
	case st.need == 0 && b < 0x80:
		return a.step(s, rune(b))
	case st.need > 0 && b&0xc0 == 0x80:
		st.partial = st.partial<<6 | rune(b&0x3f)
		if st.need--; st.need == 0 {
			return a.step(s, st.partial)
		}
		return a.put(s, st, a.row(s))
	case st.need > 0:
		return 0 // not UTF-8: no term of ours
	case b&0xe0 == 0xc0:
		st.partial, st.need = rune(b&0x1f), 1
	case b&0xf0 == 0xe0:
		st.partial, st.need = rune(b&0x0f), 2
	case b&0xf8 == 0xf0:
		st.partial, st.need = rune(b&0x07), 3
	default:
		return 0
	}
	return a.put(s, st, a.row(s))
}

// put makes st, with a copy of row, the state after s.
func (a *editAutomaton) put(s int, st editState, row []uint8) int {
	next := s + 1
	if next == len(a.slots) {
		a.slots = append(a.slots, editState{})
		a.rows = append(a.rows, make([]uint8, len(a.query)+1)...)
	}
	a.slots[next] = st
	copy(a.row(next), row)
	return next
}

// step reads character r, whose last byte was just read, after state s.
// A state within a character of several bytes holds the row, the last
// character and the previous state of the one before the character, so
// s stands for that state here, and is the new state's previous one.
// After i characters only the distances to query prefixes of i-max to
// i+max characters can be within the budget; the rest of the row is
// past it.
func (a *editAutomaton) step(s int, r rune) int {
	st := a.slots[s]
	i := st.chars + 1
	next := a.put(s, editState{prev: s, last: r, chars: i}, nil)
	cur, row := a.row(s), a.row(next)
	n := len(a.query)
	lo, hi := max(1, i-int(a.max)), min(n, i+int(a.max))
	// the next step reads this row from lo-1 to hi+1, IsMatch at n;
	// entries outside lo..hi are past the budget
	past := a.max + 1
	row[lo-1], row[n] = past, past
	if hi < n {
		row[hi+1] = past
	}
	row[0] = a.saturate(i)
	best := row[0]
	for j := lo; j <= hi; j++ {
		cost := 1
		if a.query[j-1] == r {
			cost = 0
		}
		d := min(int(cur[j-1])+cost, int(cur[j])+1, int(row[j-1])+1)
		if st.prev > 0 && j > 1 && a.query[j-1] == st.last && a.query[j-2] == r {
			d = min(d, int(a.row(st.prev)[j-2])+1)
		}
		row[j] = a.saturate(d)
		best = min(best, row[j])
	}
	a.slots[next].best = best
	return next
}
