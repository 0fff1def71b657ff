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
}

// Status values of a candidate.
const (
	StatusRegistered = "registered"
	StatusRemoved    = "removed"
	StatusUnverified = "unverified"
)

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
	// PreviousNames, Officers and Address add those fields outside deep
	// mode, without its typo and phonetic matches: the resolver sets them
	// when the query reads as a former name, a person or an address.
	PreviousNames, Officers, Address bool
	// Discover includes unverified discovery profiles; verified ones are
	// always included (Profile.NeedsDiscover).
	Discover bool
	// Limit is the number of hits wanted.
	Limit int
}

// Hit is a profile found by a text query. The index is the recall stage:
// it hands over the best hits by its own score, best first, and the
// resolver ranks them by its evidence alone, so the index's score is not
// part of the contract.
type Hit struct {
	Profile *Profile
}
