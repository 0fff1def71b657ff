package resolver

import (
	_ "embed"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"companydocs/textfold"

	"github.com/agnivade/levenshtein"
)

// The kinds of clue a query can carry beside a company name, and the word
// lists that tell them apart. The lists come from the real records (see
// clues/README.md): first and last names of officers, and the seat words
// that are spelled with an umlaut or ß.
var (
	//go:embed clues/firstnames.csv
	firstNamesCSV string
	//go:embed clues/lastnames.csv
	lastNamesCSV string
	//go:embed clues/umlaut_places.txt
	umlautPlacesText string

	firstNames = nameCounts(firstNamesCSV)
	lastNames  = nameCounts(lastNamesCSV)
	// umlautPlaces maps the plain spelling of a seat word ("koln") to its
	// folded one ("koeln"), which the index holds.
	umlautPlaces = plainToFolded(umlautPlacesText)
)

// noiseWords are words people type around a company name that name no
// company: "Firma Müller GmbH", "Registerauszug Müller GmbH". articles
// count as noise only at the start of a query ("Die Firma Müller"),
// seatWords only before the last words ("Müller GmbH aus Köln", "mit Sitz
// in Köln"), since names hold them too ("Verein der Freunde").
var (
	noiseWords = wordSet(`firma fa sitz registerauszug handelsregisterauszug handelsregister auszug unternehmen`)
	articles   = wordSet(`die der das`)
	seatWords  = wordSet(`aus in mit`)
)

// seatWordReach is how close to the end of a query a word of seatWords
// must stand to count as noise: a seat has at most three words.
const seatWordReach = 4

// streetSuffixes end the street word of an address ("Siemensstraße 10",
// "Hauptstr. 5", "Am Markt 1" aside).
var streetSuffixes = []string{"strasse", "str", "weg", "platz", "allee", "ring", "gasse", "damm", "ufer",
	"chaussee", "pfad", "markt", "steig", "stieg", "kamp", "twiete", "promenade", "wall", "graben", "hof"}

// nameCounts reads a "name,count" table into counts by folded word.
func nameCounts(table string) map[string]int {
	m := map[string]int{}
	for i, line := range strings.Split(table, "\n") {
		name, count, ok := strings.Cut(line, ",")
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if i == 0 || !ok || err != nil {
			continue
		}
		for _, t := range textfold.Tokens(textfold.Fold(name)) {
			m[t] += n
		}
	}
	return m
}

func plainToFolded(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		plain, folded := textfold.Tokens(textfold.FoldPlain(line)), textfold.Tokens(textfold.Fold(line))
		if len(plain) == 1 && len(folded) == 1 && plain[0] != folded[0] {
			m[plain[0]] = folded[0]
		}
	}
	return m
}

// withoutNoise returns tokens without noise words, and the words dropped.
// A query of noise words only keeps them all.
func withoutNoise(tokens []string) (clean, dropped []string) {
	for i, t := range tokens {
		leading := len(clean) == 0
		nearEnd := i > 0 && len(tokens)-i <= seatWordReach
		if noiseWords[t] || leading && articles[t] || nearEnd && seatWords[t] {
			dropped = append(dropped, t)
		} else {
			clean = append(clean, t)
		}
	}
	if len(clean) == 0 {
		return tokens, nil
	}
	return clean, dropped
}

// Thresholds of the name tables.
const (
	// commonFirstName is how often a first name is seen before any word
	// after it reads as a surname ("Hendrik Beier"); less common first
	// names need a known last name ("Hana Cechová").
	commonFirstName = 10
	// knownName is how often a name must be seen to count at all.
	knownName = 2
)

// personName returns the tokens that read as a person's name: one or more
// first names followed by a surname ("hendrik beier", "hans joachim
// reuker"), at the start of the query. The surname is a word that is not
// a generic or connecting one ("Bau", "und"); after a rarer first name, or
// one seen more often as a last name ("Müller"), it must be a known last
// name.
func personName(tokens []string) []string {
	n, common := 0, true
	for n < len(tokens) && firstNameCount(tokens[n], n == 0) >= knownName {
		common = common && commonFirst(tokens[n])
		n++
	}
	if n == 0 || n == len(tokens) {
		if n >= 2 && commonFirst(tokens[0]) && lastNames[tokens[n-1]] >= knownName {
			// "Peter Wolf": the last name is also a first name (not
			// "Müller & Müller", which has no common first name)
			return tokens[:n]
		}
		return nil
	}
	surname := tokens[n]
	if tokenWeight(surname) < 1 || isNumber(surname) || !common && lastNames[surname] < knownName {
		return nil
	}
	return tokens[:n+1]
}

// commonFirst reports whether t is a common first name, seen more often
// as a first than as a last name (or a common one mistyped).
func commonFirst(t string) bool {
	if n, ok := firstNames[t]; ok {
		return n >= commonFirstName && n >= lastNames[t]
	}
	return firstNameCount(t, true) >= commonFirstName
}

// firstNameCount is how often t is seen as a first name. A first word of
// a query that is no known first name counts as the common first name
// (commonFirstName) within the typo budget of it, if there is one
// ("Juutta", "Frak"): people mistype persons' names as they do companies'.
func firstNameCount(t string, typo bool) int {
	if n, ok := firstNames[t]; ok || !typo || lastNames[t] > 0 || tokenWeight(t) < 1 {
		return n
	}
	budget := textfold.TypoBudget(utf8.RuneCountInString(t))
	for _, name := range commonFirstNames[firstByte(t)] {
		if abs(len(name)-len(t)) <= budget && levenshtein.ComputeDistance(name, t) <= budget {
			return firstNames[name]
		}
	}
	return 0
}

// commonFirstNames are the common first names by their first byte, the
// most common first, which a mistyped first name is compared with.
var commonFirstNames = func() map[byte][]string {
	m := map[byte][]string{}
	for name, n := range firstNames {
		if n >= commonFirstName && n >= lastNames[name] {
			m[firstByte(name)] = append(m[firstByte(name)], name)
		}
	}
	for _, names := range m {
		sort.Slice(names, func(i, j int) bool {
			if firstNames[names[i]] != firstNames[names[j]] {
				return firstNames[names[i]] > firstNames[names[j]]
			}
			return names[i] < names[j]
		})
	}
	return m
}()

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// isAddress reports whether tokens hold an address: a street word ending
// in a street suffix followed by a house number ("lilli zapf strasse 2"),
// or any word, a house number and a postcode ("klostergarten 30 79341").
func isAddress(tokens []string) bool {
	for i := 0; i+1 < len(tokens); i++ {
		if !isHouseNumber(tokens[i+1]) {
			continue
		}
		if i+2 < len(tokens) && isPostcode(tokens[i+2]) {
			return true
		}
		for _, s := range streetSuffixes {
			if strings.HasSuffix(tokens[i], s) {
				return true
			}
		}
	}
	return false
}

// hasHouseNumber reports whether a word is followed by what may be a house
// number: the query may be an address whose street has no street suffix.
func hasHouseNumber(tokens []string) bool {
	for i := 1; i < len(tokens); i++ {
		if isHouseNumber(tokens[i]) && !isNumber(tokens[i-1]) {
			return true
		}
	}
	return false
}

// isHouseNumber: up to four characters starting with a digit ("2", "7a").
func isHouseNumber(t string) bool {
	return t != "" && unicode.IsDigit(rune(t[0])) && len(t) <= 4
}

func isPostcode(t string) bool { return len(t) == 5 && isNumber(t) }

// placeSpellings returns the folded spellings of seat words typed without
// umlauts ("koln" -> "koeln", "dusseldorf" -> "duesseldorf").
func placeSpellings(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		if f, ok := umlautPlaces[t]; ok {
			out = append(out, f)
		}
	}
	return out
}
