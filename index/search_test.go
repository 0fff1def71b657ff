package index

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// nameQueryOf is the text query a resolver builds from a company's name.
func nameQueryOf(name string) companydocs.TextQuery {
	base, form := nameParts(name)
	return companydocs.TextQuery{NameTerms: base, LegalFormTerms: form.Words}
}

func search(t *testing.T, g *Generation, q companydocs.TextQuery) []*companydocs.Profile {
	t.Helper()
	hits, err := g.SearchText(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchText(%+v): %v", q, err)
	}
	return hitProfiles(hits)
}

func TestSearchExactName(t *testing.T) {
	g := sharedGeneration(t)
	ps := loadRealProfiles(t)
	tried, found, topKey := 0, 0, 0
	for i := 0; i < len(ps); i += 23 {
		p := ps[i]
		q := nameQueryOf(p.Name)
		if len(q.NameTerms) == 0 {
			continue
		}
		tried++
		got := search(t, g, q)
		if containsID(got, p.ID) {
			found++
		} else {
			t.Logf("%q not among %d hits", p.Name, len(got))
		}
		if len(got) > 0 && register.NameKey(got[0].Name) == register.NameKey(p.Name) {
			topKey++
		}
	}
	// A name shared by more than ten entries can push one of them out of
	// the top ten; the first hit must still carry the name searched for.
	if tried < 100 || found < tried*97/100 {
		t.Errorf("exact names found in the top 10: %d of %d", found, tried)
	}
	if topKey != tried {
		t.Errorf("first hit has the searched name for %d of %d names", topKey, tried)
	}
}

func TestSearchTypo(t *testing.T) {
	g := sharedGeneration(t)
	tried, found := 0, 0
	for _, p := range loadRealProfiles(t) {
		q := nameQueryOf(p.Name)
		i := longestTerm(q.NameTerms)
		if i < 0 || utf8.RuneCountInString(q.NameTerms[i]) < 8 || !isLetters(q.NameTerms[i]) {
			continue
		}
		q.NameTerms = append([]string(nil), q.NameTerms...)
		q.NameTerms[i] = typo(q.NameTerms[i])
		q.Fuzzy = true
		tried++
		if containsID(search(t, g, q), p.ID) {
			found++
		} else {
			t.Logf("%q (typed %v) not found", p.Name, q.NameTerms)
		}
		if tried == 150 {
			break
		}
	}
	if tried < 50 || found < tried*9/10 {
		t.Errorf("names with a typo found in the top 10: %d of %d", found, tried)
	}
	t.Run("no fuzzy, no typo match", func(t *testing.T) {
		p := firstWith(t, func(p *companydocs.Profile) bool {
			q := nameQueryOf(p.Name)
			return len(q.NameTerms) == 1 && utf8.RuneCountInString(q.NameTerms[0]) >= 8 && isLetters(q.NameTerms[0])
		})
		q := nameQueryOf(p.Name)
		q.NameTerms = []string{typo(q.NameTerms[0])}
		if containsID(search(t, g, q), p.ID) {
			t.Errorf("%q found by typo %q without Fuzzy", p.Name, q.NameTerms[0])
		}
	})
}

// typo swaps two letters in the middle of a token (a transposition, an edit
// distance of 2 that keeps the first two letters).
func typo(s string) string {
	r := []rune(s)
	i := len(r) / 2
	if r[i] == r[i+1] {
		r[i] = 'x'
	} else {
		r[i], r[i+1] = r[i+1], r[i]
	}
	return string(r)
}

func longestTerm(terms []string) int {
	best := -1
	for i, t := range terms {
		if best < 0 || len(t) > len(terms[best]) {
			best = i
		}
	}
	return best
}

func isLetters(s string) bool {
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func firstWith(t *testing.T, ok func(*companydocs.Profile) bool) *companydocs.Profile {
	t.Helper()
	for _, p := range loadRealProfiles(t) {
		if ok(p) {
			return p
		}
	}
	t.Skip("no profile of that kind in the sample")
	return nil
}

func TestSearchUmlautSpellings(t *testing.T) {
	g := sharedGeneration(t)
	tried := 0
	for _, p := range loadRealProfiles(t) {
		if !strings.ContainsAny(p.Name, "äöüÄÖÜ") {
			continue
		}
		tried++
		withUmlaut := nameQueryOf(p.Name)
		transliterated := nameQueryOf(replaceUmlauts(p.Name, "ae", "oe", "ue"))
		plain := nameQueryOf(replaceUmlauts(p.Name, "a", "o", "u"))
		for label, q := range map[string]companydocs.TextQuery{"umlaut": withUmlaut, "transliterated": transliterated, "plain": plain} {
			if !containsID(search(t, g, q), p.ID) {
				t.Errorf("%q not found spelled %s (%v)", p.Name, label, q.NameTerms)
			}
		}
		if tried == 40 {
			break
		}
	}
	if tried < 10 {
		t.Fatalf("only %d names with umlauts in the sample", tried)
	}
}

func replaceUmlauts(s, a, o, u string) string {
	return strings.NewReplacer("ä", a, "ö", o, "ü", u, "Ä", strings.ToUpper(a[:1])+a[1:],
		"Ö", strings.ToUpper(o[:1])+o[1:], "Ü", strings.ToUpper(u[:1])+u[1:]).Replace(s)
}

func TestSearchPlainSpellingRanksBelowExact(t *testing.T) {
	// "Müller" typed as "Muller" matches through name_plain; a company
	// really spelled with the typed letters ranks above it.
	q := companydocs.TextQuery{NameTerms: []string{"muller"}}
	exact := &companydocs.Profile{ID: "dp_exact", Source: companydocs.SourceRegistryCache, Name: "Muller Consulting"}
	umlaut := &companydocs.Profile{ID: "dp_umlaut", Source: companydocs.SourceRegistryCache, Name: "Müller Consulting"}
	other := &companydocs.Profile{ID: "dp_other", Source: companydocs.SourceRegistryCache, Name: "Schmidt Consulting"}
	dataDir := t.TempDir()
	mustBuild(t, dataDir, []*companydocs.Profile{umlaut, other, exact})
	got := search(t, mustOpenCurrent(t, dataDir), q)
	if len(got) != 2 || got[0].ID != exact.ID || got[1].ID != umlaut.ID {
		t.Fatalf("muller: %v, want [%s %s]", ids(got), exact.ID, umlaut.ID)
	}
}

func TestSearchCityBoost(t *testing.T) {
	g := sharedGeneration(t)
	a, b := sameNameOtherSeat(t)
	for _, want := range []*companydocs.Profile{a, b} {
		q := nameQueryOf(want.Name)
		q.SeatWords = strings.Fields(textfold.Fold(want.Seat))
		got := search(t, g, q)
		if len(got) == 0 || textfold.Fold(got[0].Seat) != textfold.Fold(want.Seat) {
			t.Errorf("%q in %q: first hit %v", want.Name, want.Seat, got)
		}
		if !containsID(got, a.ID) || !containsID(got, b.ID) {
			t.Errorf("city must only boost: %q should find both seats, got %v", want.Name, ids(got))
		}
	}
}

// sameNameOtherSeat finds two entries whose names share their tokens but
// whose seats differ, with no more than five entries of that name.
func sameNameOtherSeat(t *testing.T) (*companydocs.Profile, *companydocs.Profile) {
	byName := map[string][]*companydocs.Profile{}
	for _, p := range loadRealProfiles(t) {
		if base, _ := nameParts(p.Name); len(base) > 0 && p.Seat != "" {
			k := strings.Join(base, " ")
			byName[k] = append(byName[k], p)
		}
	}
	for _, group := range byName {
		if len(group) > 5 {
			continue
		}
		for _, p := range group[1:] {
			if textfold.Fold(p.Seat) != textfold.Fold(group[0].Seat) {
				return group[0], p
			}
		}
	}
	t.Skip("no name with two seats in the sample")
	return nil, nil
}

func TestSearchCourtFilter(t *testing.T) {
	g := sharedGeneration(t)
	p := firstWith(t, func(p *companydocs.Profile) bool { return p.Ref.Court != "" && len(nameQueryOf(p.Name).NameTerms) > 0 })
	q := nameQueryOf(p.Name)
	q.CourtCode = p.Ref.Court
	q.Fuzzy = true
	got := search(t, g, q)
	if !containsID(got, p.ID) {
		t.Fatalf("%q not found at its court %s", p.Name, p.Ref.Court)
	}
	for _, h := range got {
		if h.Ref.Court != p.Ref.Court && h.Ref.FormerCourt != p.Ref.Court {
			t.Errorf("court filter %s let through %s at %s", p.Ref.Court, h.Name, h.Ref.Court)
		}
	}
}

func TestSearchDeep(t *testing.T) {
	g := sharedGeneration(t)
	t.Run("officer", func(t *testing.T) {
		p := firstWith(t, func(p *companydocs.Profile) bool {
			return len(p.Officers) > 0 && len(textfold.Tokens(textfold.Fold(p.Officers[0].Name))) >= 2 &&
				!strings.Contains(textfold.Fold(p.Name), textfold.Fold(p.Officers[0].Name))
		})
		q := companydocs.TextQuery{NameTerms: textfold.Tokens(textfold.Fold(p.Officers[0].Name)), Limit: 20}
		if containsID(search(t, g, q), p.ID) {
			t.Errorf("officer %q found %q without Deep", p.Officers[0].Name, p.Name)
		}
		q.Deep = true
		if !containsID(search(t, g, q), p.ID) {
			t.Errorf("officer %q does not find %q in deep mode", p.Officers[0].Name, p.Name)
		}
	})
	t.Run("previous name", func(t *testing.T) {
		p := firstWith(t, func(p *companydocs.Profile) bool {
			return len(p.PreviousNames) > 0 && register.NameKey(p.PreviousNames[0]) != register.NameKey(p.Name)
		})
		q := nameQueryOf(p.PreviousNames[0])
		q.Deep = true
		if !containsID(search(t, g, q), p.ID) {
			t.Errorf("former name %q does not find %q in deep mode", p.PreviousNames[0], p.Name)
		}
	})
}

// A search of one field alone finds a company by its former name or its
// officer, and returns only profiles that have that field: a current name
// never matches it.
func TestSearchOneFieldAlone(t *testing.T) {
	g := sharedGeneration(t)
	fields := []struct {
		only   companydocs.SearchField
		values func(*companydocs.Profile) []string
	}{
		{companydocs.OnlyFormerNames, func(p *companydocs.Profile) []string { return p.PreviousNames }},
		{companydocs.OnlyOfficers, func(p *companydocs.Profile) []string {
			var names []string
			for _, o := range p.Officers {
				names = append(names, o.Name)
			}
			return names
		}},
	}
	for _, f := range fields {
		checked := 0
		for _, p := range loadRealProfiles(t) {
			values := f.values(p)
			if len(values) == 0 || register.NameKey(values[0]) == register.NameKey(p.Name) {
				continue
			}
			q := nameQueryOf(values[0])
			q.Only, q.Limit = f.only, 30
			hits := search(t, g, q)
			if !containsID(hits, p.ID) {
				t.Errorf("%s %q does not find %q", f.only, values[0], p.Name)
			}
			for _, h := range hits {
				if len(f.values(h)) == 0 {
					t.Fatalf("%s %q found %q, which has none", f.only, values[0], h.Name)
				}
			}
			if checked++; checked == 50 {
				break
			}
		}
		if checked < 50 {
			t.Fatalf("%s: only %d profiles to check", f.only, checked)
		}
	}
}

// An offset leaves out the best hits and nothing else: the hits from 30
// to 50 are the end of the 50 best.
func TestSearchOffset(t *testing.T) {
	g := sharedGeneration(t)
	q := companydocs.TextQuery{NameTerms: []string{"bau", "gmbh"}, Fuzzy: true, Limit: 50}
	all := search(t, g, q)
	q.Offset = 30
	rest := search(t, g, q)
	if len(all) != 50 || len(rest) != 20 {
		t.Fatalf("%d hits, %d after the offset; want 50 and 20", len(all), len(rest))
	}
	for i, p := range rest {
		if p.ID != all[30+i].ID {
			t.Fatalf("hit %d after the offset is %s, the 50 best have %s there", i, p.ID, all[30+i].ID)
		}
	}
}

func TestSearchBounds(t *testing.T) {
	g := sharedGeneration(t)
	if got := search(t, g, companydocs.TextQuery{}); len(got) != 0 {
		t.Errorf("empty query gave %d hits", len(got))
	}
	if got := search(t, g, companydocs.TextQuery{NameTerms: []string{"  ", ""}}); len(got) != 0 {
		t.Errorf("blank terms gave %d hits", len(got))
	}
	q := companydocs.TextQuery{NameTerms: []string{"gmbh", "verwaltung", "bau", "und", "service"}, Fuzzy: true, Deep: true, Limit: 500}
	if got := search(t, g, q); len(got) != maxLimit {
		t.Errorf("limit 500 gave %d hits, want the cap %d", len(got), maxLimit)
	}
	q.Limit = 0
	if got := search(t, g, q); len(got) != defaultLimit {
		t.Errorf("limit 0 gave %d hits, want %d", len(got), defaultLimit)
	}
	long := strings.Fields(strings.Repeat("abcdefghij ", 100))
	if _, err := g.SearchText(t.Context(), companydocs.TextQuery{NameTerms: long, Fuzzy: true, Deep: true}); err != nil {
		t.Errorf("100-term query: %v", err)
	}
}

func TestSharedStoreConsistent(t *testing.T) {
	for _, db := range sharedGeneration(t).store.dbs {
		checkStore(t, db)
	}
}

func TestSearchPrefersLegalForm(t *testing.T) {
	profiles := []*companydocs.Profile{
		{ID: "dp_kg", Source: companydocs.SourceRegistryCache, Name: "Müller Bau Technik KG"},
		{ID: "dp_gmbh", Source: companydocs.SourceRegistryCache, Name: "Müller Bau Technik GmbH"},
		{ID: "dp_ev", Source: companydocs.SourceRegistryCache, Name: "Müller Bau Technik e.V."},
	}
	dataDir := t.TempDir()
	mustBuild(t, dataDir, profiles)
	g := mustOpenCurrent(t, dataDir)
	for _, tc := range []struct{ form, want string }{
		{"Kommanditgesellschaft", "dp_kg"},
		{"Gesellschaft mit beschränkter Haftung", "dp_gmbh"},
		{"eingetragener Verein", "dp_ev"},
	} {
		_, form, ok := register.SplitLegalForm("Müller Bau " + tc.form)
		if !ok {
			t.Fatalf("legal form %q not recognised", tc.form)
		}
		got := search(t, g, companydocs.TextQuery{NameTerms: []string{"mueller", "bau"}, LegalFormTerms: form.Words})
		if len(got) != 3 || got[0].ID != tc.want {
			t.Errorf("mueller bau %s: %v, want %s first", tc.form, ids(got), tc.want)
		}
	}
}

// TestSearchTiesInIDOrder checks that hits of equal score come in profile-id
// order and that the id decides which of them make the cut at the limit,
// whatever order the profiles were indexed in.
func TestSearchTiesInIDOrder(t *testing.T) {
	var profiles []*companydocs.Profile
	for _, id := range []string{"dp_e", "dp_b", "dp_d", "dp_a", "dp_c"} {
		profiles = append(profiles, &companydocs.Profile{ID: id, Source: companydocs.SourceRegistryCache, Name: "Zwirbel Kontor GmbH"})
	}
	profiles = append(profiles, &companydocs.Profile{ID: "dp_0", Source: companydocs.SourceRegistryCache, Name: "Zwirbel Kontor Nord GmbH"})
	dataDir := t.TempDir()
	mustBuild(t, dataDir, profiles)
	q := nameQueryOf("Zwirbel Kontor GmbH")
	q.Limit = 3
	got := search(t, mustOpenCurrent(t, dataDir), q)
	if want := "dp_a dp_b dp_c"; strings.Join(ids(got), " ") != want {
		t.Fatalf("hits %v, want %s", ids(got), want)
	}
}

// TestClueWordsAreNotMistypedNames checks that a word of the clue a query
// names besides a company's name (an address's, an officer's) is taken as
// written, while a word no field holds still gets typo matches over the
// names: the address and officer words of the real sample that no name
// holds but that have typo neighbours among the names.
func TestClueWordsAreNotMistypedNames(t *testing.T) {
	g := sharedGeneration(t)
	stats, err := g.newTermStats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer stats.close()
	hasTypos := func(term string, q companydocs.TextQuery) bool {
		for _, c := range newTokenQuery(term, "", q, stats).clauses {
			if c.typo {
				return true
			}
		}
		return false
	}
	for _, clue := range []struct {
		field string
		q     companydocs.TextQuery
	}{
		{fieldAddress, companydocs.TextQuery{Fuzzy: true, Address: true}},
		{fieldOfficers, companydocs.TextQuery{Fuzzy: true, Officers: true}},
		{fieldSeat, companydocs.TextQuery{Fuzzy: true, Officers: true}},
		{fieldSeat, companydocs.TextQuery{Fuzzy: true, Address: true}},
	} {
		terms, err := stats.termsStarting(clue.field, "", math.MaxInt)
		if err != nil {
			t.Fatal(err)
		}
		words, typos := 0, 0
		for _, w := range terms {
			if utf8.RuneCountInString(w) < 8 || !isLetters(w) || stats.docFreq(fieldName, w) > 0 ||
				!hasTypos(w, companydocs.TextQuery{Fuzzy: true}) {
				continue
			}
			words++
			if hasTypos(w, clue.q) {
				t.Errorf("%s word %q got typo matches over the names", clue.field, w)
			}
			mistyped := typo(w)
			got := hasTypos(mistyped, clue.q)
			if stats.docFreq(clue.field, mistyped) == 0 && got != hasTypos(mistyped, companydocs.TextQuery{Fuzzy: true}) {
				t.Errorf("%q, %s word %q mistyped, got other typo matches over the names than in a query of names", mistyped, clue.field, w)
			}
			if got {
				typos++
			}
			if words == 20 {
				break
			}
		}
		if words < 5 || typos == 0 {
			t.Errorf("%s: %d words of the sample no name holds with typo neighbours among the names (want 5 or more), %d mistyped with some (want 1 or more)", clue.field, words, typos)
		}
	}
}

// TestSearchReadsStoredProfiles checks where a search reads its hits'
// profiles: from the documents' stored values in a generation of this
// version, from the profile store in one without them (before
// IndexVersion 9); both give the store's profiles.
func TestSearchReadsStoredProfiles(t *testing.T) {
	ps := loadRealProfiles(t)[:3000]
	stored, unstored := t.TempDir(), t.TempDir()
	mustBuild(t, stored, ps)
	mustBuildWith(t, unstored, ps, BuilderOptions{withoutStoredProfiles: true})
	gs, gu := mustOpenCurrent(t, stored), mustOpenCurrent(t, unstored)
	searched := 0
	// with the ids read for each hit, then with the generations' id order
	// (as Live serves them), which takes each hit's id from its document
	for _, ranked := range []bool{false, true} {
		if ranked {
			if err := errors.Join(gs.readIDRanks(), gu.readIDRanks()); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < len(ps); i += 97 {
			q := nameQueryOf(ps[i].Name)
			q.Fuzzy, q.Limit = true, 30
			got, old := search(t, gs, q), search(t, gu, q)
			if len(got) != len(old) {
				t.Fatalf("%q: %d hits with stored profiles, %d without", ps[i].Name, len(got), len(old))
			}
			for j, p := range got {
				want, err := gs.Profile(p.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(p, want) || !reflect.DeepEqual(old[j], want) {
					t.Fatalf("%q (ranked %v): hit %d is\n%+v stored,\n%+v unstored,\n%+v in the store", ps[i].Name, ranked, j, p, old[j], want)
				}
			}
			searched += len(got)
		}
	}
	if searched < 200 {
		t.Fatalf("only %d hits compared", searched)
	}
	for name, g := range map[string]*Generation{"stored": gs, "unstored": gu} {
		stats, err := g.newTermStats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		segs, err := stats.segments()
		if err != nil {
			t.Fatal(err)
		}
		h := hit{doc: 0}
		p, err := segs.storedProfile(&h)
		stats.close()
		if err != nil || (p != nil) != (name == "stored") || h.id == "" || p != nil && p.ID != h.id {
			t.Errorf("%s generation: document 0, of id %q read from its stored fields, stores %v (%v)", name, h.id, p != nil, err)
		}
	}
}
