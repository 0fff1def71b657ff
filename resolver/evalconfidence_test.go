//go:build !race

// Like the evaluation, this builds a real bleve index of the sample; its
// name starts with TestEvaluation so that `make test` runs it in the same
// step without -race.

package resolver_test

import (
	"context"
	"flag"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

var updateCalibration = flag.Bool("update-calibration", false,
	"rewrite "+resolver.CalibrationRowsFile+" from the evaluation and refit calibration_table.go (make calibrate)")

// TestEvaluationConfidence asks every query of the evaluation set and
// records each candidate shown with its score and whether it is the
// company the query names: the rows the confidence is fitted on. They
// must be the committed ones (a ranking change is refitted with make
// calibrate); the confidence shown down a page must never rise; and the
// first candidates' confidence as served must be calibrated
// (TestConfidenceHeldOut measures it held out from the fit).
func TestEvaluationConfidence(t *testing.T) {
	gen := mustBuildSampleIndex(t)
	var (
		rows             []resolver.CalibrationRow
		shown, absentTop []float64
		right            []bool
	)
	for line, c := range loadEval(t) {
		res, margins, err := resolver.ResolveWithMargins(context.Background(), gen, c.request())
		if err != nil {
			t.Fatalf("%s %q: %v", c.Kind, c.Query, err)
		}
		checkConfidenceFalls(t, c, res.Candidates)
		if c.Want == "" && c.Absent == "" {
			continue
		}
		if c.Absent != "" {
			top := 0.0 // no candidate: nothing shown as likely
			if len(res.Candidates) > 0 {
				top = res.Candidates[0].Confidence
			}
			absentTop = append(absentTop, top)
		}
		for i, cand := range res.Candidates {
			row := resolver.NewCalibrationRow(line+1, c.Kind, c.Absent != "", i+1, cand, margins[i], c.Want != "" && isWant(cand, c.Want))
			rows = append(rows, row)
			if i == 0 {
				shown, right = append(shown, cand.Confidence), append(right, row.Right)
			}
		}
	}
	if *updateCalibration {
		if err := resolver.WriteCalibration(rows); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d rows written; the table is refitted", len(rows))
		return
	}
	committed, err := resolver.ReadCalibrationRows()
	if err != nil {
		t.Fatalf("%v (write them with make calibrate)", err)
	}
	if i := firstDifference(rows, committed); i >= 0 {
		t.Errorf("the evaluation's candidates and scores are not those the confidence was fitted on (%d rows, %d committed; first at row %d: %+v): run make calibrate",
			len(rows), len(committed), i+1, rows[min(i, len(rows)-1)])
	}
	ece := resolver.ExpectedCalibrationError(shown, right)
	t.Logf("%d first candidates: expected calibration error %.4f as served", len(shown), ece)
	if ece > resolver.MaxCalibrationError {
		t.Errorf("expected calibration error %.4f of the first candidates as served, want at most %.2f: run make calibrate", ece, resolver.MaxCalibrationError)
	}
	share, mean := resolver.AbsentFigures(absentTop)
	t.Logf("%d queries for companies the index lacks, as served: %.3f show a first candidate at %.2f or more, mean %.3f (no candidate counts 0)",
		len(absentTop), share, resolver.PossibleConfidence, mean)
	if share > resolver.MaxAbsentConfident || mean > resolver.MaxAbsentMean {
		t.Errorf("companies the index lacks, as served: %.3f at %.2f or more (want at most %.2f), mean %.3f (want at most %.2f)",
			share, resolver.PossibleConfidence, resolver.MaxAbsentConfident, mean, resolver.MaxAbsentMean)
	}
}

// firstDifference is the index of the first row that differs, -1 for none.
func firstDifference(rows, committed []resolver.CalibrationRow) int {
	for i := range max(len(rows), len(committed)) {
		if i >= len(rows) || i >= len(committed) {
			return i
		}
		a, b := rows[i], committed[i]
		if !a.SameAs(b) {
			return i
		}
	}
	return -1
}

// checkConfidenceFalls: the confidence never rises down a page (the
// mapping is monotone; a later candidate never shows more than a first
// one at its score).
func checkConfidenceFalls(t *testing.T, c evalCase, cands []companydocs.Candidate) {
	for i := 1; i < len(cands); i++ {
		if cands[i].Confidence > cands[i-1].Confidence {
			t.Errorf("%s %q: candidate #%d %s %.3f (score %.3f) after %s %.3f (score %.3f)", c.Kind, c.Query,
				i+1, cands[i].Name, cands[i].Confidence, cands[i].Score, cands[i-1].Name, cands[i-1].Confidence, cands[i-1].Score)
		}
	}
}
