package bench

import (
	"slices"
	"sort"
	"time"
)

// Latency summarises a set of request latencies.
type Latency struct {
	N        int           `json:"n"`
	Errors   int           `json:"errors"`
	P50      time.Duration `json:"p50"`
	P95      time.Duration `json:"p95"`
	P99      time.Duration `json:"p99"`
	Max      time.Duration `json:"max"`
	PerSec   float64       `json:"per_sec"`
	Labelled int           `json:"labelled"`
	Top1     int           `json:"top1"`
}

// Top1Accuracy is the share of labelled queries whose first answer was
// the labelled one.
func (l Latency) Top1Accuracy() float64 {
	if l.Labelled == 0 {
		return 0
	}
	return float64(l.Top1) / float64(l.Labelled)
}

// Sample is the outcome of one request.
type Sample struct {
	Kind     string
	Latency  time.Duration
	Err      bool
	Labelled bool
	Top1     bool
}

// Summarise computes latency percentiles (nearest rank) and counts of the
// samples; wall is the duration of the run they came from.
func Summarise(samples []Sample, wall time.Duration) Latency {
	l := Latency{N: len(samples)}
	ds := make([]time.Duration, 0, len(samples))
	for _, s := range samples {
		ds = append(ds, s.Latency)
		if s.Err {
			l.Errors++
		}
		if s.Labelled {
			l.Labelled++
			if s.Top1 {
				l.Top1++
			}
		}
	}
	if len(ds) == 0 {
		return l
	}
	slices.Sort(ds)
	l.P50, l.P95, l.P99, l.Max = rank(ds, 0.50), rank(ds, 0.95), rank(ds, 0.99), ds[len(ds)-1]
	if wall > 0 {
		l.PerSec = float64(len(ds)) / wall.Seconds()
	}
	return l
}

func rank(sorted []time.Duration, q float64) time.Duration {
	return sorted[rankIndex(len(sorted), q)]
}

// rankIndex is the index of the q quantile (nearest rank) among n sorted
// values.
func rankIndex(n int, q float64) int {
	i := int(q*float64(n)+0.999999) - 1
	return min(max(i, 0), n-1)
}

// ByKind splits samples by query kind.
func ByKind(samples []Sample) map[string][]Sample {
	out := map[string][]Sample{}
	for _, s := range samples {
		out[s.Kind] = append(out[s.Kind], s)
	}
	return out
}

// Median returns the run whose value of key is the median of the runs
// (the lower middle one for an even count).
func Median[T any](runs []T, key func(T) float64) T {
	sorted := slices.Clone(runs)
	sort.SliceStable(sorted, func(i, j int) bool { return key(sorted[i]) < key(sorted[j]) })
	return sorted[(len(sorted)-1)/2]
}

// MedianOf returns the median of the values of key over runs.
func MedianOf[T any](runs []T, key func(T) float64) float64 {
	vals := make([]float64, len(runs))
	for i, r := range runs {
		vals[i] = key(r)
	}
	slices.Sort(vals)
	if len(vals) == 0 {
		return 0
	}
	if len(vals)%2 == 1 {
		return vals[len(vals)/2]
	}
	return (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
}
