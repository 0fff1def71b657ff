package reconcile

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"companydocs"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/messages"
	"companydocs/resolver"
)

// unverifiedSeen is a sink that remembers the names of the profiles
// that end the ingest unverified (discovery records no register entry
// corroborated), beside storing every profile.
type unverifiedSeen struct {
	*index.Builder
	leis     map[string]string // id → LEI, of those unverified at last Put
	verified map[string]string // id → name, of the register's profiles
}

func (s unverifiedSeen) Put(p *companydocs.Profile) error {
	if p.NeedsDiscover() && len(p.LEIs) > 0 {
		s.leis[p.ID] = string(p.LEIs[0].LEI)
	} else {
		delete(s.leis, p.ID)
	}
	if p.Source == companydocs.SourceRegistryCache {
		s.verified[p.ID] = p.Name
	}
	return s.Builder.Put(p)
}

// sampleIndex builds a real index of the first 3,000 register records of
// the embedded sample and its LEI records, and returns it with the names
// of the profiles left unverified.
func sampleIndex(t *testing.T) (g *index.Generation, verified string, unverified []string) {
	t.Helper()
	dir := t.TempDir()
	b, err := index.NewBuilder(dir, index.BuilderOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sink := unverifiedSeen{b, map[string]string{}, map[string]string{}}
	inputs := []ingest.Input{{Path: "../data/sample.jsonl.bz2"}, {Path: "../data/lei_sample.csv"}}
	if _, err := ingest.Run(context.Background(), inputs, sink, ingest.Options{MaxRecords: 3000}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	meta, err := b.Commit(index.Meta{Sources: []string{"sample.jsonl.bz2", "lei_sample.csv"}})
	if err != nil {
		t.Fatal(err)
	}
	g, err = index.Open(filepath.Join(dir, "index", meta.ID))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	for _, l := range sink.leis {
		unverified = append(unverified, l)
	}
	slices.Sort(unverified)
	return g, sink.verified[slices.Min(slices.Collect(maps.Keys(sink.verified)))], unverified
}

// A reconciliation query without a candidate says why, in the request's
// language, with the search's note codes: name words no company bears, a
// register number no entry carries, an LEI no record has, a legal form
// alone, a text with nothing to search (answered as an unreadable query
// is, res nil), and the LEI of a record no register entry corroborated
// (unverified, which reconciliation leaves out). A query with candidates carries no note.
func TestAnswerWithoutCandidatesSaysWhy(t *testing.T) {
	g, verified, unverified := sampleIndex(t)
	search := func(q string) *resolver.Result {
		res, err := resolver.Resolve(context.Background(), g, resolver.Request{Query: q, Limit: 10})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		return res
	}
	cases := []struct {
		res  *resolver.Result
		code string
	}{
		{search("Quarkbrötchen Zwiebelkuchen Xylophon"), resolver.NoteNameWordsUnknown},
		{search("HRB 999999 München"), resolver.NoteRegisterEntryUnknown},
		{search("529900ZZZQUARKZ00028"), resolver.NoteLEIUnknown},
		{search("GmbH"), resolver.NoteNothingSearchable},
		{nil, resolver.NoteNothingSearchable},
	}
	onlyUnverified := 0
	for _, lei := range unverified {
		res := search(lei)
		if len(res.Candidates) > 0 && !slices.ContainsFunc(res.Candidates, func(c companydocs.Candidate) bool { return c.ProfileID != "" }) {
			cases = append(cases, struct {
				res  *resolver.Result
				code string
			}{res, NoteOnlyUnverified})
			if onlyUnverified++; onlyUnverified == 3 {
				break
			}
		}
	}
	if onlyUnverified == 0 {
		t.Fatalf("none of %d unverified records' LEIs is found by unverified records only", len(unverified))
	}
	for _, c := range cases {
		for _, lang := range []string{messages.English, messages.German} {
			a := Answer(c.res, lang)
			if len(a.Result) != 0 {
				t.Errorf("%s: want no candidate, got %+v", c.code, a.Result)
				continue
			}
			i := slices.IndexFunc(a.NoteDetails, func(d companydocs.ReasonDetail) bool { return d.Code == c.code })
			if i < 0 || len(a.Notes) != len(a.NoteDetails) {
				t.Errorf("%s: notes %q %+v, want the code with a sentence each", c.code, a.Notes, a.NoteDetails)
				continue
			}
			if want := noteText(lang, a.NoteDetails[i]); a.Notes[i] != want || want == "" {
				t.Errorf("%s in %s: %q, want %q", c.code, lang, a.Notes[i], want)
			}
		}
	}
	if en, de := noteText(messages.English, companydocs.ReasonDetail{Code: NoteOnlyUnverified}), noteText(messages.German, companydocs.ReasonDetail{Code: NoteOnlyUnverified}); en == de {
		t.Errorf("only_unverified is said alike in both languages: %q", en)
	}
	found := search(verified)
	if a := Answer(found, messages.English); len(a.Result) == 0 || a.Notes != nil || a.NoteDetails != nil {
		t.Errorf("a query with candidates: %d candidates, notes %q", len(a.Result), a.Notes)
	}
}
