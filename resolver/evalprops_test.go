//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
	"companydocs/resolver"
)

// propertyEvalKinds are the evaluation's kinds whose query is a company's
// name as a person types it (as registered, with a typo, in lower case,
// without umlauts or form, with noise words): the name a spreadsheet's
// name column holds.
var propertyEvalKinds = map[string]bool{
	"name_exact": true, "name_typo": true, "name_lower": true, "name_umlaut": true, "name_no_form": true,
	"name_form_variant": true, "name_noise": true, "removed": true,
}

// clueSets are the columns a spreadsheet may hold beside the name, each
// case getting one in turn: the seat; the register number with its
// court; an officer; the street and postcode.
var clueSets = []string{"city", "register", "officer", "address"}

// propertyCase is one clue set of one case, in both forms.
type propertyCase struct {
	set, name, text string
	props           resolver.Properties
	want            string
}

// nameForms are the names a case is tried with: as the evaluation types
// it, and shortened as a spreadsheet's short-name column holds it (its
// first two words, without legal form and noise words), which leaves the
// other columns more to decide.
var nameForms = map[string]func(string) string{
	"typed": func(q string) string { return q },
	"short": shortName,
}

var postcode = regexp.MustCompile(`\b\d{5}\b`)

// propertyCaseOf builds the clue set for a case from the real record of
// its answer; false when the record lacks it (no officer, no address).
func propertyCaseOf(name string, c evalCase, p *companydocs.Profile, set string) (propertyCase, bool) {
	pc := propertyCase{set: set, name: name, want: c.Want}
	var clue string
	switch set {
	case "city":
		pc.props.City, clue = p.Seat, p.Seat
	case "register":
		court, ok := register.CourtByCode(p.Ref.Court)
		if !ok || p.Ref.Number == "" {
			return pc, false
		}
		pc.props.RegisterNumber, pc.props.Court = p.Ref.NumberKey(), court.Name
		clue = p.Ref.NumberKey() + " " + court.Name
	case "officer":
		for _, o := range p.Officers {
			if !o.Dismissed && o.EndDate == "" && o.FirstName != "" {
				pc.props.Officer, clue = o.Name, o.Name
				break
			}
		}
	case "address":
		street, rest, ok := strings.Cut(p.Address, ",")
		code := postcode.FindString(rest)
		if ok && code != "" {
			pc.props.Address, pc.props.PostalCode = strings.TrimSpace(street), code
			clue = strings.TrimSpace(street) + " " + code
		}
	}
	if clue == "" {
		return pc, false
	}
	pc.text = name + " " + clue
	return pc, true
}

// TestEvaluationProperties compares, on the evaluation's name cases and
// the real records of their answers, the same clues sent as properties
// (the name as the query, the seat, register number and court, an officer
// or the address as properties) and as one text, with the name as typed
// and shortened: properties must find the answer first at least as often,
// by name form and clue set and in all, and must never label another
// company exact.
func TestEvaluationProperties(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	var cases []propertyCase
	i := 0
	for _, c := range loadEval(t) {
		if !propertyEvalKinds[c.Kind] || c.Want == "" || c.Mode != "" {
			continue
		}
		p, err := gen.Profile(c.Want)
		if err != nil || p == nil {
			t.Fatalf("%s: the answer %s is not in the sample: %v", c.Query, c.Want, err)
		}
		for form, nameOf := range nameForms {
			for n := range clueSets {
				if pc, ok := propertyCaseOf(nameOf(c.Query), c, p, clueSets[(i+n)%len(clueSets)]); ok {
					pc.set = form + " " + pc.set
					cases = append(cases, pc)
					break
				}
			}
		}
		i++
	}
	type tally struct{ n, text, props, textExact, propsExact int }
	bySet := map[string]*tally{}
	for _, pc := range cases {
		text := mustResolve(t, gen, resolver.Request{Query: pc.text})
		props := mustResolve(t, gen, resolver.Request{Query: pc.name, Properties: pc.props})
		form, _, _ := strings.Cut(pc.set, " ")
		for _, k := range []string{form + " all", pc.set} {
			if bySet[k] == nil {
				bySet[k] = &tally{}
			}
			s := bySet[k]
			s.n++
			s.text += hitAt1(text, pc.want)
			s.props += hitAt1(props, pc.want)
			s.textExact += exactAt1(text, pc.want)
			s.propsExact += exactAt1(props, pc.want)
		}
		for _, c := range props.Candidates {
			if c.ConfidenceLabel == companydocs.LabelExact && c.ProfileID != pc.want {
				t.Errorf("%q with %+v: %s is exact, the answer is %s", pc.name, pc.props, c.Name, pc.want)
			}
		}
	}
	keys := make([]string, 0, len(bySet))
	for k := range bySet {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var report strings.Builder
	for _, k := range keys {
		s := bySet[k]
		fmt.Fprintf(&report, "%-15s %3d cases: hit@1 text %.3f, properties %.3f; exact answer text %.3f, properties %.3f\n",
			k, s.n, frac(s.text, s.n), frac(s.props, s.n), frac(s.textExact, s.n), frac(s.propsExact, s.n))
		if s.props < s.text {
			t.Errorf("%s: properties find the answer first in %d of %d cases, one text in %d", k, s.props, s.n, s.text)
		}
	}
	t.Logf("properties against one text:\n%s", report.String())
	for form := range nameForms {
		if all := bySet[form+" all"]; all == nil || all.n < 200 {
			t.Errorf("%s names: fewer than 200 cases", form)
		}
	}
}

func hitAt1(res *resolver.Result, want string) int {
	if len(res.Candidates) > 0 && res.Candidates[0].ProfileID == want {
		return 1
	}
	return 0
}

func exactAt1(res *resolver.Result, want string) int {
	if hitAt1(res, want) == 1 && res.Candidates[0].ConfidenceLabel == companydocs.LabelExact {
		return 1
	}
	return 0
}

func frac(a, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(a) / float64(n)
}
