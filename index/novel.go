package index

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/blevesearch/vellum"
)

// novelTerms holds, by field, the terms a generation's smaller segments
// hold that its largest does not. A typo walk over a dictionary costs
// about the same whether it holds 60,000 terms or 385,000: the walk's
// states are the query's near prefixes, and a small segment's dictionary
// holds nearly all of them too. So on a generation built on another's,
// every typo walked its second segment's dictionary at nearly the cost of
// the first's. Every term of the smaller segments is either in the
// largest's dictionary, whose walk finds it, or among these, which few
// terms (the names and words the change brought) share; their walk costs
// next to nothing. Made once per field, on the first typo walk of it:
// a generation's segments never change.
type novelTerms struct {
	mu     sync.Mutex
	fields map[string]*novelField
}

type novelField struct {
	once sync.Once
	fst  *vellum.FST // nil when the largest segment holds every term
	err  error
}

func newNovelTerms() *novelTerms {
	return &novelTerms{fields: map[string]*novelField{}}
}

// of returns the novel terms of field in segs, nil when there are none.
func (n *novelTerms) of(segs *segments, field string) (*vellum.FST, error) {
	n.mu.Lock()
	f, ok := n.fields[field]
	if !ok {
		f = &novelField{}
		n.fields[field] = f
	}
	n.mu.Unlock()
	f.once.Do(func() { f.fst, f.err = segs.novelTerms(field) })
	return f.fst, f.err
}

// novelTerms reads the terms of field that a segment other than the
// largest holds and the largest does not, into an FST.
func (s *segments) novelTerms(field string) (*vellum.FST, error) {
	order := s.largestFirst()
	largest, err := s.snaps[order[0]].Segment().Dictionary(field)
	if err != nil {
		return nil, fmt.Errorf("dictionary of %s: %w", field, err)
	}
	var terms []string
	for _, i := range order[1:] {
		dict, err := s.snaps[i].Segment().Dictionary(field)
		if err != nil {
			return nil, fmt.Errorf("dictionary of %s: %w", field, err)
		}
		var all vellum.AlwaysMatch
		it := walkTerms(dict, &all, nil, nil)
		e, err := it.Next()
		for ; err == nil && e != nil; e, err = it.Next() {
			held, err := largest.Contains([]byte(e.Term))
			if err != nil {
				return nil, err
			}
			if !held {
				terms = append(terms, e.Term)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	return termSet(terms)
}

// termSet builds an FST in memory of terms, which may repeat.
func termSet(terms []string) (*vellum.FST, error) {
	slices.Sort(terms)
	terms = slices.Compact(terms)
	var buf bytes.Buffer
	b, err := vellum.New(&buf, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range terms {
		if err := b.Insert([]byte(t), 0); err != nil {
			return nil, err
		}
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	return vellum.Load(buf.Bytes())
}

// fuzzy returns the terms of field within distance edits of term that
// start with prefix, as dictFuzzy does: it walks the largest segment's
// dictionary and the terms the others hold that it lacks (novelTerms).
// Without the generation's novel terms it walks every segment's.
func (s *segments) fuzzy(field, term string, distance int, prefix string) ([]fuzzyTerm, error) {
	if s.novel == nil || len(s.snaps) < 2 {
		return dictFuzzy(s.r, field, term, distance, prefix)
	}
	novel, err := s.novel.of(s, field)
	if err != nil {
		return nil, fmt.Errorf("terms the largest segment lacks in %s: %w", field, err)
	}
	w := newFuzzyWalk(term, distance, prefix)
	if err := w.segment(s.snaps[s.largestFirst()[0]].Segment(), field); err != nil {
		return nil, err
	}
	if novel != nil {
		if err := w.set(novel); err != nil {
			return nil, err
		}
	}
	return w.terms(), nil
}
