package resolver

import (
	"slices"
	"strings"
	"testing"

	"companydocs"
)

// TestPlainOfIsFoldPlain checks the shortcut for plain ASCII tokens against
// companydocs.FoldPlain on the tokens of names of every kind of spelling.
func TestPlainOfIsFoldPlain(t *testing.T) {
	names := []string{
		"Müller & Söhne GmbH und Co. KG", "Straße 12 Grundstücks-GbR", "Ærø Øresund Łódź",
		"McDonald's Restaurant", "Москва Handel", "Ελληνικά Café", "u. Partner", "UND", "Weiß+Partner",
		"İstanbul Döner", "Hans-Jörg Mäurer 2007", "Ｆｕｌｌwidth",
	}
	for _, name := range names {
		for _, tok := range companydocs.Tokens(companydocs.Fold(name)) {
			if got, want := plainOf(tok), companydocs.FoldPlain(tok); got != want {
				t.Errorf("plainOf(%q) = %q, FoldPlain gives %q", tok, got, want)
			}
		}
	}
	if got := plainOf("und"); got != companydocs.FoldPlain("und") {
		t.Errorf("plainOf(und) = %q", got)
	}
}

// TestTokenSimTypoBudget checks that typos are matched up to the budget of
// the shorter token, length differences included, and not beyond.
func TestTokenSimTypoBudget(t *testing.T) {
	for _, tc := range []struct {
		q, t  string
		match bool
	}{
		{"schmidt", "schmitt", true},             // one substitution
		{"bauunternehmen", "bauuntrnehmn", true}, // two deletions, budget 2
		{"bauunternehmen", "bauuntrnhmn", false}, // three deletions
		{"mueller", "muellerr", true},            // one insertion
		{"mueller", "mxellxr", false},            // two substitutions, budget 1 for seven letters
		{"abc", "abd", false},                    // short tokens: no typos
	} {
		if sim, _ := tokenSims(newToken(tc.q), newToken(tc.t)); (sim > 0) != tc.match {
			t.Errorf("tokenSims(%q, %q) = %v, want a match: %v", tc.q, tc.t, sim, tc.match)
		}
	}
}

func FuzzSameLetters(f *testing.F) {
	f.Add("auto haus", "autohaus")
	f.Add("a  b", "ab ")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		x, y := strings.Split(a, " "), strings.Split(b, " ")
		if got, want := sameLetters(x, y), strings.Join(x, "") == strings.Join(y, ""); got != want {
			t.Fatalf("sameLetters(%q, %q) = %v, want %v", x, y, got, want)
		}
	})
}

// FuzzSplitBlock checks that splitBlock splits every query as the line
// separators' pattern does, its shortcut for one line included.
func FuzzSplitBlock(f *testing.F) {
	f.Add("Müller GmbH, Tel. 030 1234")
	f.Add("Sitz: Berlin, Registergericht: Amtsgericht Berlin")
	f.Add("Müller GmbH · Hauptstr. 5")
	f.Fuzz(func(t *testing.T, q string) {
		var want []string
		for _, line := range lineSeparators.Split(q, -1) {
			want = append(want, splitLabelled(line)...)
		}
		if got := splitBlock(q); !slices.Equal(got, want) {
			t.Fatalf("splitBlock(%q) = %q, the pattern splits it into %q", q, got, want)
		}
	})
}
