// Package imprint builds the blocks people paste into the search box from
// real register records: an imprint, a letter's footer or an e-mail
// signature with the record's name, address, officers and, when asked, its
// register reference in one of the forms imprints use. The lines around
// them (phone, fax, e-mail, web, VAT ID, tax number, bank, greetings,
// opening hours, headings) are made up in the formats people write them.
//
// It is test and benchmark support only: the resolver's evaluation and the
// national benchmark's query set build their pasted blocks here, so that
// both measure the same thing. The companydocs binary does not import it.
package imprint

import (
	"math/rand/v2"
	"regexp"
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// Record is the part of a register record a block is built from.
type Record struct {
	Name string
	Ref  register.Ref
	Seat string
	// Address is the registered address as the register writes it,
	// "Siemensstraße 10, 79331 Teningen" (see AddressPattern).
	Address  string
	Officers []companydocs.Officer
}

// Layout is the kind of text a block is taken from.
type Layout int

// Layouts of a block.
const (
	AnyLayout    Layout = iota // one of the three below, drawn from the random source
	Imprint                    // heading, name, address, contact, persons, register
	LetterFooter               // name and address first, the rest in any order
	Signature                  // greeting, a person, the name after it
)

// Options chooses what a block holds.
type Options struct {
	Layout Layout
	// Register adds the register reference; without it, some blocks name
	// the seat ("Sitz der Gesellschaft: ...").
	Register bool
	// OneLine joins the lines with " · " or " | " instead of line breaks.
	OneLine bool
}

// AddressPattern splits a registered address into street, house number,
// postcode and town.
var AddressPattern = regexp.MustCompile(`^(.+?) (\d+ ?[a-zA-Z]?), (\d{5}) ([^,:;]{2,40})$`)

// Usable reports whether a block can be built from r: it needs a name, a
// seat and an address that AddressPattern splits.
func Usable(r *Record) bool {
	return r.Name != "" && r.Seat != "" && AddressPattern.MatchString(r.Address)
}

// Block lays out one block of r. The draws from rnd are part of the
// contract: the resolver's evaluation set is generated from them, so a
// change of their order changes resolver/testdata. It panics when r is not
// Usable.
func Block(r *Record, rnd *rand.Rand, opts Options) string {
	b := builder{r: r, rnd: rnd}
	lines := b.lines(opts)
	if opts.OneLine {
		return strings.Join(lines, []string{" · ", " | "}[rnd.IntN(2)])
	}
	return strings.Join(lines, "\n")
}

// RealPerson reports whether o is a person with a first and a last name
// as people write them (not "Manuela Gertrud geborene Jentzsch").
func RealPerson(o companydocs.Officer) bool {
	return o.FirstName != "" && o.LastName != "" && len(strings.Fields(o.FirstName)) <= 2 &&
		!strings.Contains(o.FirstName, "geb") && len(strings.Fields(o.LastName)) == 1
}

// builder holds the record and the random source of one block.
type builder struct {
	r   *Record
	rnd *rand.Rand
}

// lines lays out the block's lines in the chosen layout.
func (b builder) lines(opts Options) []string {
	p, rnd := b.r, b.rnd
	m := AddressPattern.FindStringSubmatch(p.Address)
	street, place := m[1]+" "+m[2], m[3]+" "+m[4]
	address := []string{street, place}
	if rnd.IntN(4) == 0 {
		address = []string{street + ", " + place}
	}
	var reg []string
	if opts.Register {
		reg = b.registerLines()
	} else if rnd.IntN(3) == 0 {
		reg = []string{"Sitz der Gesellschaft: " + p.Seat}
	}
	persons := b.personLines()
	noise := b.noiseLines()
	layout := opts.Layout
	if layout == AnyLayout {
		layout = Imprint + Layout(rnd.IntN(3))
	}
	switch layout {
	case Imprint:
		var out []string
		if rnd.IntN(2) == 0 {
			out = append(out, []string{"Impressum", "Angaben gemäß § 5 TMG", "Anbieter"}[rnd.IntN(3)])
		}
		out = append(append(out, p.Name), address...)
		return concat(out, noise[:len(noise)/2], persons, reg, noise[len(noise)/2:])
	case LetterFooter:
		rest := concat(noise, persons, reg)
		rnd.Shuffle(len(rest), func(i, j int) { rest[i], rest[j] = rest[j], rest[i] })
		return concat([]string{p.Name}, address, rest)
	}
	out := []string{[]string{"Mit freundlichen Grüßen", "Viele Grüße", "Beste Grüße", "Best regards"}[rnd.IntN(4)]}
	if o, ok := firstPerson(p); ok {
		out = append(out, o.FirstName+" "+o.LastName, positionWord(o.Position))
	}
	out = append(append(out, p.Name), address...)
	return concat(out, noise, reg, persons)
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// registerWord names the register of a type as imprints do.
func registerWord(t register.Type) string {
	switch t {
	case register.VR:
		return "Vereinsregister"
	case register.GnR:
		return "Genossenschaftsregister"
	case register.PR:
		return "Partnerschaftsregister"
	}
	return "Handelsregister"
}

// courtName is the court's name as the register writes it, or its code
// when the court is unknown.
func courtName(ref register.Ref) string {
	if c, ok := register.CourtByCode(ref.Court); ok {
		return c.Name
	}
	return ref.Court
}

// registerLines write the register reference in one of the forms German
// imprints use.
func (b builder) registerLines() []string {
	p := b.r
	court, num, word := courtName(p.Ref), p.Ref.NumberKey(), registerWord(p.Ref.Type)
	forms := [][]string{
		{"Registergericht: Amtsgericht " + court, "Registernummer: " + num},
		{word + ": " + num + ", AG " + court},
		{"Eingetragen im " + word + " des Amtsgerichts " + court + " unter " + num},
		{"Amtsgericht " + court + " " + num},
		{"Registergericht Amtsgericht " + court, "Registernummer " + num},
		{"Sitz der Gesellschaft: " + p.Seat, "Registergericht: " + court, word + ": " + num},
		{"Registereintrag:", "Eintragung im " + word + ".", "Registergericht: Amtsgericht " + court, "Registernummer: " + num},
	}
	return forms[b.rnd.IntN(len(forms))]
}

// firstPerson is the record's first officer with a first and a last name.
func firstPerson(p *Record) (companydocs.Officer, bool) {
	for _, o := range p.Officers {
		if RealPerson(o) {
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
func (b builder) personLines() []string {
	var names []string
	position := ""
	for _, o := range b.r.Officers {
		if RealPerson(o) && len(names) < 2 {
			name := o.FirstName + " " + o.LastName
			if b.rnd.IntN(6) == 0 {
				name = []string{"Dr. ", "Prof. Dr. ", "Dipl.-Ing. ", "Dipl.-Kfm. "}[b.rnd.IntN(4)] + name
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
		label = []string{"Geschäftsführer", "Geschäftsführung", "Vertreten durch"}[b.rnd.IntN(3)]
	case "vorstand", "vorstandsmitglied", "vorstandsvorsitzender":
		label = "Vorstand"
	case "inhaber", "inhaberin":
		label = "Inhaber"
	}
	return []string{label + ": " + strings.Join(names, []string{", ", " und "}[b.rnd.IntN(2)])}
}

// noiseLines make up contact, tax and bank lines and opening hours, in the
// formats people write them; a few of them per block.
func (b builder) noiseLines() []string {
	p, rnd := b.r, b.rnd
	slug := slugOf(p.Name)
	area := []string{"030", "089", "040", "0221", "069", "0711", "0351", "0341", "0511", "0911"}[rnd.IntN(10)]
	digits := func(n int) string {
		var s strings.Builder
		for range n {
			s.WriteByte(byte('0' + rnd.IntN(10)))
		}
		return s.String()
	}
	// The lines are drawn in this order, each with its own draws: keep it.
	all := []string{
		[]string{"Tel.: " + area + " " + digits(7), "Telefon: +49 (0)" + area[1:] + " " + digits(6) + "-0", "T +49 " + area[1:] + " " + digits(3) + " " + digits(4), "Fon " + area + "/" + digits(6)}[rnd.IntN(4)],
		[]string{"Fax: " + area + " " + digits(7), "Telefax +49 " + area[1:] + " " + digits(6) + "-99", "F " + area + " " + digits(6)}[rnd.IntN(3)],
		[]string{"E-Mail: info@" + slug + ".de", "kontakt@" + slug + ".de", "Mail: office@" + slug + ".com"}[rnd.IntN(3)],
		[]string{"www." + slug + ".de", "Web: https://www." + slug + ".de", "Internet: " + slug + ".de"}[rnd.IntN(3)],
		[]string{"USt-IdNr.: DE" + digits(9), "Umsatzsteuer-Identifikationsnummer gemäß § 27a UStG: DE " + digits(3) + " " + digits(3) + " " + digits(3), "USt-ID DE" + digits(9)}[rnd.IntN(3)],
		[]string{"Steuernummer: " + digits(3) + "/" + digits(3) + "/" + digits(5), "St.-Nr. " + digits(2) + "/" + digits(3) + "/" + digits(5)}[rnd.IntN(2)],
		[]string{"IBAN: DE" + digits(2) + " " + digits(4) + " " + digits(4) + " " + digits(4) + " " + digits(4) + " " + digits(2), "Bankverbindung: Sparkasse " + p.Seat, "BIC: COBADEFFXXX", "Volksbank " + p.Seat + " eG"}[rnd.IntN(4)],
		[]string{"Öffnungszeiten: Mo–Fr 9:00–17:00 Uhr", "Mo.-Do. 8-16 Uhr, Fr. 8-12 Uhr", "Geschäftszeiten: Montag bis Freitag 8.00 - 18.00 Uhr"}[rnd.IntN(3)],
	}
	rnd.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:2+rnd.IntN(len(all)-1)]
}

// slugOf makes a domain name of a company's name: its first word of at
// least three letters, folded.
func slugOf(name string) string {
	for _, t := range textfold.Tokens(textfold.FoldPlain(name)) {
		if len(t) >= 3 {
			return t
		}
	}
	return "firma"
}
