package resolver

import (
	"slices"
	"strings"

	"companydocs"
	"companydocs/register"
)

// Understanding tells the client how the query was read.
type Understanding struct {
	// Kind is "lei", "register_reference" or "text".
	Kind string `json:"kind"`
	// LEI is the canonical LEI when the query is one; LEIValid says whether
	// its checksum holds.
	LEI      string `json:"lei,omitempty"`
	LEIValid *bool  `json:"lei_valid,omitempty"`
	// RegisterReference is the detected register reference.
	RegisterReference *RegisterUnderstanding `json:"register_reference,omitempty"`
	LegalForm         string                 `json:"legal_form,omitempty"`
	// City is the seat the best candidate matched in the query.
	City       string   `json:"city,omitempty"`
	NameTokens []string `json:"name_tokens"`
	// Short is set when the query is a short ambiguous clue.
	Short bool `json:"short_query"`
	// Reading is the field of the best candidate that the query matched:
	// "name", "former_name", "officer", "address" or "seat" (text queries).
	Reading string `json:"reading,omitempty"`
	// Person is the person's name the query was read as, Address is set
	// when it holds a street and house number.
	Person  string `json:"person,omitempty"`
	Address bool   `json:"address,omitempty"`
	// IgnoredWords are words around the name that name no company
	// ("Firma", "aus", "Registerauszug").
	IgnoredWords []string `json:"ignored_words,omitempty"`
	// Notes explain what the search could not find; NoteDetails say them
	// as codes with params, one per note and in the same order.
	Notes       []string                   `json:"notes,omitempty"`
	NoteDetails []companydocs.ReasonDetail `json:"note_details,omitempty"`
	// Lines say, for a pasted block, what each line was used as or why it
	// was set aside; LineDetails say them as codes with params (lineTable),
	// one per line and in the same order. A line naming two persons
	// counts once per person.
	Lines       []string                   `json:"lines,omitempty"`
	LineDetails []companydocs.ReasonDetail `json:"line_details,omitempty"`
	// Summary says in one sentence how the query was read, in the
	// language of the request (Result.SaidIn); set in the answers of the
	// search endpoints.
	Summary string `json:"summary,omitempty"`
}

// RegisterUnderstanding is a register reference as understood.
type RegisterUnderstanding struct {
	Type        string `json:"type"`
	Number      string `json:"number"`
	Suffix      string `json:"suffix,omitempty"`
	Court       string `json:"court,omitempty"`
	CourtCode   string `json:"court_code,omitempty"`
	FormerCourt string `json:"former_court,omitempty"`
}

func understand(pq *parsedQuery, ranked []*scored, notes []companydocs.ReasonDetail) Understanding {
	u := Understanding{Kind: "text", NameTokens: append([]string{}, pq.tokens...), Short: pq.isShort(), NoteDetails: notes}
	if pq.leiShape {
		valid := pq.leiErr == nil
		u.LEIValid = &valid
		if valid {
			u.Kind, u.LEI = "lei", string(pq.lei)
		} else {
			u.NoteDetails = append(u.NoteDetails, companydocs.ReasonDetail{Code: NoteLEIChecksumFails})
		}
	}
	if pq.hasRef {
		u.Kind = "register_reference"
		u.RegisterReference = &RegisterUnderstanding{
			Type: string(pq.ref.Type), Number: pq.ref.Number, Suffix: pq.ref.Suffix,
			CourtCode: pq.ref.Court, FormerCourt: courtNameOrEmpty(pq.ref.FormerCourt),
			Court: courtNameOrEmpty(pq.ref.Court),
		}
	}
	if pq.hasForm {
		u.LegalForm = pq.form.Code
	}
	if len(ranked) > 0 && ranked[0].seatMatched {
		u.City = ranked[0].p.Seat
	}
	if len(ranked) > 0 && u.Kind == "text" {
		u.Reading = ranked[0].field
	}
	u.Person = strings.Join(pq.person, " ")
	u.Address = pq.address
	u.IgnoredWords = pq.asideWords()
	if len(ranked) == 0 {
		u.NoteDetails = append(u.NoteDetails, whyNone(pq, u.NoteDetails)...)
	}
	for _, n := range u.NoteDetails {
		u.Notes = append(u.Notes, NoteText(n))
	}
	return u
}

func courtNameOrEmpty(code string) string {
	if code == "" {
		return ""
	}
	if c, ok := register.CourtByCode(code); ok {
		return c.Name
	}
	return code
}

// whyNone says why a search found no candidate, where the notes do not
// say it yet: the name words searched match no company's name
// (name_words_unknown), or every one is too common or too short to tell
// companies apart (words_too_common: the index finds a company by an
// uncommon word of its name, or its whole name); or nothing searchable
// was left once the words around a name were set aside
// (nothing_searchable). An LEI or a register reference that names no
// entry says so in its own note (identifierNotes), and a query that is
// only an LEI's shape has no name words beside it.
func whyNone(pq *parsedQuery, notes []companydocs.ReasonDetail) []companydocs.ReasonDetail {
	switch {
	case len(pq.tokens) > 0 && !slices.ContainsFunc(pq.tokens, isNameWord):
		return []companydocs.ReasonDetail{{Code: NoteNothingSearchable}}
	case len(pq.tokens) > 0 && !pq.leiShape:
		p := companydocs.ReasonParams{Text: typedWords(pq.clean, pq.raw)}
		if pq.distinctiveTokens() == 0 {
			return []companydocs.ReasonDetail{{Code: NoteWordsTooCommon, Params: p}}
		}
		return []companydocs.ReasonDetail{{Code: NoteNameWordsUnknown, Params: p}}
	case !slices.ContainsFunc(notes, func(d companydocs.ReasonDetail) bool { return identifierNotes[d.Code] }):
		return []companydocs.ReasonDetail{{Code: NoteNothingSearchable}}
	}
	return nil
}

// identifierNotes are the notes that say why an LEI or a register
// reference found no entry.
var identifierNotes = map[string]bool{NoteLEIUnknown: true, NoteLEIChecksumFails: true, NoteRegisterEntryUnknown: true}

// isNameWord reports whether a token of the text may be a word of a name:
// not a word around one ("Firma", "aus", "die"; withoutNoise).
func isNameWord(t string) bool {
	return !noiseWords[t] && !articles[t] && !seatWords[t] && !isNoise(t)
}
