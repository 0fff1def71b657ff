package reconcile

import (
	"math"
	"strings"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"
)

// Candidate is one reconciliation candidate (0.2 schema
// reconciliation-result-batch).
type Candidate struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        []Type    `json:"type"`
	Score       float64   `json:"score"`
	Match       bool      `json:"match"`
	Features    []Feature `json:"features"`
}

// Feature is one matching feature: a number or a boolean.
type Feature struct {
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// Result is the answer to one query of a batch. A query without a
// candidate says why in Notes and NoteDetails, as a search's
// query_understanding does: 0.2 lets a result carry members of its own,
// and clients that know only "result" pass over them.
type Result struct {
	Result      []Candidate                `json:"result"`
	Notes       []string                   `json:"notes,omitempty"`
	NoteDetails []companydocs.ReasonDetail `json:"note_details,omitempty"`
}

// NoteOnlyUnverified is the note of a query whose matches are all
// unverified records, which reconciliation leaves out; said from the
// catalog as "note.only_unverified", as the resolver's notes are.
const NoteOnlyUnverified = "only_unverified"

// Answer is the result of one query: its candidates, or, when it has
// none, the search's notes said in lang. A query answered by unverified
// records only (left out of the candidates) says so; one whose text was
// unreadable (res nil) says that nothing in it names a company.
func Answer(res *resolver.Result, lang string) Result {
	out := Result{Result: Candidates(res)}
	if len(out.Result) > 0 {
		return out
	}
	switch {
	case res == nil:
		out.NoteDetails = []companydocs.ReasonDetail{{Code: resolver.NoteNothingSearchable}}
	case len(res.Candidates) > 0:
		out.NoteDetails = []companydocs.ReasonDetail{{Code: NoteOnlyUnverified}}
	default:
		out.NoteDetails = res.Understanding.NoteDetails
	}
	for _, d := range out.NoteDetails {
		out.Notes = append(out.Notes, noteText(lang, d))
	}
	return out
}

// Candidates maps a search's answer onto reconciliation candidates, best
// first. Only verified profiles have a profile_id, which is the entity id;
// the others (unverified discovery records) are left out, as nothing can
// be done with them here.
func Candidates(res *resolver.Result) []Candidate {
	out := []Candidate{}
	if res == nil {
		return out
	}
	for _, c := range res.Candidates {
		if c.ProfileID == "" {
			continue
		}
		out = append(out, Candidate{
			ID:          c.ProfileID,
			Name:        c.Name,
			Description: describe(c.Court, c.RegistryNumber, c.City, c.Status),
			Type:        []Type{{ID: TypeCompany, Name: TypeCompanyName}},
			Score:       math.Round(c.Confidence*1000) / 10,
			Match:       IsMatch(c),
			Features:    features(c),
		})
	}
	return out
}

// IsMatch is the one rule of match: labelled exact by the resolver and
// ordering eligible.
func IsMatch(c companydocs.Candidate) bool {
	return c.ConfidenceLabel == companydocs.LabelExact && c.OrderingEligible
}

// describe says court, register number and seat, and a removal.
func describe(court, number, seat, status string) string {
	var parts []string
	if reg := strings.TrimSpace(court + " " + number); reg != "" {
		parts = append(parts, reg)
	}
	if seat != "" {
		parts = append(parts, "Sitz "+seat)
	}
	if status == companydocs.StatusRemoved {
		parts = append(parts, "removed from the register")
	}
	return strings.Join(parts, " · ")
}

// features are the confidence (0..1), the label's exactness, ordering
// eligibility, and one boolean per reason of the confidence (by its
// reason code: register_number_matches, seat_differs, ...), so that a
// client can weigh them its own way.
func features(c companydocs.Candidate) []Feature {
	out := []Feature{
		{ID: "confidence", Value: c.Confidence},
		{ID: "exact", Value: c.ConfidenceLabel == companydocs.LabelExact},
		{ID: "ordering_eligible", Value: c.OrderingEligible},
	}
	seen := map[string]bool{}
	for _, d := range c.ReasonDetails {
		if !seen[d.Code] {
			seen[d.Code] = true
			out = append(out, Feature{ID: d.Code, Value: true})
		}
	}
	return out
}

// SuggestEntities maps a search for a prefix onto entity suggestions,
// skipping the first cursor ones.
func SuggestEntities(res *resolver.Result, cursor int) SuggestResponse {
	out := SuggestResponse{Result: []Suggestion{}}
	for i, c := range Candidates(res) {
		if i < cursor {
			continue
		}
		out.Result = append(out.Result, Suggestion{ID: c.ID, Name: c.Name, Description: c.Description, Notable: c.Type})
	}
	return out
}

// noteText says a note of an answer without candidates in lang.
func noteText(lang string, d companydocs.ReasonDetail) string {
	if d.Code == NoteOnlyUnverified {
		return messages.Say(lang, "note."+NoteOnlyUnverified, nil)
	}
	return resolver.NoteTextIn(lang, d)
}
