//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
	"companydocs/resolver"
	"companydocs/textfold"
)

// TestEvaluationNameCarriesItsSeat asks for real companies of the sample
// whose name holds the town of their seat ("AIC Ingenieurgesellschaft für
// Bauplanung Chemnitz GmbH" at Chemnitz), each the only entry with that
// name at that seat, in the three forms lists and users give them: the
// name alone (the town inside it), the town typed after it, and the town
// as the property city (Firma;Ort). In every form the company comes
// first, its name matching as a whole, with its seat, labelled exact.
func TestEvaluationNameCarriesItsSeat(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	companies := namesCarryingSeat(mustSample(t), heldOut(loadEval(t)), 30)
	if len(companies) < 30 {
		t.Fatalf("%d names holding their seat found, want 30", len(companies))
	}
	for _, p := range companies {
		for _, req := range []resolver.Request{
			{Query: p.Name},
			{Query: p.Name + " " + p.Seat},
			{Query: p.Name, Properties: resolver.Properties{City: p.Seat}},
		} {
			res, err := resolver.Resolve(context.Background(), gen, req)
			if err != nil {
				t.Fatalf("%q: %v", req.Query, err)
			}
			if len(res.Candidates) == 0 || res.Candidates[0].ProfileID != p.ID {
				t.Errorf("%q (city %q): %s of %s is not first", req.Query, req.Properties.City, p.Name, p.Seat)
				continue
			}
			first := res.Candidates[0]
			codes := reasonCodes(first)
			if first.ConfidenceLabel != companydocs.LabelExact || !slices.Contains(codes, resolver.ReasonNameMatches) ||
				!slices.Contains(codes, resolver.ReasonSeatMatches) {
				t.Errorf("%q (city %q): %s at %.3f, %s, %v; want exact, its name and seat matching", req.Query, req.Properties.City,
					first.Name, first.Confidence, first.ConfidenceLabel, first.ConfidenceReasons)
			}
		}
	}
}

// namesCarryingSeat are up to n live, verified registry entries of the
// index, spread over the sample, whose name holds every word of their
// seat and at least two other words, each the only entry with its name
// (legal form aside) at its seat. A name with a colon ("..., Inhaber:
// Hartmut Gammelin e.K.") is left out: typed, it reads as the labelled
// lines of a pasted block, a reading of its own.
func namesCarryingSeat(idx *memIndex, out map[string]bool, n int) []*companydocs.Profile {
	atSeat := map[string]int{}
	for _, p := range idx.all {
		atSeat[baseKey(p.Name)+"|"+textfold.Fold(p.Seat)]++
	}
	var found []*companydocs.Profile
	for _, p := range idx.all {
		base, _, _ := register.SplitLegalForm(p.Name)
		seat := textfold.Tokens(textfold.Fold(p.Seat))
		if out[p.ID] || p.Removed || strings.Contains(p.Name, ":") || !p.Verified || p.Source != companydocs.SourceRegistryCache || len(seat) == 0 ||
			len(base) < len(seat)+2 || atSeat[baseKey(p.Name)+"|"+textfold.Fold(p.Seat)] != 1 || !holdsRun(base, seat) {
			continue
		}
		found = append(found, p)
	}
	// spread over the sample, which is ordered by court
	step := max(1, len(found)/n)
	var spread []*companydocs.Profile
	for i := 0; i < len(found) && len(spread) < n; i += step {
		spread = append(spread, found[i])
	}
	return spread
}

// holdsRun reports whether words hold run as consecutive words.
func holdsRun(words, run []string) bool {
	for i := 0; i+len(run) <= len(words); i++ {
		if slices.Equal(words[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// reasonCodes are the codes of a candidate's reasons.
func reasonCodes(c companydocs.Candidate) []string {
	codes := make([]string, len(c.ReasonDetails))
	for i, d := range c.ReasonDetails {
		codes[i] = d.Code
	}
	return codes
}
