package bench

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// rounds draws n rounds of size latencies, exponential with mean mean,
// plus shift.
func rounds(rnd *rand.Rand, n, size int, mean, shift time.Duration) [][]Sample {
	out := make([][]Sample, n)
	for i := range out {
		for range size {
			d := time.Duration(rnd.ExpFloat64()*float64(mean)) + shift
			out[i] = append(out[i], Sample{Kind: "k", Latency: d})
		}
	}
	return out
}

func TestCompareRoundsOfOneBuild(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 7))
	before := rounds(rnd, 10, 1000, 2*time.Millisecond, 0)
	after := rounds(rnd, 10, 1000, 2*time.Millisecond, 0)
	c := CompareRounds(before, after)
	if c.Low > 1 || c.High < 1 {
		t.Errorf("two draws of one distribution: interval %.3f to %.3f leaves out 1", c.Low, c.High)
	}
	if c.Ratio < 0.85 || c.Ratio > 1.15 {
		t.Errorf("ratio %.3f, want about 1", c.Ratio)
	}
	if c.Low >= c.Ratio || c.High <= c.Ratio {
		t.Errorf("interval %.3f to %.3f does not hold the ratio %.3f", c.Low, c.High, c.Ratio)
	}
	if c.Rounds != 10 || len(c.BeforeRounds) != 10 || len(c.AfterRounds) != 10 {
		t.Errorf("rounds %d, per round %d and %d, want 10", c.Rounds, len(c.BeforeRounds), len(c.AfterRounds))
	}
	if again := CompareRounds(before, after); again.Low != c.Low || again.High != c.High {
		t.Errorf("the same rounds gave the interval %.3f to %.3f, then %.3f to %.3f", c.Low, c.High, again.Low, again.High)
	}
}

func TestCompareRoundsOfASlowerBuild(t *testing.T) {
	rnd := rand.New(rand.NewPCG(8, 8))
	before := rounds(rnd, 10, 1000, 2*time.Millisecond, 0)
	after := rounds(rnd, 10, 1000, 2*time.Millisecond, 2*time.Millisecond)
	c := CompareRounds(before, after)
	if c.Low <= 1 {
		t.Errorf("2 ms slower in every request: interval %.3f to %.3f holds 1", c.Low, c.High)
	}
	if c.RoundsLower != 0 {
		t.Errorf("the slower build was lower in %d rounds", c.RoundsLower)
	}
	if c.After.P50 <= c.Before.P50 {
		t.Errorf("p50 after %v, before %v", c.After.P50, c.Before.P50)
	}
}

func TestCompareRoundsWithoutSamples(t *testing.T) {
	if c := CompareRounds(nil, nil); c.Ratio != 0 || c.Rounds != 0 {
		t.Errorf("no rounds: %+v", c)
	}
}

// The p99 of a resampling, taken from the rounds' slowest latencies only,
// is the p99 of the pooled rounds drawn, also of rounds of other sizes
// and of one round drawn every time.
func TestResampledP99IsThePooledP99(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 9))
	rs := rounds(rnd, 6, 700, time.Millisecond, 0)
	rs[2] = rs[2][:150]
	rs[4] = rs[4][:1]
	tails := tailsOf(rs)
	picks, check := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	var buf []time.Duration
	for i := range 300 {
		var got time.Duration
		got, buf = resampledP99(picks, tails, buf)
		var pool []Sample
		for range rs {
			pool = append(pool, rs[check.IntN(len(rs))]...)
		}
		if want := Summarise(pool, 0).P99; got != want {
			t.Fatalf("resampling %d: p99 %v from the tails, %v from the pool", i, got, want)
		}
	}
	one := [][]Sample{rs[0], rs[0], rs[0]}
	if got, _ := resampledP99(picks, tailsOf(one), nil); got != Summarise(slices.Concat(one...), 0).P99 {
		t.Errorf("one round thrice: p99 %v, pooled %v", got, Summarise(slices.Concat(one...), 0).P99)
	}
}
