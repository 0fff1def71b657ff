//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// names start with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// TestEvaluationLabelsFollowConfidence asks every query of the evaluation
// set: every candidate labelled exact shows at least
// resolver.ExactConfidence, every one labelled possible more than
// resolver.PossibleConfidence, and every one labelled needs_verification
// at most resolver.PossibleConfidence, but a discovery record not
// verified, which needs verification whatever its confidence.
func TestEvaluationLabelsFollowConfidence(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, c := range loadEval(t) {
		res, err := resolver.Resolve(context.Background(), gen, c.request())
		if err != nil {
			t.Fatalf("%s %q: %v", c.Kind, c.Query, err)
		}
		for i, cand := range res.Candidates {
			if msg := labelDisagrees(cand); msg != "" {
				t.Errorf("%s %q: candidate #%d %s: %s", c.Kind, c.Query, i+1, cand.Name, msg)
			}
		}
	}
}

// labelDisagrees says how a candidate's label disagrees with its
// confidence, "" when it does not.
func labelDisagrees(c companydocs.Candidate) string {
	unverified := c.Source == companydocs.SourceDiscovery && c.ProfileID == ""
	switch {
	case c.ConfidenceLabel == companydocs.LabelExact && c.Confidence < resolver.ExactConfidence:
		return "exact below the exact confidence"
	case c.ConfidenceLabel == companydocs.LabelPossible && c.Confidence <= resolver.PossibleConfidence:
		return "possible at or below the possible confidence"
	case c.ConfidenceLabel == companydocs.LabelPossible && unverified:
		return "possible though not verified"
	case c.ConfidenceLabel == companydocs.LabelNeedsVerification && c.Confidence > resolver.PossibleConfidence && !unverified:
		return "needs_verification above the possible confidence"
	}
	return ""
}

// TestEvaluationCompanyTheDataLacks asks for companies the sample does not
// hold, as users reported them: a chess club beside a company named after
// its town, a name beside a club of its town, a common name as a list row
// (Firma;Ort) with a seat where no company of that name is.
// No first candidate may show more than resolver.PossibleConfidence, nor
// be labelled more than needs_verification.
func TestEvaluationCompanyTheDataLacks(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, req := range []resolver.Request{
		{Query: "Schachclub Steinbach Steinbach (Taunus)"},
		{Query: "Dillinger Freunde Friedrichsdorf"},
		{Query: "Müller GmbH", Properties: resolver.Properties{City: "Köln"}},
		{Query: "Schmidt GmbH", Properties: resolver.Properties{City: "Flensburg"}},
	} {
		res, err := resolver.Resolve(context.Background(), gen, req)
		if err != nil {
			t.Fatalf("%q: %v", req.Query, err)
		}
		if len(res.Candidates) == 0 {
			continue
		}
		first := res.Candidates[0]
		t.Logf("%q %+v: %s, %s, %.3f %s", req.Query, req.Properties, first.Name, first.City, first.Confidence, first.ConfidenceLabel)
		if first.Confidence > resolver.PossibleConfidence || first.ConfidenceLabel != companydocs.LabelNeedsVerification {
			t.Errorf("%q %+v: first %s (%s) at %.3f, %s; want at most %.2f, needs_verification", req.Query, req.Properties,
				first.Name, first.City, first.Confidence, first.ConfidenceLabel, resolver.PossibleConfidence)
		}
	}
}
