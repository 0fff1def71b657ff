package resolver_test

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// writtenRegisterLines are register lines as imprints write them, in
// German and in English: %[1]s is the court, %[2]s the register type
// spelled out ("HR B", "Handelsregister B", "VR-Nr."), %[3]s the number.
var writtenRegisterLines = []string{
	"Registered in the commercial register of the Local Court of %[1]s under %[2]s %[3]s",
	"Register court: Local Court %[1]s / Registration number: %[2]s %[3]s",
	"Registry court: %[1]s\nRegistration number: %[2]s %[3]s",
	"%[2]s %[3]s, District Court %[1]s",
	"%[2]s %[3]s, Amtsgericht %[1]s",
	"AG %[1]s\n%[2]s %[3]s",
	"AG %[1]s %[2]s %[3]s",
	"%[2]s %[3]s AG %[1]s",
}

// typeSpellings are the ways of writing a register type a line may use.
var typeSpellings = map[register.Type][]string{register.HRB: {"HR B", "HRB-Nr.", "HRB Nr.", "Handelsregister B", "Handelsregister Abteilung B"}, register.HRA: {"HR A", "HRA-Nr.", "HRA Nr.", "Handelsregister A", "Handelsregister Abteilung A"}, register.VR: {"VR-Nr.", "VR Nr.", "Vereinsregister"}, register.GnR: {"GnR-Nr.", "GnR Nr.", "Genossenschaftsregister"}, register.PR: {"PR-Nr.", "PR Nr.", "Partnerschaftsregister"}}

// writtenRegisterCases paste a real entry's name with its register line
// written as imprints write it (writtenRegisterLines), the line before
// and after the name: the entry is the exact answer.
func (g *evalGen) writtenRegisterCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		_, live := g.liveAtCourt(p)
		return !p.Removed && live == 1 && p.Ref.FormerCourt == "" && p.Ref.Suffix == "" && len(typeSpellings[p.Ref.Type]) > 0
	})
	for i, p := range ps {
		spellings := typeSpellings[p.Ref.Type]
		line := fmt.Sprintf(writtenRegisterLines[i%len(writtenRegisterLines)], p.CourtName(), spellings[i%len(spellings)], p.Ref.Number)
		q := p.Name + "\n" + line
		if i%2 == 1 {
			q = line + "\n" + p.Name
		}
		g.add(evalCase{Kind: "register_written", Query: q, Want: p.ID, WantName: p.Name, WantExact: true})
	}
}

// courtCases type an unambiguous name with its court named without a
// number ("Müller GmbH AG Freiburg"), before or after the name: the court
// tells, the entry ranks first.
func (g *evalGen) courtCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		base, _, _ := register.SplitLegalForm(p.Name)
		return g.names[baseKey(p.Name)] == 1 && len(base) >= 2 && !p.Removed && p.Ref.Court != "" && p.CourtName() != ""
	})
	wraps := []string{"%[1]s AG %[2]s", "AG %[2]s %[1]s", "%[1]s, Amtsgericht %[2]s", "%[1]s, Local Court of %[2]s"}
	for i, p := range ps {
		g.add(evalCase{Kind: "court_written", Query: fmt.Sprintf(wraps[i%len(wraps)], p.Name, p.CourtName()), Want: p.ID, WantName: p.Name})
	}
}

// cutNameCases give an unambiguous name longer than a field length cut
// there in the middle of a word, as ERP exports and supplier lists cut
// it ("Initiative zur Unterstützung von Me").
func (g *evalGen) cutNameCases(n int) {
	lengths := []int{30, 35, 40, 50}
	i := 0
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		l := lengths[i%len(lengths)]
		r := []rune(p.Name)
		ok := g.names[baseKey(p.Name)] == 1 && !p.Removed && len(r) > l+3 &&
			unicode.IsLetter(r[l-1]) && unicode.IsLetter(r[l]) && len(textfold.Tokens(textfold.Fold(string(r[:l])))) >= 3
		if ok {
			i++
		}
		return ok
	})
	for j, p := range ps {
		l := lengths[j%len(lengths)]
		g.add(evalCase{Kind: "name_cut", Query: string([]rune(p.Name)[:l]), Want: p.ID, WantName: p.Name})
	}
}

// abbreviations are words of register names and how lists abbreviate
// them.
var abbreviations = []struct{ word, short string }{
	{"Gebrüder", "Gebr."}, {"Gesellschaft", "Ges."}, {"Verwaltung", "Verw."}, {"Grundstücks", "Grdst."},
	{"Beteiligungs", "Beteil."}, {"Immobilien", "Immob."}, {"Deutsche", "Dt."}, {"International", "Int."},
	{"und", "u."}, {"Steuerberatungsgesellschaft", "StBG"}, {"Wirtschaftsprüfungsgesellschaft", "WPG"},
	{"Rechtsanwaltsgesellschaft", "RA-Ges."},
}

// abbreviatedCases give an unambiguous name with its words abbreviated
// as lists write them ("Gebr. Müller Grdst.-Verw. GmbH"), or written out
// where the register abbreviates them.
func (g *evalGen) abbreviatedCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		_, changed := abbreviate(p.Name)
		return g.names[baseKey(p.Name)] == 1 && !p.Removed && changed && utf8.RuneCountInString(p.Name) < 120
	})
	for _, p := range ps {
		q, _ := abbreviate(p.Name)
		g.add(evalCase{Kind: "name_abbreviated", Query: q, Want: p.ID, WantName: p.Name})
	}
}

// abbreviate swaps every whole word of abbreviations in name for its
// other spelling, and reports whether it swapped any.
func abbreviate(name string) (string, bool) {
	out, changed := name, false
	for _, a := range abbreviations {
		for _, pair := range [][2]string{{a.word, a.short}, {a.short, a.word}} {
			re := regexp.MustCompile(`(^|[\s\-(])` + regexp.QuoteMeta(pair[0]) + `($|[\s\-,)])`)
			if re.MatchString(out) {
				out, changed = re.ReplaceAllString(out, "${1}"+pair[1]+"${2}"), true
				break
			}
		}
	}
	return strings.TrimSpace(out), changed
}
