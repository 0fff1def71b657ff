package bench

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Comparison compares the latencies of two builds under the same load,
// measured in rounds: the p50 and p99 of each over all its rounds'
// samples, the ratio of the p99s (after over before) with its 95%
// interval, and in how many rounds the p99 after was the lower.
type Comparison struct {
	Before      Latency `json:"before"`
	After       Latency `json:"after"`
	Ratio       float64 `json:"p99_ratio"`
	Low         float64 `json:"p99_ratio_low"`
	High        float64 `json:"p99_ratio_high"`
	RoundsLower int     `json:"rounds_lower_after"`
	Rounds      int     `json:"rounds"`
	// the p99 of each round, in milliseconds
	BeforeRounds []float64 `json:"before_round_p99_ms"`
	AfterRounds  []float64 `json:"after_round_p99_ms"`
}

// resamplings of the rounds behind a ratio's interval
const resamplings = 2000

// CompareRounds compares the rounds of two builds, round i of each taken
// under the same conditions. A round is the unit resampled for the
// interval (each side's rounds drawn with replacement, resamplings
// times): the requests of one round share its conditions, so they are not
// independent draws. The generator is seeded: the same rounds give the
// same interval.
func CompareRounds(before, after [][]Sample) Comparison {
	c := Comparison{Before: Summarise(slices.Concat(before...), 0), After: Summarise(slices.Concat(after...), 0), Rounds: len(after)}
	if c.Before.P99 == 0 || len(before) == 0 || len(after) == 0 {
		return c
	}
	c.Ratio = float64(c.After.P99) / float64(c.Before.P99)
	for i := range min(len(before), len(after)) {
		b, a := Summarise(before[i], 0).P99, Summarise(after[i], 0).P99
		c.BeforeRounds = append(c.BeforeRounds, millis(b))
		c.AfterRounds = append(c.AfterRounds, millis(a))
		if a < b {
			c.RoundsLower++
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	bt, at := tailsOf(before), tailsOf(after)
	ratios := make([]float64, 0, resamplings)
	var buf []time.Duration
	for range resamplings {
		var b, a time.Duration
		b, buf = resampledP99(rnd, bt, buf)
		a, buf = resampledP99(rnd, at, buf)
		ratios = append(ratios, float64(a)/float64(b))
	}
	slices.Sort(ratios)
	c.Low, c.High = ratios[resamplings*25/1000], ratios[resamplings*975/1000-1]
	return c
}

// roundTail is a round's size and its slowest latencies, slowest first:
// as many as the p99 of any resampling can reach, since no round stands
// in a resampling more often than there are rounds.
type roundTail struct {
	n    int
	slow []time.Duration
}

func tailsOf(rounds [][]Sample) []roundTail {
	most := 0
	for _, r := range rounds {
		most = max(most, len(r))
	}
	keep := len(rounds)*most - rankIndex(len(rounds)*most, 0.99)
	tails := make([]roundTail, len(rounds))
	for i, r := range rounds {
		ds := make([]time.Duration, len(r))
		for j, s := range r {
			ds[j] = s.Latency
		}
		slices.Sort(ds)
		slices.Reverse(ds)
		tails[i] = roundTail{n: len(r), slow: ds[:min(len(ds), keep)]}
	}
	return tails
}

// resampledP99 is the p99 (nearest rank, as Summarise's) of as many
// rounds as there are, drawn with replacement; buf is scratch space,
// returned for the next call.
func resampledP99(rnd *rand.Rand, tails []roundTail, buf []time.Duration) (time.Duration, []time.Duration) {
	buf, n := buf[:0], 0
	for range tails {
		t := tails[rnd.IntN(len(tails))]
		buf = append(buf, t.slow...)
		n += t.n
	}
	if len(buf) == 0 {
		return 0, buf
	}
	slices.Sort(buf)
	slices.Reverse(buf)
	return buf[min(n-1-rankIndex(n, 0.99), len(buf)-1)], buf
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
