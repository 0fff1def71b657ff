package resolver

import (
	"sort"

	"companydocs"
)

// A candidate's confidence is the probability that it is the company
// meant. The score (the weights of weights.go, which rank and label the
// candidates) is read through a table fitted on the evaluation set
// (calibration_table.go, written by `make calibrate` from the rows in
// testdata/calibration): isotonic regression of "found right" on the
// score, one table for the first candidate of an answer and one for the
// candidates after it, whose chance is lower at the same score since
// something outranks them. Both tables are monotone, so the order of the
// candidates is the score's, and so are the labels.

// A calibrationPoint is a score and the probability it maps to; between
// two points the probability is interpolated linearly, outside them it is
// the nearest point's.
type calibrationPoint struct {
	score, probability float64
}

// confidenceCeilings are held on the confidence after the mapping, by the
// code of the reason that says why: the caps that stand for an ambiguity
// the evaluation set cannot label - a short query, or a person who is an
// officer of several companies found (the sample's names are unique by
// construction, the register's are not), a register number without a
// court or shared at one court, text after an LEI whose checksum fails -
// and a name or entry that an identifier given contradicts.
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

// calibratedConfidence is the confidence a candidate shows; first is set
// for the first candidate of the answer.
func calibratedConfidence(s *scored, first bool) float64 {
	return min(fittedCalibration.probability(s.confidence, first), confidenceCeiling(s.reasons))
}

// A calibration is a pair of tables: one for the first candidate of an
// answer, one for those after it.
type calibration struct {
	first, later []calibrationPoint
}

var fittedCalibration = calibration{firstCandidateCalibration, laterCandidateCalibration}

// probability is a score's probability of being right; a later candidate
// never gets more than a first one would at its score.
func (c calibration) probability(score float64, first bool) float64 {
	p := interpolate(c.first, score)
	if !first {
		p = min(p, interpolate(c.later, score))
	}
	return p
}

// confidenceCeiling is the least ceiling the reasons name, 1 for none.
func confidenceCeiling(reasons []companydocs.ReasonDetail) float64 {
	ceiling := 1.0
	for _, r := range reasons {
		if c, ok := confidenceCeilings[r.Code]; ok {
			ceiling = min(ceiling, c)
		}
	}
	return ceiling
}

// interpolate reads a score's probability off a table sorted by score;
// without a table (none fitted yet) it is the score.
func interpolate(table []calibrationPoint, score float64) float64 {
	if len(table) == 0 {
		return score
	}
	i := sort.Search(len(table), func(i int) bool { return table[i].score >= score })
	switch {
	case i == 0:
		return table[0].probability
	case i == len(table):
		return table[len(table)-1].probability
	}
	lo, hi := table[i-1], table[i]
	return lo.probability + (hi.probability-lo.probability)*(score-lo.score)/(hi.score-lo.score)
}
