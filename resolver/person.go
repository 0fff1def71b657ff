package resolver

import (
	"regexp"
	"strings"

	"companydocs/register"
	"companydocs/textfold"
)

// titleWords are the folded words of titles and forms of address people
// write before a name ("Dr.", "Prof.", "Dipl.-Ing.", "Herr"): they are no
// part of the name the register holds.
var titleWords = wordSet(`dr prof dipl ing kfm kffr kauffrau kaufmann betriebsw betriebswirt oec vw volksw mag mba llm
	msc bsc ba ma meng beng phd med dent vet rer nat pol oec jur hc habil herr frau hr fr rechtsanwalt rechtsanwaeltin
	ra rain stb wp steuerberater steuerberaterin notar notarin apotheker apothekerin architekt architektin sen jun`)

// birthNameWords introduce a birth name ("Anna Müller geb. Schmidt"): it
// and what follows are the person's former surname.
var birthNameWords = wordSet(`geb geborene geborener gb`)

// personWords returns the folded words of a person's name as written:
// titles and single letters (initials) left out, and the birth name after
// "geb." cut off.
func personWords(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		if birthNameWords[t] {
			break
		}
		if titleWords[t] || len(t) == 1 {
			continue
		}
		out = append(out, t)
	}
	return out
}

// positionWords are the words of officers' positions written after a
// name ("Hans Müller, Geschäftsführer", "Eva Schmidt (Vorsitzende)").
var positionWords = wordSet(`geschaeftsfuehrer geschaeftsfuehrerin vorstand vorstaende vorsitzender vorsitzende
	vorstandsvorsitzender vorstandsvorsitzende inhaber inhaberin prokurist prokuristin ceo cfo cto coo
	gesellschafter gesellschafterin aufsichtsratsvorsitzender aufsichtsratsvorsitzende liquidator liquidatorin
	managing director stv stellv stellvertretender stellvertretende des der aufsichtsrats aufsichtsrates vorstands
	geschaeftsfuehrender geschaeftsfuehrende partner partnerin mitglied mitglieder sprecher`)

// personSplit separates the persons of a list ("Hans Müller, Eva Schmidt
// und Peter Wolf").
var personSplit = regexp.MustCompile(`\s*(?:,|;|/|\s&\s|\sund\s|\ssowie\s|\sand\s)\s*`)

// personsIn returns the folded names of the persons a text lists; a part
// that names a company (a legal form) or has no first and last name is
// left out.
func personsIn(text string) [][]string {
	var out [][]string
	for _, part := range personSplit.Split(text, -1) {
		if _, _, ok := register.SplitLegalForm(part); ok || part == "" {
			continue
		}
		var words []string
		for _, w := range personWords(textfold.Tokens(textfold.Fold(part))) {
			if !positionWords[w] {
				words = append(words, w)
			}
		}
		if len(words) >= 2 && len(words) <= 5 && len(out) < maxPersons {
			out = append(out, words)
		}
	}
	return out
}

// maxPersons is the most persons a block's line gives evidence of: an
// imprint names a handful of officers, a longer list is no one line.
const maxPersons = 6

// readsAsPerson reports whether a line without a label is a person's
// name, perhaps with a title or a position after it ("Dr. Hans Müller",
// "Hans Müller – Geschäftsführer").
func readsAsPerson(line string) []string {
	if _, _, ok := register.SplitLegalForm(line); ok {
		return nil
	}
	var words []string
	for _, w := range personWords(textfold.Tokens(textfold.Fold(line))) {
		if !positionWords[w] {
			words = append(words, w)
		}
	}
	if p := personName(words); len(p) == len(words) && len(words) >= 2 {
		return words
	}
	return nil
}

// displayName is the person of folded words as text writes them ("Hans
// Müller" for [hans mueller] in "Dr. Hans Müller, Geschäftsführer"),
// for a person to read; the folded words when text does not hold them
// one by one.
func displayName(text string, words []string) string {
	var out []string
	next := 0
	for _, field := range strings.Fields(text) {
		w := strings.Trim(field, ".,;:()[]\"'")
		if next < len(words) && len(textfold.Tokens(textfold.Fold(w))) == 1 && textfold.Fold(w) == words[next] {
			out = append(out, w)
			next++
		}
	}
	if next < len(words) {
		return strings.Join(words, " ")
	}
	return strings.Join(out, " ")
}

// personMatches reports whether an officer bears the person's name: every
// word of it is a word of the officer's, as written or within the typo
// budget (textfold.TypoBudget) that company names have, never by a
// prefix alone.
func personMatches(person tokenList, officer tokenList) bool {
	if len(person.toks) == 0 {
		return false
	}
	for _, p := range person.toks {
		best := 0.0
		for _, o := range officer.toks {
			sim, _ := tokenSims(p, o)
			best = max(best, sim)
		}
		if best <= simPrefix {
			return false
		}
	}
	return true
}
