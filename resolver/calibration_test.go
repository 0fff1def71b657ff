//go:build !race

package resolver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// TestClueReadings asks for real companies of the embedded sample by the
// clues beside names and numbers and checks the first candidate, its label, the reason
// naming the field that matched and how the query was read.
func TestClueReadings(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	for _, tc := range []struct {
		query, mode string
		first       string // name of the first candidate
		label       string
		reason      string // a reason of the first candidate
		reading     string
	}{
		{query: "Siemensstraße 10 Teningen", first: "Nutzfahrzeugtechnik Dufner GmbH", label: companydocs.LabelPossible,
			reason: "Registered address Siemensstraße 10, 79331 Teningen matches", reading: "address"},
		{query: "Siemensstraße 10, 79331 Teningen", mode: "deep", first: "Nutzfahrzeugtechnik Dufner GmbH", label: companydocs.LabelPossible,
			reason: "Registered address Siemensstraße 10, 79331 Teningen matches", reading: "address"},
		{query: "Peter Schmieder", mode: "deep", first: "Autovermietung Yasmin GmbH", label: companydocs.LabelPossible,
			reason: "Managing director (Geschäftsführer) Peter Schmieder matches", reading: "officer"},
		{query: "Peter Schmieder", first: "Autovermietung Yasmin GmbH", label: companydocs.LabelPossible,
			reason: "Managing director (Geschäftsführer) Peter Schmieder matches", reading: "officer"},
		// one distinctive word: a short query, capped whatever field matched
		{query: "DITTON GmbH", first: "Nutzfahrzeugtechnik Dufner GmbH", label: companydocs.LabelNeedsVerification,
			reason: "Former name DITTON GmbH matches", reading: "former_name"},
		{query: "LEI: 213800QILIUD4ROSUO03", first: "Deutsche Bank Europe GmbH", label: companydocs.LabelExact,
			reason: "LEI 213800QILIUD4ROSUO03 matches"},
		{query: "Firma Nutzfahrzeugtechnik Dufner GmbH aus Teningen", first: "Nutzfahrzeugtechnik Dufner GmbH", label: companydocs.LabelExact,
			reason: "Seat Teningen matches", reading: "name"},
		{query: "Zirngibl Rechtsanwälte Partnerschaft mbB Munchen", first: "Zirngibl Rechtsanwälte Partnerschaft mbB",
			label: companydocs.LabelExact, reason: "Seat München matches", reading: "name"},
		// a person alone is never exact, even with a sole trader of that name
		{query: "Friedrich Stock Duisburg", first: "Friedrich Stock", label: companydocs.LabelPossible, reading: "name"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: tc.query, Mode: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Candidates) == 0 {
				t.Fatal("no candidates")
			}
			c := res.Candidates[0]
			if c.Name != tc.first || c.ConfidenceLabel != tc.label {
				t.Errorf("first %s (%s), want %s (%s)", c.Name, c.ConfidenceLabel, tc.first, tc.label)
			}
			if tc.reason != "" && !slices.Contains(c.ConfidenceReasons, tc.reason) {
				t.Errorf("reasons %q, want %q among them", c.ConfidenceReasons, tc.reason)
			}
			if res.Understanding.Reading != tc.reading {
				t.Errorf("reading %q, want %q", res.Understanding.Reading, tc.reading)
			}
		})
	}
}

// TestSharedDirectorIsCapped: Frank Weis is an officer of three companies
// of the sample in Berlin; his name names none of them.
func TestSharedDirectorIsCapped(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	res, err := resolver.Resolve(context.Background(), gen, resolver.Request{Query: "Frank Weis Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Understanding.Person != "frank weis" {
		t.Errorf("person %q, want frank weis", res.Understanding.Person)
	}
	capped := 0
	for _, c := range res.Candidates {
		if c.Confidence > resolver.ShortQueryCap || c.ConfidenceLabel == companydocs.LabelExact {
			t.Errorf("%s: %.3f %s, want at most %.2f", c.Name, c.Confidence, c.ConfidenceLabel, resolver.ShortQueryCap)
		}
		if slices.ContainsFunc(c.ConfidenceReasons, func(r string) bool {
			return strings.HasPrefix(r, "Frank Weis is an officer of 3 of the companies found")
		}) {
			capped++
		}
	}
	if capped < 3 {
		t.Errorf("%d candidates say why they are capped, want the three companies at least: %+v", capped, res.Candidates)
	}
}
