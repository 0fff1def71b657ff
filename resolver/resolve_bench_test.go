//go:build !race

package resolver_test

import (
	"context"
	"strings"
	"testing"

	"companydocs/resolver"
)

// BenchmarkResolve answers the queries of the evaluation set against a
// generation of the embedded sample (36,599 records and the LEI sample),
// one query per iteration in turn: names, register references, LEIs and
// short queries ("names"), and the kinds of clue beside them ("clues":
// directors, former names, addresses, noise words, seats without
// umlauts, labelled LEIs), each at the default limit.
func BenchmarkResolve(b *testing.B) {
	live := mustBuildSampleIndex(b)
	cases := loadEval(b)
	for _, set := range []struct {
		name  string
		clues bool
	}{{"names", false}, {"clues", true}} {
		var qs []resolver.Request
		for _, c := range cases {
			if clueKinds[c.Kind] == set.clues {
				qs = append(qs, c.request())
			}
		}
		b.Run(set.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := resolver.Resolve(context.Background(), live, qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkResolvePasted compares pasted blocks (imprints,
// letterheads and signatures built from real records, with and without
// register lines, multi-line and one-line) with the name queries of the
// evaluation set (name_*: exact, with city, without or with another legal
// form, umlauts, typos, lower case), one query per iteration in turn.
func BenchmarkResolvePasted(b *testing.B) {
	live := mustBuildSampleIndex(b)
	cases := loadEval(b)
	for _, prefix := range []string{"name_", "paste_"} {
		var qs []resolver.Request
		for _, c := range cases {
			if strings.HasPrefix(c.Kind, prefix) && c.Kind != "name_noise" {
				qs = append(qs, c.request())
			}
		}
		b.Run(strings.TrimSuffix(prefix, "_"), func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := resolver.Resolve(context.Background(), live, qs[i%len(qs)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
