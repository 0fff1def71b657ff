package resolver

import (
	"slices"
	"strings"
	"testing"

	"github.com/agnivade/levenshtein"

	"companydocs/textfold"
)

// TestPlainOfIsFoldPlain checks the shortcut for plain ASCII tokens against
// textfold.FoldPlain on the tokens of names of every kind of spelling.
func TestPlainOfIsFoldPlain(t *testing.T) {
	names := []string{
		"Müller & Söhne GmbH und Co. KG", "Straße 12 Grundstücks-GbR", "Ærø Øresund Łódź",
		"McDonald's Restaurant", "Москва Handel", "Ελληνικά Café", "u. Partner", "UND", "Weiß+Partner",
		"İstanbul Döner", "Hans-Jörg Mäurer 2007", "Ｆｕｌｌwidth",
	}
	for _, name := range names {
		for _, tok := range textfold.Tokens(textfold.Fold(name)) {
			if got, want := plainOf(tok), textfold.FoldPlain(tok); got != want {
				t.Errorf("plainOf(%q) = %q, FoldPlain gives %q", tok, got, want)
			}
		}
	}
	if got := plainOf("und"); got != textfold.FoldPlain("und") {
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

// FuzzLettersApart checks the shortcut of tokenSims: two words it calls
// apart are farther than the budget in Levenshtein distance.
func FuzzLettersApart(f *testing.F) {
	f.Add("mueller", "muller", 2)
	f.Add("schmidt", "schmitt", 1)
	f.Add("bau", "uab", 2)
	f.Add("köln", "koeln", 1)
	f.Fuzz(func(t *testing.T, x, y string, budget int) {
		budget = 1 + abs(budget)%2
		if lettersApart(x, y, budget) {
			if d := levenshtein.ComputeDistance(x, y); d <= budget {
				t.Fatalf("lettersApart(%q, %q, %d), but their distance is %d", x, y, budget, d)
			}
		}
	})
}

// TestLettersApartTellsWordsApart checks that the shortcut spares the
// distance for most pairs of unrelated name words of about one length,
// and never for a word and its typos.
func TestLettersApartTellsWordsApart(t *testing.T) {
	words := textfold.Tokens(textfold.Fold("Bauunternehmen Mueller Schmidt Immobilien Verwaltung Handel Service Autohaus Elektro Gesellschaft Beteiligungs Holding Consulting Software Logistik Transporte Gastronomie"))
	pairs, apart := 0, 0
	for _, x := range words {
		for _, y := range words {
			if x == y || abs(len(x)-len(y)) > 2 {
				continue
			}
			pairs++
			if lettersApart(x, y, 2) {
				apart++
			}
		}
		for _, typo := range []string{x[1:], x[:len(x)-1] + "x", x[:2] + x[3:] + "e"} {
			if lettersApart(x, typo, 2) {
				t.Errorf("lettersApart(%q, %q): a typo's letters are not apart", x, typo)
			}
		}
	}
	if pairs < 50 || apart < pairs*3/4 {
		t.Errorf("%d of %d pairs of unrelated words told apart by their letters", apart, pairs)
	}
}
