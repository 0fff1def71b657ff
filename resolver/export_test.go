package resolver

import (
	"context"
	"slices"

	"companydocs"
)

// ReasonCodes returns every reason code, sorted.
func ReasonCodes() []string { return sortedKeys(reasonTable) }

// NoteCodes returns every note code, sorted.
func NoteCodes() []string { return sortedKeys(noteTable) }

// LineCodes returns every line code of a pasted block, sorted.
func LineCodes() []string { return sortedKeys(lineTable) }

func sortedKeys(table map[string]reasonSentence) []string {
	codes := make([]string, 0, len(table))
	for c := range table {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	return codes
}

// ReasonParamNames returns the JSON names of the params a reason or note
// code carries, a trailing ? on one left out when it is none; ok is false
// for an unknown code.
func ReasonParamNames(code string) (names []string, ok bool) {
	e, ok := reasonTable[code]
	if !ok {
		e, ok = noteTable[code]
	}
	if !ok {
		e, ok = lineTable[code]
	}
	return slices.Clone(e.params), ok
}

// ResolveWithMargins is Resolve, with the margin each candidate's
// confidence was read with (confidenceInputOf).
func ResolveWithMargins(ctx context.Context, idx Index, req Request) (*Result, []float64, error) {
	res, ranked, err := resolve(ctx, idx, req)
	if err != nil {
		return nil, nil, err
	}
	margins := make([]float64, len(res.Candidates))
	for i := range margins {
		margins[i] = confidenceInputOf(ranked, i).margin
	}
	return res, margins, nil
}

// PartnershipMark is the legal form a name in "& Co." without a form of
// its own reads as (formOf).
const PartnershipMark = partnershipMark

// FormOf is the legal form a candidate bears: its record's, or the one
// its name reads as.
func FormOf(p *companydocs.Profile) string { return formOf(p) }
