package messages_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"companydocs/internal/reasoncodes"
	"companydocs/messages"
)

// TestEveryKeyInBothLanguages checks the catalog's one rule: each key has
// a sentence in every language, and the sentences have the same
// placeholders, so that whatever values fill one fill the other.
func TestEveryKeyInBothLanguages(t *testing.T) {
	keys := messages.Keys()
	if len(keys) < 200 {
		t.Fatalf("the catalog has %d keys; en.json is not read", len(keys))
	}
	for _, lang := range messages.Languages {
		for _, key := range keys {
			s, ok := messages.Sentence(lang, key)
			if !ok || strings.TrimSpace(s) == "" {
				t.Errorf("%s: no sentence for %s", lang, key)
				continue
			}
			en, _ := messages.Sentence(messages.English, key)
			if got, want := messages.Placeholders(s), messages.Placeholders(en); !slices.Equal(got, want) {
				t.Errorf("%s %s has placeholders %v, English has %v", lang, key, got, want)
			}
		}
	}
	// a German key that English lacks would never be said
	raw, err := os.ReadFile("de.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^  "([^"]+)":`).FindAllStringSubmatch(string(raw), -1) {
		if !messages.Has(m[1]) {
			t.Errorf("de.json has %s, en.json does not", m[1])
		}
	}
}

// TestCodesHaveSentences checks that every reason, note, line and gap code
// of the resolver's tables has its sentence, with no placeholder that is
// neither a param of the code nor one of the words both sayers derive
// from the params (derivedWords).
func TestCodesHaveSentences(t *testing.T) {
	codes, err := reasoncodes.Load()
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string][]string{}
	for _, c := range codes.ReasonCodes() {
		keys["reason."+c], _ = codes.Params(c)
	}
	for _, c := range codes.NoteCodes() {
		keys["note."+c], _ = codes.Params(c)
	}
	for _, c := range codes.LineCodes() {
		keys["line."+c], _ = codes.Params(c)
	}
	for _, c := range codes.GapCodes() {
		if c != "described" { // an older ingest's sentence, said as it was written
			keys["gap."+c], _ = codes.GapParams(c)
		}
	}
	if len(keys) < 60 {
		t.Fatalf("only %d codes read from %s", len(keys), reasoncodes.File)
	}
	for key, params := range keys {
		if !messages.Has(key) {
			t.Errorf("no sentence for %s", key)
			continue
		}
		known := map[string]bool{}
		for _, p := range params {
			known[strings.TrimSuffix(p, "?")] = true
		}
		en, _ := messages.Sentence(messages.English, key)
		for _, name := range messages.Placeholders(en) {
			if !known[name] && !derivedWords[name] {
				t.Errorf("%s: {%s} is neither a param of the code nor a derived word", key, name)
			}
		}
	}
}

// derivedWords are the placeholders made from a code's params rather than
// copied from one (resolver reasonArgs and gapArgs).
var derivedWords = map[string]bool{
	"entry_register_number": true,
	"number":                true, "times": true, "missing": true, "entry_suffix": true, "query_suffix": true,
	"former_court": true, "position": true, "tokens": true, "at_court": true, "listed": true,
	"authority": true, "reference": true, "validation": true, "registration": true, "entity": true,
	"similarity": true, "gleif_name": true, "entry": true, "live": true, "entries": true, "name": true,
	"companies": true, "percent": true,
}

// TestRefusalKeysExist reads every catalog key the Go sources name
// literally ("refusal.…", "hint.…") and checks the catalog has it: Say
// panics on an unknown key, and this finds one before a request does.
// No source but a test makes an error from a sentence of its own (an
// *Error literal with a Message) instead of a catalog key.
func TestRefusalKeysExist(t *testing.T) {
	key := regexp.MustCompile(`"((?:refusal|hint)\.[a-z_]+)"`)
	englishOnly := regexp.MustCompile(`\bError\{Code: [^}]*Message: ["` + "`" + `]`)
	found := 0
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			if err == nil {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(path, "_test.go") && englishOnly.Match(b) {
			t.Errorf("%s makes an error from a sentence of its own: say it with companydocs.Refusal and a catalog key", path)
		}
		for _, m := range key.FindAllStringSubmatch(string(b), -1) {
			found++
			if !messages.Has(m[1]) {
				t.Errorf("%s names %s, which the catalog lacks", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 40 {
		t.Fatalf("only %d catalog keys named in the Go sources; the pattern no longer matches", found)
	}
}

func TestSayFillsPlaceholders(t *testing.T) {
	got := messages.Say(messages.German, "refusal.not_a_pdf", messages.Args{"magic": "%PDF-"})
	if want := "Das Dokument ist kein PDF: Eine PDF-Datei beginnt mit „%PDF-“. Bitte die PDF-Datei des Registers hochladen."; got != want {
		t.Errorf("German not_a_pdf = %q, want %q", got, want)
	}
	// a missing value stays visible; an unknown language says English
	if got := messages.Say("fr", "refusal.no_such_order", nil); got != `This account has no order "{order}".` {
		t.Errorf("French no_such_order = %q", got)
	}
}

func TestPick(t *testing.T) {
	for header, want := range map[string]string{
		"":                            "en",
		"de":                          "de",
		"de-DE,de;q=0.9,en;q=0.8":     "de",
		"en-GB,en;q=0.9,de;q=0.8":     "en",
		"fr-FR,de;q=0.5":              "de",
		"fr-FR":                       "en",
		"de;q=0":                      "en",
		"en;q=0.4, de-AT;q=0.7":       "de",
		"*":                           "en",
		"DE-ch":                       "de",
		"de;q=abc":                    "en",
		"de;q=0.8,en;q=0.8":           "de",
		"en;q=0.8,de;q=0.8":           "en",
		",,;;=":                       "en",
		"de-DE;q=1.5":                 "en",
		strings.Repeat("de,", 10_000): "de",
	} {
		if got := messages.Pick(header); got != want {
			t.Errorf("Pick(%.40q) = %q, want %q", header, got, want)
		}
	}
}
