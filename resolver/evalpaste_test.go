package resolver_test

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"companydocs"
	"companydocs/resolver"
)

// pasteCases build pasted blocks from real records of the sample: an
// imprint, a letter's footer or an e-mail signature with the record's
// name, address, officers and, for the register kinds, its register
// reference in one of the forms imprints use; the lines around them
// (phone, fax, e-mail, web, VAT ID, tax number, bank, greetings, opening
// hours, headings) are made up in the formats people write them. Blocks
// are multi-line, or joined into one line with " · " or " | ".
func (g *evalGen) pasteCases(n int) {
	streets := map[string]int{}
	for _, p := range g.idx.all {
		if m := addressPattern.FindStringSubmatch(p.Address); m != nil {
			streets[companydocs.Fold(m[1]+" "+m[2]+" "+m[4])]++
		}
	}
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		_, live := g.liveAtCourt(p)
		base, _, _ := companydocs.SplitLegalForm(p.Name)
		return !p.Removed && p.Verified && live == 1 && p.Ref.FormerCourt == "" && g.names[baseKey(p.Name)] == 1 &&
			len(base) >= 1 && p.Seat != "" && addressPattern.MatchString(p.Address)
	})
	kinds := []struct {
		kind              string
		register, oneLine bool
	}{{"paste_register", true, false}, {"paste_text", false, false}, {"paste_register_oneline", true, true}, {"paste_text_oneline", false, true}}
	for i, p := range ps {
		k := kinds[i%len(kinds)]
		lines := g.pasteLines(p, k.register)
		q := strings.Join(lines, "\n")
		if k.oneLine {
			q = strings.Join(lines, []string{" · ", " | "}[g.rnd.IntN(2)])
		}
		if utf8.RuneCountInString(q) > resolver.MaxQueryRunes {
			continue
		}
		g.add(evalCase{Kind: k.kind, Query: q, Want: p.ID, WantName: p.Name, WantExact: k.register, NoExact: !k.register})
	}
}

// pasteLines lays out one block in one of three layouts, with the
// register lines or without.
func (g *evalGen) pasteLines(p *companydocs.Profile, register bool) []string {
	m := addressPattern.FindStringSubmatch(p.Address)
	street, place := m[1]+" "+m[2], m[3]+" "+m[4]
	address := []string{street, place}
	if g.rnd.IntN(4) == 0 {
		address = []string{street + ", " + place}
	}
	var reg []string
	if register {
		reg = g.registerLines(p)
	} else if g.rnd.IntN(3) == 0 {
		reg = []string{"Sitz der Gesellschaft: " + p.Seat}
	}
	persons := g.personLines(p)
	noise := g.noiseLines(p)
	switch g.rnd.IntN(3) {
	case 0: // imprint: heading, name, address, contact, persons, register
		var out []string
		if g.rnd.IntN(2) == 0 {
			out = append(out, []string{"Impressum", "Angaben gemäß § 5 TMG", "Anbieter"}[g.rnd.IntN(3)])
		}
		out = append(append(out, p.Name), address...)
		return slicesConcat(out, noise[:len(noise)/2], persons, reg, noise[len(noise)/2:])
	case 1: // letter footer: name and address first, the rest in any order
		rest := slicesConcat(noise, persons, reg)
		g.rnd.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		return slicesConcat([]string{p.Name}, address, rest)
	}
	// e-mail signature: greeting, a person, the name after it
	out := []string{[]string{"Mit freundlichen Grüßen", "Viele Grüße", "Beste Grüße", "Best regards"}[g.rnd.IntN(4)]}
	if o, ok := firstPerson(p); ok {
		out = append(out, o.FirstName+" "+o.LastName, positionWord(o.Position))
	}
	out = append(append(out, p.Name), address...)
	return slicesConcat(out, noise, reg, persons)
}

func slicesConcat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// registerWord names the register of a type as imprints do.
func registerWord(t companydocs.RegisterType) string {
	switch t {
	case companydocs.VR:
		return "Vereinsregister"
	case companydocs.GnR:
		return "Genossenschaftsregister"
	case companydocs.PR:
		return "Partnerschaftsregister"
	}
	return "Handelsregister"
}

// registerLines writes the register reference in one of the forms German
// imprints use.
func (g *evalGen) registerLines(p *companydocs.Profile) []string {
	court, num, word := p.CourtName(), p.Ref.NumberKey(), registerWord(p.Ref.Type)
	forms := [][]string{
		{"Registergericht: Amtsgericht " + court, "Registernummer: " + num},
		{word + ": " + num + ", AG " + court},
		{"Eingetragen im " + word + " des Amtsgerichts " + court + " unter " + num},
		{"Amtsgericht " + court + " " + num},
		{"Registergericht Amtsgericht " + court, "Registernummer " + num},
		{"Sitz der Gesellschaft: " + p.Seat, "Registergericht: " + court, word + ": " + num},
		{"Registereintrag:", "Eintragung im " + word + ".", "Registergericht: Amtsgericht " + court, "Registernummer: " + num},
	}
	return forms[g.rnd.IntN(len(forms))]
}

// firstPerson is the record's first officer with a first and a last name.
func firstPerson(p *companydocs.Profile) (companydocs.Officer, bool) {
	for _, o := range p.Officers {
		if realPerson(o) {
			return o, true
		}
	}
	return companydocs.Officer{}, false
}

// positionWord is the position as a signature writes it.
func positionWord(position string) string {
	if position == "" {
		return "Geschäftsführer"
	}
	return position
}

// personLines name up to two officers of the record under a label that
// fits their position, some with a title.
func (g *evalGen) personLines(p *companydocs.Profile) []string {
	var names []string
	position := ""
	for _, o := range p.Officers {
		if realPerson(o) && len(names) < 2 {
			name := o.FirstName + " " + o.LastName
			if g.rnd.IntN(6) == 0 {
				name = []string{"Dr. ", "Prof. Dr. ", "Dipl.-Ing. ", "Dipl.-Kfm. "}[g.rnd.IntN(4)] + name
			}
			names = append(names, name)
			if position == "" {
				position = o.Position
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	label := "Vertreten durch"
	switch strings.ToLower(position) {
	case "geschäftsführer", "geschäftsführerin":
		label = []string{"Geschäftsführer", "Geschäftsführung", "Vertreten durch"}[g.rnd.IntN(3)]
	case "vorstand", "vorstandsmitglied", "vorstandsvorsitzender":
		label = "Vorstand"
	case "inhaber", "inhaberin":
		label = "Inhaber"
	}
	return []string{label + ": " + strings.Join(names, []string{", ", " und "}[g.rnd.IntN(2)])}
}

// noiseLines make up contact, tax and bank lines, a greeting and opening
// hours, in the formats people write them; a few of them per block.
func (g *evalGen) noiseLines(p *companydocs.Profile) []string {
	slug := slugOf(p.Name)
	area := []string{"030", "089", "040", "0221", "069", "0711", "0351", "0341", "0511", "0911"}[g.rnd.IntN(10)]
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + g.rnd.IntN(10)))
		}
		return b.String()
	}
	all := []string{
		[]string{"Tel.: " + area + " " + digits(7), "Telefon: +49 (0)" + area[1:] + " " + digits(6) + "-0", "T +49 " + area[1:] + " " + digits(3) + " " + digits(4), "Fon " + area + "/" + digits(6)}[g.rnd.IntN(4)],
		[]string{"Fax: " + area + " " + digits(7), "Telefax +49 " + area[1:] + " " + digits(6) + "-99", "F " + area + " " + digits(6)}[g.rnd.IntN(3)],
		[]string{"E-Mail: info@" + slug + ".de", "kontakt@" + slug + ".de", "Mail: office@" + slug + ".com"}[g.rnd.IntN(3)],
		[]string{"www." + slug + ".de", "Web: https://www." + slug + ".de", "Internet: " + slug + ".de"}[g.rnd.IntN(3)],
		[]string{"USt-IdNr.: DE" + digits(9), "Umsatzsteuer-Identifikationsnummer gemäß § 27a UStG: DE " + digits(3) + " " + digits(3) + " " + digits(3), "USt-ID DE" + digits(9)}[g.rnd.IntN(3)],
		[]string{"Steuernummer: " + digits(3) + "/" + digits(3) + "/" + digits(5), "St.-Nr. " + digits(2) + "/" + digits(3) + "/" + digits(5)}[g.rnd.IntN(2)],
		[]string{"IBAN: DE" + digits(2) + " " + digits(4) + " " + digits(4) + " " + digits(4) + " " + digits(4) + " " + digits(2), "Bankverbindung: Sparkasse " + p.Seat, "BIC: COBADEFFXXX", "Volksbank " + p.Seat + " eG"}[g.rnd.IntN(4)],
		[]string{"Öffnungszeiten: Mo–Fr 9:00–17:00 Uhr", "Mo.-Do. 8-16 Uhr, Fr. 8-12 Uhr", "Geschäftszeiten: Montag bis Freitag 8.00 - 18.00 Uhr"}[g.rnd.IntN(3)],
	}
	g.rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:2+g.rnd.IntN(len(all)-1)]
}

// slugOf makes a domain name of a company's name: its first word of at
// least three letters, folded.
func slugOf(name string) string {
	for _, t := range companydocs.Tokens(companydocs.FoldPlain(name)) {
		if len(t) >= 3 {
			return t
		}
	}
	return "firma"
}

// directorTypoCases ask for a company by its officer's name with one typo
// (a letter replaced, dropped or added, never the first) in standard mode,
// where the person is an officer of one company of the sample.
func (g *evalGen) directorTypoCases(n int) {
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
	ps := g.pick(n, func(p *companydocs.Profile) bool {
		if len(p.Officers) == 0 || !realPerson(p.Officers[0]) || people[personKey(p.Officers[0])] != 1 {
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
