package resolver_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs"
	"companydocs/internal/imprint"
	"companydocs/register"
	"companydocs/resolver"
	"companydocs/textfold"
)

var updateEval = flag.Bool("update-eval", false, "regenerate resolver/testdata/eval.jsonl from the embedded sample")

// evalCase is one labelled query of the evaluation set.
type evalCase struct {
	Kind  string `json:"kind"`
	Query string `json:"query"`
	Mode  string `json:"mode,omitempty"`
	// Discover asks for discovery candidates too.
	Discover bool `json:"discover,omitempty"`
	// Want is the profile id that must rank first; empty for queries
	// without a single right answer (short, shared numbers).
	Want string `json:"want,omitempty"`
	// WantName documents Want for people reading the file.
	WantName string `json:"want_name,omitempty"`
	// NoExact is set when no candidate may be labelled exact.
	NoExact bool `json:"no_exact,omitempty"`
	// WantExact is set when the right answer must be labelled exact.
	WantExact bool `json:"want_exact,omitempty"`
	// Properties are the clues of a list row's other columns.
	Properties resolver.Properties `json:"properties,omitzero"`
	// Absent is the id of the record the query names when it is held out
	// of the evaluation's index (evalabsent_test.go): no candidate is the
	// company meant. WantName names it then.
	Absent string `json:"absent,omitempty"`
}

// request is the case as a search request.
func (c evalCase) request() resolver.Request {
	return resolver.Request{Query: c.Query, Mode: c.Mode, Discover: c.Discover, Properties: c.Properties}
}

const evalFile = "testdata/eval.jsonl"

// TestGenerateEvalSet rebuilds the evaluation set from the real records of
// the embedded sample. It runs only with -update-eval; the committed file
// is what the evaluation uses, so the labels are reviewed in diffs.
func TestGenerateEvalSet(t *testing.T) {
	if !*updateEval {
		t.Skip("run with -update-eval to regenerate " + evalFile)
	}
	idx := mustSample(t)
	g := &evalGen{idx: idx, rnd: rand.New(rand.NewPCG(17, 42)), names: nameCounts(idx)}
	g.registerCases(90)
	g.sharedNumberCases(25)
	g.noCourtCases(20)
	g.nameCases(160)
	g.previousNameCases(20)
	g.officerCases(20)
	g.removedCases(20)
	g.shortCases()
	g.leiCases()
	g.discoveryCases()
	// The kinds of clue beside names and numbers, drawn after
	// the others so that those stay as they were.
	g.directorCases(80)
	g.formerNameCases(80)
	g.addressCases(280)
	g.noiseCases(80)
	g.placeASCIICases(80)
	g.leiPrefixCases()
	// Pasted blocks and persons' names with a typo, drawn
	// after the others so that those stay as they were.
	g.pasteCases(200)
	g.directorTypoCases(80)
	// Register lines in English and as people write them, courts named
	// without a number, names cut at a field length and abbreviated as
	// lists write them, drawn after the others so that those stay as
	// they were.
	g.writtenRegisterCases(80)
	g.courtCases(40)
	g.cutNameCases(80)
	g.abbreviatedCases(80)
	// List rows of present companies, and companies held out of the
	// index (evalabsent_test.go), drawn after the others so that those
	// stay as they were.
	g.listRowCases(240)
	g.absentCases(720)
	f, err := os.Create(evalFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	for _, c := range g.cases {
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d cases", len(g.cases))
}

type evalGen struct {
	idx   *memIndex
	rnd   *rand.Rand
	names map[string]int
	cases []evalCase
	used  map[string]bool
}

// nameCounts counts profiles per folded base name (legal form dropped), so
// that name queries are generated only where the name is unambiguous.
func nameCounts(idx *memIndex) map[string]int {
	m := map[string]int{}
	for _, p := range idx.all {
		m[baseKey(p.Name)]++
	}
	return m
}

func baseKey(name string) string {
	base, _, _ := register.SplitLegalForm(name)
	return strings.Join(base, " ")
}

// pick returns n profiles chosen at random that satisfy keep, each used once.
func (g *evalGen) pick(n int, keep func(*companydocs.Profile) bool) []*companydocs.Profile {
	if g.used == nil {
		g.used = map[string]bool{}
	}
	order := g.rnd.Perm(len(g.idx.all))
	var out []*companydocs.Profile
	for _, i := range order {
		p := g.idx.all[i]
		if !g.used[p.ID] && p.Source == companydocs.SourceRegistryCache && keep(p) {
			g.used[p.ID] = true
			out = append(out, p)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

func (g *evalGen) add(c evalCase) { g.cases = append(g.cases, c) }

func (g *evalGen) liveAtCourt(p *companydocs.Profile) (atCourt, live int) {
	for _, q := range g.idx.byNum[string(p.Ref.Type)+"|"+p.Ref.Number] {
		if q.Ref.Court == p.Ref.Court {
			atCourt++
			if !q.Removed && q.Ref.Suffix == p.Ref.Suffix {
				live++
			}
		}
	}
	return
}

func (g *evalGen) registerCases(n int) {
	notations := []func(p *companydocs.Profile) string{
		func(p *companydocs.Profile) string { return p.CourtName() + " " + p.Ref.NumberKey() },
		func(p *companydocs.Profile) string { return p.Ref.NumberKey() + " " + p.CourtName() },
		func(p *companydocs.Profile) string { return "Amtsgericht " + p.CourtName() + " " + p.Ref.NumberKey() },
		func(p *companydocs.Profile) string {
			return p.CourtName() + ", " + strings.ReplaceAll(p.Ref.NumberKey(), " ", "")
		},
		func(p *companydocs.Profile) string { return p.Name + " " + p.Ref.NumberKey() + " " + p.CourtName() },
		func(p *companydocs.Profile) string {
			return strings.Replace(p.Ref.NumberKey(), "HR", "HR ", 1) + " (AG " + p.CourtName() + ")"
		},
	}
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		_, live := g.liveAtCourt(p)
		return !p.Removed && live == 1 && p.Ref.FormerCourt == ""
	})
	for i, p := range ps {
		g.add(evalCase{Kind: "register", Query: notations[i%len(notations)](p), Want: p.ID, WantName: p.Name, WantExact: true})
	}
}

func (g *evalGen) sharedNumberCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		atCourt, _ := g.liveAtCourt(p)
		return atCourt > 1
	})
	for _, p := range ps {
		q := p.CourtName() + " " + string(p.Ref.Type) + " " + p.Ref.Number
		// Without a suffix, the number names exactly one company only when
		// one entry at the court is live (the rest removed, often entries
		// of merged former courts).
		if live := g.liveWithoutSuffix(p); live != nil {
			g.add(evalCase{Kind: "register_shared_one_live", Query: q, Want: live.ID, WantName: live.Name, WantExact: true})
		} else {
			g.add(evalCase{Kind: "register_shared", Query: q, NoExact: true})
		}
		if p.Ref.Suffix != "" {
			g.add(evalCase{Kind: "register_suffix", Query: q + " " + p.Ref.Suffix, Want: p.ID, WantName: p.Name})
		}
	}
}

// liveWithoutSuffix returns the only live entry with p's court, type and
// number, whatever its suffix or former court, or nil.
func (g *evalGen) liveWithoutSuffix(p *companydocs.Profile) *companydocs.Profile {
	var live []*companydocs.Profile
	for _, q := range g.idx.byNum[string(p.Ref.Type)+"|"+p.Ref.Number] {
		if q.Ref.Court == p.Ref.Court && !q.Removed {
			live = append(live, q)
		}
	}
	if len(live) == 1 && live[0].Ref.Suffix == "" {
		return live[0]
	}
	return nil
}

func (g *evalGen) noCourtCases(n int) {
	for _, p := range g.pick(n, func(p *companydocs.Profile) bool { return !p.Removed }) {
		g.add(evalCase{Kind: "register_no_court", Query: p.Ref.NumberKey(), NoExact: true})
	}
}

// nameVariants spells a real name the ways people write it.
var nameVariants = []struct {
	kind string
	make func(g *evalGen, p *companydocs.Profile) string
}{
	{"name_exact", func(g *evalGen, p *companydocs.Profile) string { return p.Name }},
	{"name_city", func(g *evalGen, p *companydocs.Profile) string { return p.Name + " " + p.Seat }},
	{"name_no_form", func(g *evalGen, p *companydocs.Profile) string { return stripForm(p.Name) }},
	{"name_form_variant", func(g *evalGen, p *companydocs.Profile) string { return formVariant(p.Name) }},
	{"name_umlaut", func(g *evalGen, p *companydocs.Profile) string { return transliterate(p.Name, g.rnd.IntN(2) == 0) }},
	{"name_typo", func(g *evalGen, p *companydocs.Profile) string { return typo(p.Name, g.rnd) }},
	{"name_lower", func(g *evalGen, p *companydocs.Profile) string { return strings.ToLower(p.Name) }},
}

func (g *evalGen) nameCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		base, _, _ := register.SplitLegalForm(p.Name)
		return g.names[baseKey(p.Name)] == 1 && len(base) >= 2 && p.Seat != "" && !p.Removed
	})
	for i, p := range ps {
		v := nameVariants[i%len(nameVariants)]
		q := v.make(g, p)
		if q == "" || q == p.Name && v.kind != "name_exact" {
			q, v = p.Name+" "+p.Seat, nameVariants[1]
		}
		g.add(evalCase{Kind: v.kind, Query: q, Want: p.ID, WantName: p.Name})
	}
}

func (g *evalGen) previousNameCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		return len(p.PreviousNames) > 0 && g.names[baseKey(p.PreviousNames[0])] == 0 && len(strings.Fields(p.PreviousNames[0])) >= 2
	})
	for _, p := range ps {
		g.add(evalCase{Kind: "previous_name", Query: p.PreviousNames[0], Mode: "deep", Want: p.ID, WantName: p.Name})
	}
}

func (g *evalGen) officerCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		return len(p.Officers) > 0 && p.Officers[0].LastName != "" && p.Officers[0].FirstName != "" && p.Seat != ""
	})
	for _, p := range ps {
		o := p.Officers[0]
		g.add(evalCase{Kind: "officer", Query: o.FirstName + " " + o.LastName + " " + p.Seat, Mode: "deep", Want: p.ID, WantName: p.Name})
	}
}

func (g *evalGen) removedCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		base, _, _ := register.SplitLegalForm(p.Name)
		return p.Removed && g.names[baseKey(p.Name)] == 1 && len(base) >= 2 && p.Seat != ""
	})
	for _, p := range ps {
		g.add(evalCase{Kind: "removed", Query: p.Name + " " + p.Seat, Want: p.ID, WantName: p.Name})
	}
}

func (g *evalGen) shortCases() {
	for _, q := range []string{"Müller", "Bau GmbH", "AG", "Berlin", "GmbH", "Hamburg", "Schmidt", "Holding", "e.V.", "Meyer KG",
		"Immobilien GmbH", "Verwaltungs GmbH", "Köln", "München", "Service GmbH", "Auto", "Apotheke", "Sportverein", "Stiftung", "Bank"} {
		g.add(evalCase{Kind: "short", Query: q, NoExact: true})
	}
}

// leiCases asks for every LEI the sample knows, in the spellings people
// use, and for LEIs whose checksum fails.
func (g *evalGen) leiCases() {
	spellings := []func(string) string{
		func(s string) string { return s },
		strings.ToLower,
		func(s string) string { return s[:4] + " " + s[4:8] + " " + s[8:12] + " " + s[12:16] + " " + s[16:] },
		func(s string) string { return s[:6] + "-" + s[6:12] + "-" + s[12:] },
	}
	n := 0
	for _, p := range g.idx.all {
		for _, l := range p.LEIs {
			lei := string(l.LEI)
			verified := p.Verified
			g.add(evalCase{Kind: "lei", Query: spellings[n%len(spellings)](lei), Discover: true, Want: p.ID, WantName: p.Name, WantExact: verified, NoExact: !verified})
			if n%5 == 0 {
				g.add(evalCase{Kind: "lei_bad_checksum", Query: breakChecksum(lei), Discover: true, NoExact: true})
			}
			n++
		}
	}
}

// breakChecksum changes the last check digit, which always fails mod 97.
func breakChecksum(lei string) string {
	last := lei[19]
	next := byte('0' + (last-'0'+1)%10)
	return lei[:19] + string(next)
}

// discoveryCases asks for discovery candidates by name, with discover on.
func (g *evalGen) discoveryCases() {
	for _, p := range g.idx.all {
		if p.Source != companydocs.SourceDiscovery || g.names[baseKey(p.Name)] != 1 {
			continue
		}
		g.add(evalCase{Kind: "discovery_name", Query: p.Name, Discover: true, Want: p.ID, WantName: p.Name, NoExact: !p.Verified})
	}
}

func stripForm(name string) string {
	_, form, ok := register.SplitLegalForm(name)
	if !ok {
		return ""
	}
	out := name
	for _, spelled := range []string{"Gesellschaft mit beschränkter Haftung", "GmbH & Co. KG", "GmbH", "mbH", "e.V.", "AG", "KG", "UG (haftungsbeschränkt)", "e.K.", "eG", "OHG"} {
		if strings.HasSuffix(out, " "+spelled) {
			out = strings.TrimSuffix(out, " "+spelled)
			break
		}
	}
	if out == name {
		return ""
	}
	_ = form
	return strings.TrimRight(out, " ,-")
}

func formVariant(name string) string {
	swaps := [][2]string{
		{"Gesellschaft mit beschränkter Haftung", "GmbH"}, {"GmbH & Co. KG", "GmbH & Co KG"}, {" GmbH", " Gesellschaft mit beschränkter Haftung"},
		{" mbH", " GmbH"}, {"e.V.", "eV"}, {" AG", " Aktiengesellschaft"}, {"Aktiengesellschaft", "AG"},
		{"UG (haftungsbeschränkt)", "UG haftungsbeschraenkt"}, {"e.K.", "e. Kfm."}, {" KG", " Kommanditgesellschaft"},
	}
	for _, s := range swaps {
		if strings.Contains(name, s[0]) {
			return strings.Replace(name, s[0], s[1], 1)
		}
	}
	return ""
}

func transliterate(name string, ascii bool) string {
	if !strings.ContainsAny(name, "äöüÄÖÜß") {
		return ""
	}
	pairs := []string{"ä", "ae", "ö", "oe", "ü", "ue", "Ä", "Ae", "Ö", "Oe", "Ü", "Ue", "ß", "ss"}
	if ascii {
		pairs = []string{"ä", "a", "ö", "o", "ü", "u", "Ä", "A", "Ö", "O", "Ü", "U", "ß", "ss"}
	}
	return strings.NewReplacer(pairs...).Replace(name)
}

// typo swaps two inner letters of the longest word of at least 7 letters.
func typo(name string, rnd *rand.Rand) string {
	words := strings.Fields(name)
	best := -1
	for i, w := range words {
		if utf8.RuneCountInString(w) >= 7 && (best < 0 || len(w) > len(words[best])) {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	r := []rune(words[best])
	i := 1 + rnd.IntN(len(r)-3)
	r[i], r[i+1] = r[i+1], r[i]
	if string(r) == words[best] {
		return ""
	}
	words[best] = string(r)
	return strings.Join(words, " ")
}

// loadEval reads the committed evaluation set.
func loadEval(tb testing.TB) []evalCase {
	tb.Helper()
	cases, err := readEval()
	if err != nil {
		tb.Fatalf("%v (regenerate with -update-eval)", err)
	}
	return cases
}

// readEval reads the committed evaluation set.
func readEval() ([]evalCase, error) {
	data, err := os.ReadFile(evalFile)
	if err != nil {
		return nil, err
	}
	var cases []evalCase
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c evalCase
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", evalFile, i+1, err)
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// clueKinds are the kinds of clue beside names and numbers; the evaluation
// reports them on their own (hit@3 by kind), so that the figures of the
// kinds before them stay comparable.
var clueKinds = map[string]bool{
	"director": true, "director_seat": true, "former_name": true,
	"address": true, "address_postcode": true, "address_deep": true, "address_postcode_deep": true,
	"name_noise": true, "place_ascii": true, "lei_prefix": true,
	"paste_register": true, "paste_register_oneline": true, "paste_text": true, "paste_text_oneline": true,
	"director_typo": true,
	"list_row":      true, "list_row_short": true,
	"register_written": true, "court_written": true, "name_cut": true, "name_abbreviated": true,
}

// personKey is an officer's folded first and last name.
func personKey(o companydocs.Officer) string {
	return textfold.Fold(o.FirstName + " " + o.LastName)
}

// companiesPerPerson counts, per officer (personKey), the companies of the
// sample the person is an officer of.
func (g *evalGen) companiesPerPerson() map[string]int {
	people := map[string]int{}
	for _, p := range g.idx.all {
		seen := map[string]bool{}
		for _, o := range p.Officers {
			if k := personKey(o); !seen[k] {
				seen[k] = true
				people[k]++
			}
		}
	}
	return people
}

// directorCases ask for a company by its officer's name in standard mode,
// alone and with the seat, where the person is an officer of one company
// of the sample (a person of several companies names none of them).
func (g *evalGen) directorCases(n int) {
	people := g.companiesPerPerson()
	ps := g.pick(2*n, func(p *companydocs.Profile) bool {
		return len(p.Officers) > 0 && imprint.RealPerson(p.Officers[0]) && people[personKey(p.Officers[0])] == 1 && p.Seat != ""
	})
	for i, p := range ps {
		o := p.Officers[0]
		if i%2 == 0 {
			g.add(evalCase{Kind: "director", Query: o.FirstName + " " + o.LastName, Want: p.ID, WantName: p.Name, NoExact: true})
		} else {
			g.add(evalCase{Kind: "director_seat", Query: o.FirstName + " " + o.LastName + " " + p.Seat, Want: p.ID, WantName: p.Name, NoExact: true})
		}
	}
}

// formerNameCases ask for a company by a former name in standard mode.
func (g *evalGen) formerNameCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		return len(p.PreviousNames) > 0 && g.names[baseKey(p.PreviousNames[0])] == 0 && len(strings.Fields(p.PreviousNames[0])) >= 2
	})
	for _, p := range ps {
		g.add(evalCase{Kind: "former_name", Query: p.PreviousNames[0], Want: p.ID, WantName: p.Name})
	}
}

// addressCases ask for a company by its registered address, with and
// without the postcode, in both modes, where no other company of the
// sample has the same street and house number.
func (g *evalGen) addressCases(n int) {
	streets := map[string]int{}
	for _, p := range g.idx.all {
		if m := imprint.AddressPattern.FindStringSubmatch(p.Address); m != nil {
			streets[textfold.Fold(m[1]+" "+m[2]+" "+m[4])]++
		}
	}
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		m := imprint.AddressPattern.FindStringSubmatch(p.Address)
		return m != nil && streets[textfold.Fold(m[1]+" "+m[2]+" "+m[4])] == 1
	})
	kinds := []struct {
		kind, mode string
		postcode   bool
	}{{"address", "", false}, {"address_postcode", "", true}, {"address_deep", "deep", false}, {"address_postcode_deep", "deep", true}}
	for i, p := range ps {
		m := imprint.AddressPattern.FindStringSubmatch(p.Address)
		k := kinds[i%len(kinds)]
		q := m[1] + " " + m[2] + " " + m[4]
		if k.postcode {
			q = m[1] + " " + m[2] + ", " + m[3] + " " + m[4]
		}
		g.add(evalCase{Kind: k.kind, Query: q, Mode: k.mode, Want: p.ID, WantName: p.Name, NoExact: true})
	}
}

// noiseCases wrap an unambiguous name in the words people type around it.
func (g *evalGen) noiseCases(n int) {
	wraps := []string{"Firma %[1]s", "%[1]s aus %[2]s", "Registerauszug %[1]s", "Die Firma %[1]s in %[2]s",
		"Handelsregisterauszug %[1]s mit Sitz in %[2]s", "Firma %[1]s, Sitz %[2]s"}
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		base, _, _ := register.SplitLegalForm(p.Name)
		return g.names[baseKey(p.Name)] == 1 && len(base) >= 2 && p.Seat != "" && !p.Removed
	})
	for i, p := range ps {
		q := fmt.Sprintf(wraps[i%len(wraps)], p.Name, p.Seat)
		g.add(evalCase{Kind: "name_noise", Query: q, Want: p.ID, WantName: p.Name})
	}
}

// placeASCIICases give an unambiguous name with a seat spelled with an
// umlaut, typed without it ("Koln") or transliterated ("Koeln").
func (g *evalGen) placeASCIICases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		base, _, _ := register.SplitLegalForm(p.Name)
		return g.names[baseKey(p.Name)] == 1 && len(base) >= 2 && strings.ContainsAny(p.Seat, "äöüÄÖÜß") && !p.Removed
	})
	for i, p := range ps {
		g.add(evalCase{Kind: "place_ascii", Query: p.Name + " " + transliterate(p.Seat, i%2 == 0), Want: p.ID, WantName: p.Name})
	}
}

// leiPrefixCases ask for every LEI of the sample with the label people
// paste in front of it.
func (g *evalGen) leiPrefixCases() {
	prefixes := []string{"LEI: ", "LEI ", "LEI-Code: ", "lei:"}
	n := 0
	for _, p := range g.idx.all {
		for _, l := range p.LEIs {
			g.add(evalCase{Kind: "lei_prefix", Query: prefixes[n%len(prefixes)] + string(l.LEI), Discover: true, Want: p.ID, WantName: p.Name, WantExact: p.Verified, NoExact: !p.Verified})
			n++
		}
	}
}
