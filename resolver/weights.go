package resolver

// The score, which ranks and labels a candidate and from which its
// confidence is read (calibration.go), is built from named parts so that
// every point of it can be explained. A text candidate adds up to 1.0:
//
//	NameWeight * name similarity       (0 .. 0.80)
//	+ SeatWeight if the seat matches   (0.10)
//	+ LegalFormWeight if forms agree   (0.05)
//	+ VerifiedWeight if verified       (0.05)
//
// minus penalties. A register candidate starts from RegisterNumberWeight and
// adds court, suffix and name evidence. Identifier anchors (a unique live
// register entry at the named court, a valid known LEI) lift the candidate
// to AnchoredConfidence; only anchored candidates can be labelled exact.
const (
	NameWeight      = 0.80
	SeatWeight      = 0.10
	LegalFormWeight = 0.05
	VerifiedWeight  = 0.05

	// RegisterNumberWeight is the confidence of a type+number match alone.
	RegisterNumberWeight = 0.45
	// CourtWeight is added when the named court matches.
	CourtWeight = 0.25
	// SuffixWeight is added when the suffix matches (or both have none).
	SuffixWeight = 0.05
	// RegisterNameWeight scales name evidence given next to a register number.
	RegisterNameWeight = 0.20

	// AnchoredConfidence is the confidence of an identifier-anchored match.
	AnchoredConfidence = 0.99
	// ExactNameSeatConfidence is the confidence of an unambiguous exact
	// normalised name + seat match.
	ExactNameSeatConfidence = 0.96

	// NoCourtCap caps a register number given without a court: the same
	// number exists at many of Germany's register courts.
	NoCourtCap = 0.75
	// SharedNumberCap caps an entry whose number is shared by several
	// entries of the same court (suffixes, former courts).
	SharedNumberCap = 0.70
	// ShortQueryCap caps short ambiguous queries ("Müller", "Bau GmbH",
	// "AG", "Berlin") well below exact and below possible.
	ShortQueryCap = 0.50
	// SecondExactCap caps every anchored candidate after the first, just
	// below ExactThreshold: at most one candidate per response is exact.
	SecondExactCap = ExactThreshold - 0.01
	// UnverifiedCap caps discovery candidates that are not verified.
	UnverifiedCap = 0.55
	// InvalidLEICap caps candidates found by text after an LEI-shaped query
	// failed its checksum.
	InvalidLEICap = 0.50

	// NumberMismatchPenalty applies when numbers in the names differ
	// ("Objekt 1" vs "Objekt 2").
	NumberMismatchPenalty = 0.30
	// NameConflictPenalty applies when the name given next to a register
	// number does not match the entry's name.
	NameConflictPenalty = 0.30

	// FormerNameFactor and OfficerFactor scale evidence from previous names
	// and officers relative to the current name.
	FormerNameFactor = 0.90
	OfficerFactor    = 0.70
	// PersonOfficerFactor replaces OfficerFactor when the query reads as a
	// person's name (known first and last names): an officer with that
	// whole name outweighs a company name holding only the surname.
	PersonOfficerFactor = 0.85
	// AddressFactor scales the share of the query's words found in a
	// registered address (street, house number, postcode, seat): an
	// address alone is at most possible, never exact.
	AddressFactor = 0.85

	// PastedOfficerWeight and PastedAddressWeight are added to a
	// candidate of a pasted block without a register line or LEI when one
	// of its officers bears the name of a person the block names, and when
	// its registered address holds the block's street, house number and
	// postcode: a name with its seat (0.95 with a verified entry) and
	// either reaches PastedTextCap; a name partly matching needs both.
	PastedOfficerWeight = 0.10
	PastedAddressWeight = 0.10
	// PastedTextCap caps every candidate of a pasted block found without a
	// register line or LEI: possible at best, never exact, however well
	// the text matches (text alone never makes a candidate exact).
	PastedTextCap = 0.90

	// PropertyCourtWeight, PropertyAddressWeight and PropertyOfficerWeight
	// are added when a court (given without a register number), an
	// address or an officer given as a property agrees with a candidate
	// (a seat agreeing adds SeatWeight, a legal form LegalFormWeight, as
	// typed ones do). One that disagrees takes PropertyMismatchPenalty
	// away (a seat SeatWeight, a court PropertyCourtWeight, a legal form
	// LegalFormWeight): an address or officer list may be out of date.
	PropertyCourtWeight     = 0.05
	PropertyAddressWeight   = 0.10
	PropertyOfficerWeight   = 0.10
	PropertyMismatchPenalty = 0.05
	// IdentifierConflictPenalty is taken from a candidate that a register
	// number or LEI given as a property does not name, and
	// IdentifierConflictCap caps it: possible at best, never exact,
	// however well its name matches.
	IdentifierConflictPenalty = 0.20
	IdentifierConflictCap     = 0.80
	// NamesakeCap caps a candidate whose legal form or seat contradicts
	// the one asked (a GmbH asked, a KG or "& Co." found; Köln given,
	// Coburg found), unless an identifier names it or an officer, the
	// address or a former name holds the query: the register holds
	// namesakes there (a GmbH beside its GmbH & Co. KG at one seat, a
	// "Müller GmbH" in most towns) that the sample, whose names are
	// unique by construction, lacks, so the evaluation cannot fit what
	// such a contradiction is worth. At it, the label is
	// needs_verification.
	NamesakeCap = 0.50

	// ExactThreshold is the least score an exact candidate has (its
	// confidence must also reach ExactConfidence, score.go).
	ExactThreshold = 0.95
)

// Name-match thresholds: where a name similarity (0..1, see matchName)
// changes what it counts as. They sit on the similarity scale, not the
// confidence scale.
const (
	// fullNameMatch is a similarity that only equal token lists reach:
	// 0.999 rather than 1 so that float rounding of the weighted sums
	// cannot cost an exact match its label.
	fullNameMatch = 0.999
	// closeNameMatch is reached by a spelling variant or one extra generic
	// word, not by a name missing one of the query's significant words.
	closeNameMatch = 0.85
	// partialNameMatch is half the similarity: the name agrees on at least
	// half its weight. Below it a name is described as a weak match, and a
	// former name is no evidence at all, since it no longer identifies the
	// company on its own.
	partialNameMatch = 0.50
	// fullRecall is a recall that every query word reaches: an officer
	// only counts when the whole person's name is in the query, since a
	// surname alone names a family, not a person.
	fullRecall = 0.99
	// conflictingName is the similarity below which a name given next to
	// a register number contradicts the entry (NameConflictPenalty): less
	// than a third of it agrees.
	conflictingName = 0.30

	// recallShare and precisionShare split a name's similarity between
	// the query's words found in the name (what the client asked for) and
	// the name's words found in the query (what the name adds), so that a
	// name with many extra words ranks below one that is just the query.
	recallShare    = 0.6
	precisionShare = 1 - recallShare
)

// Retrieval: how many hits the index hands to the ranking stage.
const (
	// rankWindow hits are asked of the index and ranked together whatever
	// the requested limit: a recall that grew with the limit let the page
	// size decide which candidates came first (limit 5 and limit 20
	// disagreeing). Thirty hold every labelled answer of the evaluation
	// within the first ten candidates; each hit more is a profile loaded
	// and scored in every search (50 cost 25% more CPU per search at 5M
	// than 30, docs/benchmarks-history.md, "Search at 5M").
	rankWindow = 30
	// recallSize is the most hits a search looks at: when the ranked
	// window holds fewer candidates than the page asks for, the hits after
	// it, up to recallSize, are ranked among themselves and follow. A page
	// of N is thus always the first N of a page of MaxLimit.
	recallSize = MaxLimit
	// fieldWindow hits of each search of one field alone (officers,
	// former names) join the ranking: there the answer competes only with
	// matches in the same field, and ranks among the first.
	fieldWindow = 30
)

// Token similarities: how strongly one query token supports one name token.
const (
	simExact      = 1.00 // equal after folding (Müller = Mueller)
	simPlain      = 0.90 // equal after plain folding (Müller = Muller)
	simCompound   = 0.95 // "Mueller Bau" = "Muellerbau"
	simTypo       = 0.80 // within the typo budget, minus simPerEdit per edit beyond the first
	simPerEdit    = 0.10
	simPrefix     = 0.60 // query token is a prefix of at least 4 letters
	weightGeneric = 0.35
	weightStop    = 0.10
)
