package resolver

import (
	"strings"
	"unicode"

	"companydocs"
	"companydocs/messages"
	"companydocs/textfold"
)

// SaidIn returns the result as an answer to a person says it: the
// candidates' reasons, the notes and the pasted lines in lang (a catalog
// language), and the understanding's Summary, how the query was read, in
// one sentence. r itself is not changed: a result may be shared.
func (r *Result) SaidIn(lang, query string) *Result {
	out := *r
	out.Understanding.Summary = summaryIn(lang, &r.Understanding, query)
	if lang == messages.English {
		return &out
	}
	out.Candidates = make([]companydocs.Candidate, len(r.Candidates))
	for i, c := range r.Candidates {
		if len(c.ReasonDetails) == len(c.ConfidenceReasons) {
			c.ConfidenceReasons = reasonTextsOf(lang, c.ReasonDetails)
		}
		out.Candidates[i] = c
	}
	u := &out.Understanding
	if len(u.NoteDetails) == len(u.Notes) {
		u.Notes = saidAll(lang, u.NoteDetails, NoteTextIn)
	}
	if len(u.LineDetails) == len(u.Lines) {
		u.Lines = saidAll(lang, u.LineDetails, LineTextIn)
	}
	return &out
}

func saidAll(lang string, ds []companydocs.ReasonDetail, say func(string, companydocs.ReasonDetail) string) []string {
	if ds == nil {
		return nil
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = say(lang, d)
	}
	return out
}

// summaryIn says in lang how the query was read: the LEI, the register
// reference with its court, the name words in the spelling the query
// typed them, the legal form and the seat, separated by "; ".
func summaryIn(lang string, u *Understanding, query string) string {
	say := func(key string, args messages.Args) string { return messages.Say(lang, key, args) }
	var parts []string
	if u.Kind == "lei" && u.LEI != "" {
		parts = append(parts, say("understood.lei", messages.Args{"lei": u.LEI}))
	} else if u.LEIValid != nil && !*u.LEIValid {
		parts = append(parts, say("understood.leiInvalid", nil))
	}
	if r := u.RegisterReference; r != nil {
		ref := strings.Join(strings.Fields(r.Type+" "+r.Number+" "+r.Suffix), " ")
		s := say("understood.register", messages.Args{"ref": ref})
		if r.Court != "" {
			s += say("note.atCourt", messages.Args{"court": r.Court})
		} else {
			s += say("understood.noCourt", nil)
		}
		if r.FormerCourt != "" {
			s += say("understood.formerCourt", messages.Args{"court": r.FormerCourt})
		}
		parts = append(parts, s)
	}
	if len(u.NameTokens) > 0 {
		parts = append(parts, say("understood.name", messages.Args{"tokens": typedWords(u.NameTokens, query)}))
	}
	if u.LegalForm != "" {
		parts = append(parts, say("understood.form", messages.Args{"form": u.LegalForm}))
	}
	if u.City != "" {
		parts = append(parts, say("understood.city", messages.Args{"city": u.City}))
	}
	if len(parts) == 0 {
		parts = append(parts, say("understood.text", nil))
	}
	if u.Short {
		parts = append(parts, say("understood.short", nil))
	}
	return strings.Join(parts, "; ")
}

// typedWords gives each folded name token back in the spelling the query
// typed it ("rheinbahn" -> "Rheinbahn"); a token no typed word folds to
// stays as it is.
func typedWords(tokens []string, query string) string {
	typed := map[string]string{}
	for _, w := range strings.FieldsFunc(query, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’'
	}) {
		if f := textfold.Fold(w); f != "" && typed[f] == "" {
			typed[f] = w
		}
	}
	out := make([]string, len(tokens))
	for i, tok := range tokens {
		out[i] = tok
		if w := typed[tok]; w != "" {
			out[i] = w
		}
	}
	return strings.Join(out, " ")
}
