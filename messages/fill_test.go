package messages

import (
	"fmt"
	"testing"
)

// TestFillAgreesWithThePattern fills every sentence of the catalog, with
// every placeholder given and with every other one missing, by hand and
// with the placeholder pattern, which must agree (JSON examples in a
// sentence, such as {"query": ...}, are left as they are).
func TestFillAgreesWithThePattern(t *testing.T) {
	for _, lang := range []string{English, German} {
		for key, sentence := range catalog[lang] {
			names := Placeholders(sentence)
			for _, keep := range []int{0, 1} {
				args := Args{"unused": "x"}
				for i, name := range names {
					if i%2 == keep {
						args[name] = "«" + name + "»"
					}
				}
				want := placeholder.ReplaceAllStringFunc(sentence, func(m string) string {
					if v, ok := args[m[1:len(m)-1]]; ok {
						return fmt.Sprint(v)
					}
					return m
				})
				if got := fill(sentence, args.value); got != want {
					t.Errorf("%s %s: fill = %q, want %q", lang, key, got, want)
				}
			}
		}
	}
}

// TestFillWritesValuesAsSprint checks the values a placeholder takes
// without fmt: strings and whole numbers, and another kind through it.
func TestFillWritesValuesAsSprint(t *testing.T) {
	for _, v := range []any{"Müller GmbH", "", 0, -7, 1234567, 2.5, true, []string{"a"}} {
		if got, want := fill("x {v} y", Args{"v": v}.value), fmt.Sprintf("x %v y", v); got != want {
			t.Errorf("fill with %#v = %q, want %q", v, got, want)
		}
	}
}
