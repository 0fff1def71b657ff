package companydocs

// Confidence labels, from strongest to weakest.
const (
	LabelExact             = "exact"
	LabelPossible          = "possible"
	LabelNeedsVerification = "needs_verification"
)

// Candidate is one element of a search result, as the API returns it. The
// first ten fields are those of the interface specification.
type Candidate struct {
	Name              string   `json:"name"`
	City              string   `json:"city"`
	Court             string   `json:"court"`
	RegistryNumber    string   `json:"registry_number"`
	Source            string   `json:"source"`
	ProfileID         string   `json:"profile_id"`
	Confidence        float64  `json:"confidence"`
	ConfidenceLabel   string   `json:"confidence_label"`
	ConfidenceReasons []string `json:"confidence_reasons"`
	OrderingEligible  bool     `json:"ordering_eligible"`

	// DiscoveryCandidateID identifies a discovery candidate (audit context
	// for ordering); empty for registry-cache candidates.
	DiscoveryCandidateID string         `json:"discovery_candidate_id,omitempty"`
	CourtCode            string         `json:"court_code,omitempty"`
	LegalForm            string         `json:"legal_form,omitempty"`
	Status               string         `json:"status"`
	LEI                  string         `json:"lei,omitempty"`
	Documents            []DocumentType `json:"documents"`
	// ReasonDetails are ConfidenceReasons as codes with params, one per
	// sentence and in the same order, so that a client can say them in its
	// own language.
	ReasonDetails []ReasonDetail `json:"reason_details"`

	// Score is the sum of evidence the resolver ranked and labelled the
	// candidate by (resolver/weights.go); Confidence is the probability
	// read off it. Not part of the answer: the calibration of Confidence
	// is fitted on it.
	Score float64 `json:"-"`
}

// ReasonDetail is one confidence reason as a stable code and the values
// its sentence names. The codes and their params are listed in package
// resolver (reasons.go) and in the OpenAPI document.
type ReasonDetail struct {
	Code   string       `json:"code"`
	Params ReasonParams `json:"params"`
}

// ReasonParams are the values the sentence of a confidence reason names.
// Each code sets only the fields its sentence uses; a suffix, position or
// list left out is none.
type ReasonParams struct {
	LEI string `json:"lei,omitempty"`
	// RegisterNumber is type and number as the sentence names them:
	// "HRB 562", or with its suffix where the sentence counts entries.
	RegisterNumber string `json:"register_number,omitempty"`
	// Court and the other unprefixed fields are the entry's, the Query*
	// fields what the query said. Courts are display names.
	Court            string `json:"court,omitempty"`
	QueryCourt       string `json:"query_court,omitempty"`
	FormerCourt      string `json:"former_court,omitempty"`
	QueryFormerCourt string `json:"query_former_court,omitempty"`
	Suffix           string `json:"suffix,omitempty"`
	QuerySuffix      string `json:"query_suffix,omitempty"`
	LegalForm        string `json:"legal_form,omitempty"`
	QueryLegalForm   string `json:"query_legal_form,omitempty"`
	// Entries counts register entries with the number (at the court).
	Entries int    `json:"entries,omitempty"`
	Name    string `json:"name,omitempty"` // the entry's name
	Seat    string `json:"seat,omitempty"`
	// FormerName is the previous name of the entry that matched.
	FormerName string `json:"former_name,omitempty"`
	// Person is an officer's name; Position is the officer's position as
	// the register writes it (German), left out when it names none.
	Person   string `json:"person,omitempty"`
	Position string `json:"position,omitempty"`
	Address  string `json:"address,omitempty"`
	// Percent is the share of the query's words the name agrees with.
	Percent int `json:"percent,omitempty"`
	// Gaps list what keeps a discovery record from being verified, each
	// as a code with params (companydocs.VerificationGap).
	Gaps []VerificationGap `json:"gaps,omitempty"`
	// Companies counts the candidates an officer's name was found at.
	Companies int `json:"companies,omitempty"`
	// Text is a line of a pasted block as it was pasted, or a property's
	// value as given.
	Text string `json:"text,omitempty"`
	// The Query* fields below are what properties given beside the query
	// said (Property names one by its id).
	QuerySeat           string `json:"query_seat,omitempty"`
	QueryAddress        string `json:"query_address,omitempty"`
	QueryRegisterNumber string `json:"query_register_number,omitempty"`
	QueryLEI            string `json:"query_lei,omitempty"`
	Property            string `json:"property,omitempty"`
}

// Status values of a candidate.
const (
	StatusRegistered = "registered"
	StatusRemoved    = "removed"
	StatusUnverified = "unverified"
)

// CandidateStatus is the status a candidate of p shows: unverified, then
// removed, else registered.
func (p *Profile) CandidateStatus() string {
	switch {
	case !p.Verified:
		return StatusUnverified
	case p.Removed:
		return StatusRemoved
	}
	return StatusRegistered
}

// TextQuery is what the resolver asks an index for when no identifier
// anchors the query: folded tokens and optional filters.
type TextQuery struct {
	// NameTerms are folded name tokens (legal-form words removed).
	NameTerms []string
	// LegalFormTerms are folded legal-form tokens, matched with low weight.
	LegalFormTerms []string
	// SeatWords are folded words that may name the company's seat. The
	// resolver passes every name word, since it cannot tell which of them
	// is a city: a profile whose whole seat equals the words together, or
	// whose seat has one of them, scores higher (a boost, never a filter),
	// and a word that is no seat anywhere adds nothing. Without name words
	// the seat alone finds the hits.
	SeatWords []string
	// CourtCode restricts to one register court when set.
	CourtCode string
	// Fuzzy enables typo tolerance scaled to token length.
	Fuzzy bool
	// Deep adds previous names, officers, address tokens and phonetic keys.
	Deep bool
	// Officers and Address add those fields outside deep mode, without
	// its typo and phonetic matches: the resolver sets them when the query
	// reads as a person or an address.
	Officers, Address bool
	// Completes reads the last name term also as the start of a word
	// still being typed ("Rheinb" for "Rheinbahn"): autocompletion.
	Completes bool
	// Only, when set, matches the name terms against that one field alone,
	// without current names, typos or the whole-name clauses: the
	// resolver's further searches for a former name or a person, whose
	// matches would otherwise rank below other companies' name words.
	Only SearchField
	// Discover includes unverified discovery profiles; verified ones are
	// always included (Profile.NeedsDiscover).
	Discover bool
	// Limit is the number of hits wanted.
	Limit int
	// Offset is the number of best hits left out of those Limit (hits a
	// caller already has): their profiles are not loaded.
	Offset int
}

// A SearchField is a field a text query can search alone (TextQuery.Only).
type SearchField string

// The fields a text query can search alone.
const (
	OnlyFormerNames SearchField = "former_names"
	OnlyOfficers    SearchField = "officers"
	OnlyAddress     SearchField = "address"
)

// Hit is a profile found by a text query. The index is the recall stage:
// it hands over the best hits by its own score, best first, and the
// resolver ranks them by its evidence alone, so the index's score is not
// part of the contract.
type Hit struct {
	Profile *Profile
}
