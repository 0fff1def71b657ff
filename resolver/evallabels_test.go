//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// names start with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"companydocs"
	"companydocs/resolver"
	"companydocs/textfold"
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

// TestEvaluationPartnersAreNoGmbH asks for "<surname> GmbH" at the seat
// of real companies of the sample whose name says that partners stand
// behind it ("Walter Müller & Co." at Köln, asked as "Müller GmbH Köln"),
// typed and as a list row (Firma;Ort), where no GmbH of that seat bears
// the surname: the GmbH asked for is not there, and no candidate may
// show more than resolver.PossibleConfidence.
func TestEvaluationPartnersAreNoGmbH(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	asked := partnershipSurnames(mustSample(t), heldOut(loadEval(t)), 12)
	if len(asked) < 12 {
		t.Fatalf("%d companies in \"& Co.\" found, want 12", len(asked))
	}
	for _, a := range asked {
		for _, req := range []resolver.Request{
			{Query: a.surname + " GmbH " + a.seat},
			{Query: a.surname + " GmbH", Properties: resolver.Properties{City: a.seat}},
		} {
			res, err := resolver.Resolve(context.Background(), gen, req)
			if err != nil {
				t.Fatalf("%q: %v", req.Query, err)
			}
			if len(res.Candidates) == 0 {
				continue
			}
			first := res.Candidates[0]
			t.Logf("%q %+v (%s): %s, %s, %.3f %s", req.Query, req.Properties, a.name, first.Name, first.City, first.Confidence, first.ConfidenceLabel)
			if first.Confidence > resolver.PossibleConfidence {
				t.Errorf("%q %+v: first %s (%s) at %.3f, want at most %.2f: %s of %s is no GmbH", req.Query, req.Properties,
					first.Name, first.City, first.Confidence, resolver.PossibleConfidence, a.name, a.seat)
			}
		}
	}
}

// partnerAsked is a surname asked for as a GmbH at a seat where only a
// company in "& Co." bears it.
type partnerAsked struct{ surname, seat, name string }

// partnershipSurnames are up to n companies of the index whose name
// reads as a partnership (resolver.FormOf), in the sample's order, with
// the word before their "& Co." and their seat, where no GmbH of that
// seat bears that word in its name.
func partnershipSurnames(idx *memIndex, out map[string]bool, n int) []partnerAsked {
	bySeat := map[string][]*companydocs.Profile{}
	for _, p := range idx.all {
		bySeat[textfold.Fold(p.Seat)] = append(bySeat[textfold.Fold(p.Seat)], p)
	}
	var asked []partnerAsked
	for _, p := range idx.all {
		if len(asked) == n {
			break
		}
		if out[p.ID] || p.Seat == "" || resolver.FormOf(p) != resolver.PartnershipMark {
			continue
		}
		surname := wordBeforePartners(p.Name)
		folded := textfold.Fold(surname)
		if utf8.RuneCountInString(surname) < 4 || folded == textfold.Fold(p.Seat) || gmbhBearsWord(bySeat[textfold.Fold(p.Seat)], folded) {
			continue
		}
		asked = append(asked, partnerAsked{surname: surname, seat: p.Seat, name: p.Name})
	}
	return asked
}

// wordBeforePartners is the word of a name before its "& Co." ("u.
// Co.", "& Cie."), as written.
func wordBeforePartners(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && r != '-' && r != '&' })
	for i := 2; i < len(words); i++ {
		partners := strings.ToLower(words[i])
		if (partners == "co" || partners == "cie") && (words[i-1] == "&" || words[i-1] == "u" || words[i-1] == "und") {
			return words[i-2]
		}
	}
	return ""
}

// gmbhBearsWord reports whether a GmbH of ps holds the folded word in
// its name.
func gmbhBearsWord(ps []*companydocs.Profile, word string) bool {
	for _, q := range ps {
		if q.LegalForm == "GmbH" && strings.Contains(" "+strings.Join(textfold.Tokens(textfold.Fold(q.Name)), " ")+" ", " "+word+" ") {
			return true
		}
	}
	return false
}
