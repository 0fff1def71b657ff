//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"slices"
	"testing"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"
)

// TestEvaluationNoCandidateSaysWhy: a search of the sample that finds no
// candidate says why in its notes, by a code and in both languages:
// companies the sample does not hold, an LEI and register references that
// name no entry, words that name no company (words_too_common, which the
// whole sample does not reach, is checked on a smaller register by the
// command's TestResolveSaysWhyNoCandidate). A query for a
// company the sample holds gets no such note.
func TestEvaluationNoCandidateSaysWhy(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, c := range []struct{ query, code string }{
		{"Quarkbrötchen Zwiebelkuchen Xylophon", resolver.NoteNameWordsUnknown},
		{"Quarkbrötchen Zwiebelkuchen", resolver.NoteNameWordsUnknown},
		{"529900ZZZQUARKZ00028", resolver.NoteLEIUnknown},            // valid check digits, no record carries it
		{"LEI: 529900ZZZQUARKZ00027", resolver.NoteLEIChecksumFails}, // wrong check digits
		{"HRB 999999 München", resolver.NoteRegisterEntryUnknown},
		{"GmbH", resolver.NoteNothingSearchable},
		{"und", resolver.NoteNothingSearchable},
	} {
		res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: c.query, Limit: resolver.DefaultLimit})
		if err != nil {
			t.Fatalf("%q: %v", c.query, err)
		}
		u := res.Understanding
		if len(res.Candidates) != 0 {
			t.Errorf("%q: %d candidates (%s), want none", c.query, len(res.Candidates), res.Candidates[0].Name)
			continue
		}
		i := slices.IndexFunc(u.NoteDetails, func(d companydocs.ReasonDetail) bool { return d.Code == c.code })
		if i < 0 || len(u.Notes) != len(u.NoteDetails) {
			t.Errorf("%q: notes %q (%v), want one coded %s", c.query, u.Notes, u.NoteDetails, c.code)
			continue
		}
		german := res.SaidIn(messages.German, c.query).Understanding.Notes
		en, de := resolver.NoteTextIn(messages.English, u.NoteDetails[i]), resolver.NoteTextIn(messages.German, u.NoteDetails[i])
		if u.Notes[i] != en || german[i] != de || en == de || en == "" || de == "" {
			t.Errorf("%q: notes %q and %q, want %q in English and %q in German", c.query, u.Notes[i], german[i], en, de)
		}
	}
	res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: "Rheinbahn AG Düsseldorf", Limit: resolver.DefaultLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Understanding.NoteDetails {
		switch d.Code {
		case resolver.NoteNameWordsUnknown, resolver.NoteWordsTooCommon, resolver.NoteNothingSearchable:
			t.Errorf("Rheinbahn AG Düsseldorf, with %d candidates, says %s", len(res.Candidates), d.Code)
		}
	}
}
