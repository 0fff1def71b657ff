package bench

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
)

// Weighted draws values with probabilities proportional to their counts.
// Values are kept sorted, so the same counts give the same draws for the
// same random source, whatever order the counts were collected in.
type Weighted[T cmp.Ordered] struct {
	Values []T
	cum    []uint64
}

// NewWeighted builds a sampler from counts; values with a count below 1
// are left out.
func NewWeighted[T cmp.Ordered](counts map[T]int) *Weighted[T] {
	w := &Weighted[T]{}
	for v, n := range counts {
		if n > 0 {
			w.Values = append(w.Values, v)
		}
	}
	slices.Sort(w.Values)
	var total uint64
	for _, v := range w.Values {
		total += uint64(counts[v])
		w.cum = append(w.cum, total)
	}
	return w
}

// Len is the number of distinct values.
func (w *Weighted[T]) Len() int { return len(w.Values) }

// Total is the sum of all counts.
func (w *Weighted[T]) Total() uint64 {
	if len(w.cum) == 0 {
		return 0
	}
	return w.cum[len(w.cum)-1]
}

// Pick draws one value; the zero value when w is empty.
func (w *Weighted[T]) Pick(r *rand.Rand) T {
	var zero T
	if w == nil || len(w.cum) == 0 {
		return zero
	}
	x := r.Uint64N(w.Total())
	i := sort.Search(len(w.cum), func(i int) bool { return w.cum[i] > x })
	return w.Values[i]
}
