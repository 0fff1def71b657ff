package index

import (
	"strings"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// document is what bleve indexes for one profile. Every text value is
// already folded and tokenised by the root package, so that the index sees
// exactly the tokens the resolver puts into a TextQuery. The json tags are
// the field names of the mapping, which indexes a document exactly like
// bleveDocument does.
type document struct {
	Name          string   `json:"name"`
	NamePlain     string   `json:"name_plain,omitempty"`
	NameForm      string   `json:"name_form,omitempty"`
	NameKey       []string `json:"name_key,omitempty"`
	NameBase      []string `json:"name_base,omitempty"`
	Seat          string   `json:"seat,omitempty"`
	SeatKey       []string `json:"seat_key,omitempty"`
	PreviousNames []string `json:"previous_names,omitempty"`
	Officers      []string `json:"officers,omitempty"`
	Address       string   `json:"address,omitempty"`
	Phonetic      string   `json:"phonetic,omitempty"`
	Court         []string `json:"court,omitempty"`
	Source        string   `json:"source"`
}

// newDocument derives the index document of p.
func newDocument(p *companydocs.Profile) *document {
	base, form := nameParts(p.Name)
	d := &document{
		Name:      strings.Join(base, " "),
		NamePlain: strings.Join(plainVariants(p.Name, form), " "),
		NameForm:  nameFormTerms(base, form.Code),
		Seat:      textfold.Fold(p.Seat),
		Address:   textfold.Fold(p.Address),
		Phonetic:  phonetics(base),
		Court:     courtCodes(p.Ref.Court, p.Ref.FormerCourt),
		Source:    sourceTerm(p),
	}
	// register.NameKey(p.Name), without splitting the name again
	d.NameKey = []string{d.Name + "|" + form.Code}
	d.NameBase = nonEmpty(d.Name)
	d.SeatKey = nonEmpty(d.Seat)
	for _, n := range p.PreviousNames {
		d.PreviousNames = append(d.PreviousNames, textfold.Fold(n))
	}
	for _, o := range p.Officers {
		d.Officers = append(d.Officers, textfold.Fold(officerName(o)))
	}
	return d
}

// nameParts returns the folded name tokens without the legal form, and the
// legal form.
func nameParts(name string) ([]string, register.LegalForm) {
	base, form, ok := register.SplitLegalForm(name)
	if !ok && len(base) == 0 {
		base = textfold.Tokens(textfold.Fold(name))
	}
	return base, form
}

// plainVariants returns the FoldPlain spelling (ä -> a) of the name tokens
// outside the legal form, only where it differs from the Fold spelling: a
// query typed without umlauts ("Muller") then finds "Müller" through this
// field, with less weight than an exact spelling.
func plainVariants(name string, form register.LegalForm) []string {
	if isASCII(name) {
		// no umlauts: both spellings are the same
		return nil
	}
	folded := textfold.Tokens(textfold.Fold(name))
	plain := textfold.Tokens(textfold.FoldPlain(name))
	if len(folded) != len(plain) {
		return nil
	}
	formStart := len(folded)
	if n := len(form.Words); n > 0 && n <= len(folded) && equalTokens(folded[len(folded)-n:], form.Words) {
		formStart = len(folded) - n
	}
	var out []string
	for i := 0; i < formStart; i++ {
		if plain[i] != folded[i] {
			out = append(out, plain[i])
		}
	}
	return out
}

// nameFormTerm pairs a name token with a legal-form code, so that a query
// can prefer names with its legal form at the cost of a name-token lookup
// (a clause on the legal form alone would walk the postings of every GmbH).
func nameFormTerm(token, code string) string {
	return token + "|" + strings.ToLower(strings.ReplaceAll(code, " ", ""))
}

func nameFormTerms(base []string, code string) string {
	if code == "" {
		return ""
	}
	terms := make([]string, len(base))
	for i, t := range base {
		terms[i] = nameFormTerm(t, code)
	}
	return strings.Join(terms, " ")
}

func equalTokens(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// sourceVerifiedDiscovery is the source term of a verified discovery
// profile: searches without Discover exclude the term "discovery" only,
// so that a verified discovery profile is found by its name like a
// registry-cache one.
const sourceVerifiedDiscovery = "discovery_verified"

func sourceTerm(p *companydocs.Profile) string {
	if p.Source == companydocs.SourceDiscovery && !p.NeedsDiscover() {
		return sourceVerifiedDiscovery
	}
	return p.Source
}

func phonetics(tokens []string) string {
	codes := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if c := textfold.Phonetic(t); c != "" {
			codes = append(codes, c)
		}
	}
	return strings.Join(codes, " ")
}

func officerName(o companydocs.Officer) string {
	if o.Name != "" {
		return o.Name
	}
	return strings.TrimSpace(o.FirstName + " " + o.LastName)
}

// courtCodes lists the codes a court filter matches: the code as stored and
// the canonical code of the court table, for the court and the former court.
func courtCodes(codes ...string) []string {
	var out []string
	add := func(c string) {
		for _, have := range out {
			if have == c {
				return
			}
		}
		out = append(out, c)
	}
	for _, code := range codes {
		if code == "" {
			continue
		}
		add(code)
		if c, ok := register.CourtByCode(code); ok && c.Code != "" {
			add(c.Code)
		}
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
