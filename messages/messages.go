// Package messages is the one catalog of the sentences the service says to
// a person, in English and German: the sentences of error codes and
// refusals, search reasons, notes, understanding lines and verification
// gaps, order blockers, next steps and history entries. Each sentence is
// keyed by the code the API returns ("reason.lei_matches",
// "step.payment_due", "refusal.not_a_pdf") and fills its placeholders,
// written {name}, from named values. The server says its English sentences
// from here; the page reads the same files (served as
// /static/messages.json), so the two cannot drift apart.
//
// The catalog is two flat JSON files, en.json and de.json, embedded into
// the binary; docs/messages.md describes the format.
package messages

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Languages of the catalog; English is the service's own and the fallback.
const (
	English = "en"
	German  = "de"
)

// Languages lists the catalog's languages, English first.
var Languages = []string{English, German}

//go:embed en.json de.json
var files embed.FS

// catalog maps a language to its sentences by key.
var catalog = load()

func load() map[string]map[string]string {
	c := map[string]map[string]string{}
	for _, lang := range Languages {
		b, err := files.ReadFile(lang + ".json")
		if err != nil {
			panic(fmt.Sprintf("messages: %s.json is not embedded: %v", lang, err))
		}
		m := map[string]string{}
		if err := json.Unmarshal(b, &m); err != nil {
			// The files are embedded at build time; the test reads them too.
			panic(fmt.Sprintf("messages: %s.json: %v", lang, err))
		}
		c[lang] = m
	}
	return c
}

// Args are the values of a sentence's placeholders, by name.
type Args map[string]any

// value is Args as a Lookup.
func (a Args) value(name string) (any, bool) {
	v, ok := a[name]
	return v, ok
}

// A Lookup returns the value of a sentence's placeholder, false when it
// has none: for values that cost something to make, made only for the
// placeholders the sentence has.
type Lookup func(name string) (any, bool)

// Has reports whether the catalog holds a sentence for key.
func Has(key string) bool {
	_, ok := catalog[English][key]
	return ok
}

// Say returns the sentence of key in lang (English when lang is not one
// of the catalog's) with its placeholders filled from args. A placeholder
// without a value stays as written, so a missing value shows instead of
// vanishing. An unknown key is a programming error and panics, so that no
// sentence without a catalog entry reaches a person.
func Say(lang, key string, args Args) string {
	if len(args) == 0 {
		return SayBy(lang, key, nil)
	}
	return SayBy(lang, key, args.value)
}

// SayBy is Say with the placeholders' values from lookup.
func SayBy(lang, key string, lookup Lookup) string {
	s, ok := catalog[lang][key]
	if !ok {
		if s, ok = catalog[English][key]; !ok {
			panic(fmt.Sprintf("messages: no sentence for %q", key))
		}
	}
	return fill(s, lookup)
}

// placeholder matches {name} in a sentence.
var placeholder = regexp.MustCompile(`\{(\w+)\}`)

// fill replaces each {name} of s that lookup has a value for. It scans
// by hand: a search says a sentence per reason of every candidate, and
// the regular expression cost several times the rest of the candidate's
// words.
func fill(s string, lookup Lookup) string {
	if lookup == nil || !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 32)
	for {
		open := strings.IndexByte(s, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			break
		}
		name := s[open+1 : open+end]
		var v any
		ok := isWord(name)
		if ok {
			v, ok = lookup(name)
		}
		if !ok {
			b.WriteString(s[:open+1])
			s = s[open+1:]
			continue
		}
		b.WriteString(s[:open])
		writeValue(&b, v)
		s = s[open+end+1:]
	}
	b.WriteString(s)
	return b.String()
}

// writeValue writes v as fmt.Sprint does, strings and whole numbers, the
// values of nearly every placeholder, without its reflection.
func writeValue(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
	case int:
		b.WriteString(strconv.Itoa(v))
	default:
		b.WriteString(fmt.Sprint(v))
	}
}

// isWord reports whether name is a placeholder's name: letters, digits
// and underscores (\w), at least one.
func isWord(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return name != ""
}

// Placeholders returns the names of a sentence's placeholders, sorted and
// each once.
func Placeholders(sentence string) []string {
	seen := map[string]bool{}
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(sentence, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

// Keys returns the catalog's keys, sorted.
func Keys() []string {
	keys := make([]string, 0, len(catalog[English]))
	for k := range catalog[English] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Sentence returns the raw sentence of key in lang, placeholders unfilled;
// ok is false when the language lacks it.
func Sentence(lang, key string) (string, bool) {
	s, ok := catalog[lang][key]
	return s, ok
}

// JSON is the whole catalog as the page reads it: {"en": {...}, "de": {...}}.
func JSON() []byte {
	b, err := json.Marshal(catalog)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return b
}

// Pick chooses the catalog language for an Accept-Language header: German
// when German ("de", "de-DE", ...) is preferred over English, English
// otherwise (no header, another language first, or German refused with
// q=0). Quality values are honoured; ties keep the header's order.
func Pick(acceptLanguage string) string {
	best, bestQ := English, -1.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, q := parseRange(part)
		lang := primary(tag)
		if (lang == German || lang == English || tag == "*") && q > bestQ {
			if tag == "*" {
				lang = English
			}
			best, bestQ = lang, q
		}
	}
	if bestQ <= 0 {
		return English
	}
	return best
}

// parseRange reads one language range of Accept-Language: "de-DE;q=0.8".
func parseRange(part string) (tag string, q float64) {
	tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
	q = 1
	if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
		if _, err := fmt.Sscanf(v, "%g", &q); err != nil || q < 0 || q > 1 {
			q = 0
		}
	}
	return strings.ToLower(strings.TrimSpace(tag)), q
}

func primary(tag string) string {
	lang, _, _ := strings.Cut(tag, "-")
	return lang
}
