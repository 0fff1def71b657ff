package textfold

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeLineBreaks(t *testing.T) {
	for in, want := range map[string]string{
		"Müller GmbH\nHRB 5":     "Müller GmbH\nHRB 5",
		"Müller GmbH\r\nHRB 5":   "Müller GmbH\nHRB 5",
		"Müller GmbH\rHRB 5\r":   "Müller GmbH\nHRB 5\n",
		"Müller GmbH\u0085HRB 5": "Müller GmbH\nHRB 5",
		"a\u2028b\u2029c\vd\fe":  "a\nb\nc\nd\ne",
		"a\r\n\r\nb":             "a\n\nb",
		"a\n\rb":                 "a\n\nb",
		"Tab\tstays":             "Tab\tstays",
	} {
		if got := NormalizeLineBreaks(in); got != want {
			t.Errorf("NormalizeLineBreaks(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzNormalizeLineBreaks(f *testing.F) {
	f.Add("Müller GmbH\rAmtsgericht Köln HRB 5\u0085")
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeLineBreaks(s)
		if strings.ContainsFunc(got, func(r rune) bool { return r != '\n' && IsLineBreak(r) }) {
			t.Fatalf("%q still holds a line break other than \\n", got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("%q made invalid UTF-8 of %q", got, s)
		}
		if NormalizeLineBreaks(got) != got {
			t.Fatalf("not idempotent on %q", s)
		}
	})
}
