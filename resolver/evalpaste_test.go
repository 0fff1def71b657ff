package resolver_test

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"companydocs"
	"companydocs/internal/imprint"
	"companydocs/register"
	"companydocs/resolver"
)

// pasteCases build pasted blocks from real records of the sample (package
// imprint lays them out): an imprint, a letter's footer or an e-mail
// signature, with the register reference for the register kinds. Blocks
// are multi-line, or joined into one line with " · " or " | ".
func (g *evalGen) pasteCases(n int) {
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		_, live := g.liveAtCourt(p)
		base, _, _ := register.SplitLegalForm(p.Name)
		return !p.Removed && p.Verified && live == 1 && p.Ref.FormerCourt == "" && g.names[baseKey(p.Name)] == 1 &&
			len(base) >= 1 && imprint.Usable(imprintRecord(p))
	})
	kinds := []struct {
		kind              string
		register, oneLine bool
	}{{"paste_register", true, false}, {"paste_text", false, false}, {"paste_register_oneline", true, true}, {"paste_text_oneline", false, true}}
	for i, p := range ps {
		k := kinds[i%len(kinds)]
		q := imprint.Block(imprintRecord(p), g.rnd, imprint.Options{Register: k.register, OneLine: k.oneLine})
		if utf8.RuneCountInString(q) > resolver.MaxQueryRunes {
			continue
		}
		g.add(evalCase{Kind: k.kind, Query: q, Want: p.ID, WantName: p.Name, WantExact: k.register, NoExact: !k.register})
	}
}

// imprintRecord is the part of a profile a pasted block is built from.
func imprintRecord(p *companydocs.Profile) *imprint.Record {
	return &imprint.Record{Name: p.Name, Ref: p.Ref, Seat: p.Seat, Address: p.Address, Officers: p.Officers}
}

// directorTypoCases ask for a company by its officer's name with one typo
// (a letter replaced, dropped or added, never the first) in standard mode,
// where the person is an officer of one company of the sample.
func (g *evalGen) directorTypoCases(n int) {
	people := g.companiesPerPerson()
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		if len(p.Officers) == 0 || !imprint.RealPerson(p.Officers[0]) || people[personKey(p.Officers[0])] != 1 {
			return false
		}
		return utf8.RuneCountInString(p.Officers[0].LastName) >= 4 && utf8.RuneCountInString(strings.Fields(p.Officers[0].FirstName)[0]) >= 4
	})
	for i, p := range ps {
		o := p.Officers[0]
		first, last := o.FirstName, o.LastName
		if i%3 == 2 {
			first = oneTypo(first, g.rnd)
		} else {
			last = oneTypo(last, g.rnd)
		}
		g.add(evalCase{Kind: "director_typo", Query: first + " " + last, Want: p.ID, WantName: p.Name, NoExact: true})
	}
}

// oneTypo makes one edit in the first word of s, after its first letter:
// a letter replaced by a neighbour on the keyboard, dropped or doubled.
func oneTypo(s string, rnd *rand.Rand) string {
	words := strings.Fields(s)
	r := []rune(words[0])
	i := 1 + rnd.IntN(len(r)-1)
	switch rnd.IntN(3) {
	case 0:
		r[i] = keyboardNeighbour(r[i], rnd)
	case 1:
		r = append(r[:i], r[i+1:]...)
	default:
		r = append(r[:i+1], r[i:]...)
	}
	words[0] = string(r)
	return strings.Join(words, " ")
}

// keyboardRows are the letter rows of a German keyboard.
var keyboardRows = []string{"qwertzuiopü", "asdfghjklöä", "yxcvbnm"}

func keyboardNeighbour(c rune, rnd *rand.Rand) rune {
	for _, row := range keyboardRows {
		rs := []rune(row)
		for i, x := range rs {
			if x != c {
				continue
			}
			if i == 0 || i+1 < len(rs) && rnd.IntN(2) == 0 {
				return rs[i+1]
			}
			return rs[i-1]
		}
	}
	return 'e'
}
