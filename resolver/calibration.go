package resolver

import (
	"math"

	"companydocs"
)

// A candidate's confidence is the probability that it is the company
// meant, whether or not the index holds that company: users bring
// companies the data lacks (a club, a shop, a company registered last
// week), and then no candidate is the one meant, however the candidates
// compare among themselves. It is read off a logistic model (its weights
// in calibration_table.go, written by `make calibrate` from the rows in
// testdata/calibration), fitted on the evaluation set, which holds
// queries for companies held out of the index beside those it holds.
//
// The model's features say first how well the candidate itself matches
// the query, as its reasons say: how much of the name agrees (one feature
// per level of the name's reason, the partly matching one scaled by the
// share of the query's words found), whether the seat given agrees, or a
// seat, court, address or officer given differs, whether the legal form given agrees or differs, whether an
// identifier anchors it or contradicts it, whether another field (an
// officer, the address, a former name) holds the query. Only then what
// ranks around it: its place (first or later), the score, and the margin
// over the runner-up (for the first; below the first, for a later one),
// which counts only where the candidate matches well (its name whole,
// closely, or in three quarters of the query's words, an identifier, an
// officer, the address or a former name): a lead over weak rivals says
// nothing of a weak match.
//
// The score (weights.go) still ranks the candidates; the confidence never
// rises down a page (a candidate never shows more than the one above it),
// and the caps of confidenceCeilings hold it below their value.

// Features of the confidence model, each a number the candidate's score
// and reasons give (confidenceFeatures).
const (
	featBias         = iota
	featNameWhole    // the name matches as a whole (name_matches), or as far as a cut name goes (name_starts_as_cut)
	featNameClose    // the name matches closely (name_matches_closely)
	featNameContains // the name holds every word of the query (name_contains_query)
	featNamePartly   // the share of the query's words the name holds, when it matches partly
	featNameWeak     // the name matches weakly or not at all
	featOtherField   // an officer or the address holds the query
	featFormerName   // a former name matches
	featSeatAgrees   // the seat given is the candidate's
	featGivenDiffers // a seat, court, address or officer given is not the candidate's
	featFormAgrees   // the legal form given is the candidate's
	featFormDiffers  // a legal form given is not the candidate's
	featIdentified   // an identifier names it: a register number at its court, an LEI, a unique name and seat
	featNumberOnly   // a register number matches without its court
	featContradicted // a register number, LEI or name given contradicts it
	featRemoved      // removed from the register
	featFirst        // first in the answer
	featScore        // the score (weights.go), caps applied
	featMargin       // the margin over the runner-up, where the candidate matches well
	numFeatures
)

// featureNames name the features in the fitted table.
var featureNames = [numFeatures]string{
	"bias", "name_whole", "name_close", "name_contains", "name_partly", "name_weak", "other_field", "former_name",
	"seat_agrees", "given_differs", "form_agrees", "form_differs", "identified", "number_only",
	"contradicted", "removed", "first", "score", "margin_if_well_matched",
}

// confidenceWeights are the logistic model's weights, one per feature.
type confidenceWeights [numFeatures]float64

// A confidenceInput is what a candidate's confidence is read from: its
// score, its reasons, whether it is first, and its margin (for the first
// the score less the runner-up's, without one its score; for a later one
// its score less the first's).
type confidenceInput struct {
	score, margin float64
	first         bool
	reasons       []companydocs.ReasonDetail
}

// confidenceFeatures are the model's features of a candidate.
func confidenceFeatures(in confidenceInput) [numFeatures]float64 {
	var x [numFeatures]float64
	x[featBias], x[featScore] = 1, in.score
	if in.first {
		x[featFirst] = 1
	}
	numberMatches, courtMatches := false, false
	for _, r := range in.reasons {
		if f, ok := reasonFeature[r.Code]; ok {
			x[f] = 1
		}
		switch r.Code {
		case ReasonNameMatchesPartly:
			x[featNamePartly] = float64(r.Params.Percent) / 100
		case ReasonRegisterNumberMatches:
			numberMatches = true
		case ReasonCourtMatches:
			courtMatches = true
		}
	}
	switch {
	case numberMatches && courtMatches:
		x[featIdentified] = 1
	case numberMatches:
		x[featNumberOnly] = 1
	}
	if x[featNameWhole]+x[featNameClose]+x[featNameContains]+x[featIdentified]+x[featOtherField]+x[featFormerName] > 0 ||
		x[featNamePartly] >= wellMatchedName {
		x[featMargin] = max(-marginBound, min(marginBound, in.margin))
	}
	return x
}

// reasonFeature is the feature a reason sets, where the reason alone says
// it (a name matching partly sets its share of the query's words, and a
// register number identifies only with its court: confidenceFeatures).
var reasonFeature = map[string]int{
	ReasonNameMatches: featNameWhole, ReasonNameStartsAsCut: featNameWhole,
	ReasonNameMatchesClosely: featNameClose,
	ReasonNameContainsQuery:  featNameContains,
	ReasonNameMatchesWeakly:  featNameWeak, ReasonNameDoesNotMatch: featNameWeak,
	ReasonOfficerMatches: featOtherField, ReasonAddressMatches: featOtherField,
	ReasonFormerNameMatches: featFormerName,
	ReasonSeatMatches:       featSeatAgrees,
	ReasonSeatDiffers:       featGivenDiffers, ReasonCourtDiffers: featGivenDiffers, ReasonAddressDiffers: featGivenDiffers, ReasonOfficerNotFound: featGivenDiffers,
	ReasonLegalFormMatches:     featFormAgrees,
	ReasonLegalFormDiffers:     featFormDiffers,
	ReasonOnlyLiveEntryAtCourt: featIdentified, ReasonLEIMatches: featIdentified, ReasonOnlyEntryNameSeat: featIdentified,
	ReasonRegisterNumberDiffers: featContradicted, ReasonLEIDiffers: featContradicted, ReasonNameConflict: featContradicted,
	ReasonRemoved: featRemoved,
}

const (
	// marginBound bounds the margin the model reads: beyond it a lead
	// says nothing more.
	marginBound = 0.5
	// wellMatchedName is the least share of the query's words a name
	// matching partly holds for its margin to count (a typo past the
	// budget, a name cut at a field's length): below it, a lead over the
	// runner-up is a lead among weak matches.
	wellMatchedName = 0.75
)

// probability is the model's probability for features x.
func (w confidenceWeights) probability(x [numFeatures]float64) float64 {
	z := 0.0
	for i, v := range x {
		z += w[i] * v
	}
	return 1 / (1 + math.Exp(-z))
}

// confidenceCeilings are held on the confidence after the model, by the
// code of the reason that says why: the caps that stand for an ambiguity
// the evaluation set cannot label - a short query, or a person who is an
// officer of several companies found (the sample's names are unique by
// construction, the register's are not), a register number without a
// court or shared at one court, text after an LEI whose checksum fails -
// and a name or entry that an identifier given contradicts. A legal form
// or seat that contradicts a candidate holds it too (namesakeContradicts).
var confidenceCeilings = map[string]float64{
	ReasonShortQueryCap:         ShortQueryCap,
	ReasonSharedOfficerCap:      ShortQueryCap,
	ReasonNoCourtCap:            NoCourtCap,
	ReasonSharedNumberCap:       SharedNumberCap,
	ReasonInvalidLEICap:         InvalidLEICap,
	ReasonNameConflict:          IdentifierConflictCap,
	ReasonRegisterNumberDiffers: IdentifierConflictCap,
	ReasonLEIDiffers:            IdentifierConflictCap,
}

// calibratedConfidence is the confidence of a candidate, before the page
// holds it at the one above.
func calibratedConfidence(in confidenceInput) float64 {
	return min(fittedConfidence.probability(confidenceFeatures(in)), confidenceCeiling(in.reasons))
}

// confidenceCeiling is the least ceiling the reasons name, 1 for none.
func confidenceCeiling(reasons []companydocs.ReasonDetail) float64 {
	ceiling := 1.0
	for _, r := range reasons {
		if c, ok := confidenceCeilings[r.Code]; ok {
			ceiling = min(ceiling, c)
		}
	}
	if namesakeContradicts(reasons) {
		ceiling = min(ceiling, NamesakeCap)
	}
	return ceiling
}

// namesakeContradicts reports whether the legal form or seat asked
// contradicts a candidate that nothing but its name speaks for: no
// identifier names it, and no officer, address or former name holds the
// query (a company renamed, or moved with its officers, is still itself).
// Its namesake of that form or seat may be the company meant (NamesakeCap).
func namesakeContradicts(reasons []companydocs.ReasonDetail) bool {
	contradicts := false
	for _, r := range reasons {
		switch r.Code {
		case ReasonSeatDiffers, ReasonLegalFormDiffers:
			contradicts = true
		case ReasonRegisterNumberMatches, ReasonLEIMatches, ReasonOfficerMatches, ReasonAddressMatches, ReasonFormerNameMatches:
			return false
		}
	}
	return contradicts
}
