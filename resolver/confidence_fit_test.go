package resolver

import (
	"bufio"
	"bytes"
	"fmt"
	"go/format"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"companydocs"
)

// The fit of the confidence: the evaluation (TestEvaluationConfidence)
// writes one row per candidate it is shown into CalibrationRowsFile, and
// WriteCalibration fits calibration_table.go on them: a logistic
// regression of "right" on the features of calibration.go. `make
// calibrate` does both; the tests here check that the table is the fit
// of the rows, and how well a fit predicts the rows it was not fitted on,
// for companies the index holds and for those it lacks.

// Files of the fit, from the package's directory.
const (
	CalibrationRowsFile = "testdata/calibration/rows.tsv"
	calibrationTable    = "calibration_table.go"
)

// Cross-validation: how many folds, and the seed of the cases' shuffle.
const (
	calibrationFolds = 5
	calibrationSeed  = 39
	// MaxCalibrationError is the most expected calibration error (ten
	// equal bins) the first candidates may show.
	MaxCalibrationError = 0.03
	// MaxAbsentConfident is the most share of the queries for companies
	// the index lacks whose first candidate may show PossibleConfidence
	// or more, and MaxAbsentMean the most mean confidence they may show.
	MaxAbsentConfident = 0.05
	MaxAbsentMean      = 0.15
	// ridge is the fit's L2 penalty on every weight but the bias: it
	// keeps a feature that a handful of rows carry from a weight that
	// only they decide.
	ridge = 0.1
)

// A CalibrationRow is one candidate of one query of the evaluation set,
// with its score, its margin (confidenceInput), whether it is the company
// the query names, and its reasons (the codes, with the share of the name
// matching partly).
type CalibrationRow struct {
	Case     int // line of eval.jsonl
	Kind     string
	Absent   bool // the company the query names is held out of the index
	Position int  // 1 for the first candidate
	Score    float64
	Margin   float64
	Right    bool
	Reasons  []companydocs.ReasonDetail
}

// NewCalibrationRow records a candidate shown at position (1 first) with
// its margin.
func NewCalibrationRow(line int, kind string, absent bool, position int, c companydocs.Candidate, margin float64, right bool) CalibrationRow {
	reasons := make([]companydocs.ReasonDetail, len(c.ReasonDetails))
	for i, d := range c.ReasonDetails {
		reasons[i].Code = d.Code
		if d.Code == ReasonNameMatchesPartly {
			reasons[i].Params.Percent = d.Params.Percent
		}
	}
	return CalibrationRow{Case: line, Kind: kind, Absent: absent, Position: position, Score: round6(c.Score),
		Margin: round6(margin), Right: right, Reasons: reasons}
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// input is what the row's confidence is read from.
func (r CalibrationRow) input() confidenceInput {
	return confidenceInput{score: r.Score, margin: r.Margin, first: r.Position == 1, reasons: r.Reasons}
}

// codes are the row's reasons as written: a code, with "=" and the share
// of a name matching partly.
func (r CalibrationRow) codes() string {
	out := make([]string, len(r.Reasons))
	for i, d := range r.Reasons {
		out[i] = d.Code
		if d.Code == ReasonNameMatchesPartly {
			out[i] += "=" + strconv.Itoa(d.Params.Percent)
		}
	}
	return strings.Join(out, ",")
}

// SameAs reports whether two rows record the same candidate alike.
func (r CalibrationRow) SameAs(o CalibrationRow) bool {
	return r.Case == o.Case && r.Kind == o.Kind && r.Absent == o.Absent && r.Position == o.Position &&
		r.Score == o.Score && r.Margin == o.Margin && r.Right == o.Right && r.codes() == o.codes()
}

const calibrationHeader = "case\tkind\tabsent\tposition\tscore\tmargin\tright\treasons"

// WriteCalibration writes the rows and the table fitted on them.
func WriteCalibration(rows []CalibrationRow) error {
	var b strings.Builder
	b.WriteString(calibrationHeader + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d\t%s\t%d\t%d\t%s\t%s\t%d\t%s\n", r.Case, r.Kind, b2i(r.Absent), r.Position,
			strconv.FormatFloat(r.Score, 'f', -1, 64), strconv.FormatFloat(r.Margin, 'f', -1, 64), b2i(r.Right), r.codes())
	}
	if err := os.WriteFile(CalibrationRowsFile, []byte(b.String()), 0o644); err != nil {
		return err
	}
	src, err := calibrationSource(rows)
	if err != nil {
		return err
	}
	return os.WriteFile(calibrationTable, src, 0o644)
}

// ReadCalibrationRows reads the committed rows.
func ReadCalibrationRows() ([]CalibrationRow, error) {
	f, err := os.Open(CalibrationRowsFile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []CalibrationRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n == 1 {
			if sc.Text() != calibrationHeader {
				return nil, fmt.Errorf("%s: header %q, want %q", CalibrationRowsFile, sc.Text(), calibrationHeader)
			}
			continue
		}
		r, err := parseCalibrationRow(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", CalibrationRowsFile, n, err)
		}
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

func parseCalibrationRow(line string) (CalibrationRow, error) {
	f := strings.Split(line, "\t")
	if len(f) != 8 {
		return CalibrationRow{}, fmt.Errorf("%d fields, want 8", len(f))
	}
	var r CalibrationRow
	var err [7]error
	r.Case, err[0] = strconv.Atoi(f[0])
	r.Kind = f[1]
	r.Absent, err[1] = strconv.ParseBool(f[2])
	r.Position, err[2] = strconv.Atoi(f[3])
	r.Score, err[3] = strconv.ParseFloat(f[4], 64)
	r.Margin, err[4] = strconv.ParseFloat(f[5], 64)
	r.Right, err[5] = strconv.ParseBool(f[6])
	if f[7] != "" {
		for _, c := range strings.Split(f[7], ",") {
			code, percent, ok := strings.Cut(c, "=")
			d := companydocs.ReasonDetail{Code: code}
			if ok {
				d.Params.Percent, err[6] = strconv.Atoi(percent)
			}
			r.Reasons = append(r.Reasons, d)
		}
	}
	for _, e := range err {
		if e != nil {
			return r, e
		}
	}
	return r, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fitLogistic fits the model's weights on rows by Newton's method
// (iteratively reweighted least squares) with an L2 penalty (ridge) on
// every weight but the bias, from zero weights, to a fixed tolerance: the
// same rows give the same weights.
func fitLogistic(rows []CalibrationRow) confidenceWeights {
	xs := make([][numFeatures]float64, len(rows))
	for i, r := range rows {
		xs[i] = confidenceFeatures(r.input())
	}
	var w confidenceWeights
	for range 100 {
		var grad [numFeatures]float64
		var hess [numFeatures][numFeatures]float64
		for i, x := range xs {
			p := w.probability(x)
			d := b2f(rows[i].Right) - p
			v := max(p*(1-p), 1e-9)
			for a := range numFeatures {
				grad[a] += d * x[a]
				for b := range numFeatures {
					hess[a][b] += v * x[a] * x[b]
				}
			}
		}
		for a := 1; a < numFeatures; a++ {
			grad[a] -= ridge * w[a]
			hess[a][a] += ridge
		}
		step := solve(hess, grad)
		largest := 0.0
		for a := range numFeatures {
			w[a] += step[a]
			largest = max(largest, math.Abs(step[a]))
		}
		if largest < 1e-9 {
			break
		}
	}
	return w
}

func b2f(b bool) float64 { return float64(b2i(b)) }

// solve solves a x = b by Gaussian elimination with partial pivoting (a
// is positive definite: the ridge sees to it).
func solve(a [numFeatures][numFeatures]float64, b [numFeatures]float64) [numFeatures]float64 {
	for col := range numFeatures {
		pivot := col
		for r := col + 1; r < numFeatures; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[pivot][col]) {
				pivot = r
			}
		}
		a[col], a[pivot] = a[pivot], a[col]
		b[col], b[pivot] = b[pivot], b[col]
		for r := col + 1; r < numFeatures; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c < numFeatures; c++ {
				a[r][c] -= f * a[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	var x [numFeatures]float64
	for r := numFeatures - 1; r >= 0; r-- {
		sum := b[r]
		for c := r + 1; c < numFeatures; c++ {
			sum -= a[r][c] * x[c]
		}
		x[r] = sum / a[r][r]
	}
	return x
}

// calibrationSource is calibration_table.go for the rows.
func calibrationSource(rows []CalibrationRow) ([]byte, error) {
	w := fitLogistic(rows)
	right, absent := 0, 0
	for _, r := range rows {
		right += b2i(r.Right)
		if r.Absent && r.Position == 1 {
			absent++
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by make calibrate from %s; DO NOT EDIT.\n\npackage resolver\n\n", CalibrationRowsFile)
	fmt.Fprintf(&b, "// fittedConfidence are the weights of the confidence model (calibration.go),\n")
	fmt.Fprintf(&b, "// fitted on %d candidates of the evaluation set, %d of them right; %d first\n", len(rows), right, absent)
	fmt.Fprintf(&b, "// candidates answer a query for a company held out of the index.\n")
	b.WriteString("var fittedConfidence = confidenceWeights{\n")
	for i, v := range w {
		fmt.Fprintf(&b, "\t%s, // %s\n", strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64), featureNames[i])
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// A prediction is a confidence given to a row not fitted on, and whether
// the row is right.
type prediction struct {
	confidence float64
	right      bool
	held       bool // held at a ceiling (confidenceCeilings)
}

// predict gives a row its confidence from weights, as
// calibratedConfidence does, held at the confidence of the row above it
// on its page (above, 1 for the first).
func predict(w confidenceWeights, r CalibrationRow, above float64) prediction {
	p := w.probability(confidenceFeatures(r.input()))
	ceiling := min(confidenceCeiling(r.Reasons), above)
	return prediction{confidence: min(p, ceiling), right: r.Right, held: ceiling < p}
}

// crossValidated predicts every row from weights fitted on the other
// folds: the queries are shuffled with a fixed seed and dealt into the
// folds, all candidates of a query in one fold.
func crossValidated(rows []CalibrationRow) []rowPrediction {
	var cases []int
	for _, r := range rows {
		if len(cases) == 0 || cases[len(cases)-1] != r.Case {
			cases = append(cases, r.Case)
		}
	}
	rnd := rand.New(rand.NewPCG(calibrationSeed, calibrationSeed))
	rnd.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
	fold := map[int]int{}
	for i, c := range cases {
		fold[c] = i % calibrationFolds
	}
	out := make([]rowPrediction, len(rows))
	for k := range calibrationFolds {
		var train []CalibrationRow
		for _, r := range rows {
			if fold[r.Case] != k {
				train = append(train, r)
			}
		}
		fitted := fitLogistic(train)
		above := 1.0
		for i, r := range rows {
			if r.Position == 1 {
				above = 1
			}
			if fold[r.Case] == k {
				out[i] = rowPrediction{r, predict(fitted, r, above)}
				above = out[i].confidence
			}
		}
	}
	return out
}

// A rowPrediction is a row with the confidence given to it.
type rowPrediction struct {
	CalibrationRow
	prediction
}

// A reliabilityBin is one tenth of the confidence scale: how many
// predictions fall in it, their mean confidence and the share right.
type reliabilityBin struct {
	rows, right int
	sum         float64
}

// reliability bins predictions into ten equal bins of confidence and
// returns the bins and the expected calibration error: the mean, weighted
// by rows, of the gap between a bin's mean confidence and its share right.
func reliability(preds []prediction) ([10]reliabilityBin, float64) {
	var bins [10]reliabilityBin
	for _, p := range preds {
		b := &bins[min(int(p.confidence*10), 9)]
		b.rows++
		b.right += b2i(p.right)
		b.sum += p.confidence
	}
	ece := 0.0
	for _, b := range bins {
		if b.rows > 0 {
			ece += float64(b.rows) / float64(len(preds)) * math.Abs(b.sum/float64(b.rows)-float64(b.right)/float64(b.rows))
		}
	}
	return bins, ece
}

// ExpectedCalibrationError of confidences given to rows (right or not).
func ExpectedCalibrationError(confidences []float64, right []bool) float64 {
	preds := make([]prediction, len(confidences))
	for i := range confidences {
		preds[i] = prediction{confidence: confidences[i], right: right[i]}
	}
	_, ece := reliability(preds)
	return ece
}

// reliabilityTable is the table docs/api.md shows.
func reliabilityTable(preds []prediction) string {
	bins, ece := reliability(preds)
	var b strings.Builder
	b.WriteString("| confidence | candidates | mean confidence | found right |\n|---|---:|---:|---:|\n")
	for i, bin := range bins {
		if bin.rows == 0 {
			fmt.Fprintf(&b, "| %.1f to %.1f | 0 | | |\n", float64(i)/10, float64(i+1)/10)
			continue
		}
		fmt.Fprintf(&b, "| %.1f to %.1f | %d | %.3f | %.3f (%d) |\n", float64(i)/10, float64(i+1)/10,
			bin.rows, bin.sum/float64(bin.rows), float64(bin.right)/float64(bin.rows), bin.right)
	}
	fmt.Fprintf(&b, "\nexpected calibration error %.4f over %d candidates\n", ece, len(preds))
	return b.String()
}

func mustReadCalibrationRows(t *testing.T) []CalibrationRow {
	t.Helper()
	rows, err := ReadCalibrationRows()
	if err != nil {
		t.Fatalf("%v (write them with make calibrate)", err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s holds no rows", CalibrationRowsFile)
	}
	return rows
}

// TestConfidenceTableIsTheFitOfItsRows: calibration_table.go is what the
// fit of the committed rows writes, not edited by hand.
func TestConfidenceTableIsTheFitOfItsRows(t *testing.T) {
	want, err := calibrationSource(mustReadCalibrationRows(t))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(calibrationTable)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the fit of %s: run make calibrate", calibrationTable, CalibrationRowsFile)
	}
}

// TestConfidenceHeldOut fits the confidence on four fifths of the
// evaluation's queries and measures it on the fifth, five times: the
// first candidates' expected calibration error (ten bins) must be at most
// MaxCalibrationError, over all of them (those for companies the index
// holds and lacks are logged apart); of the queries for companies it lacks at
// most MaxAbsentConfident may show a first candidate above
// PossibleConfidence, and their mean at most MaxAbsentMean; those held at
// a ceiling must not claim more than they are found right. The figures
// docs/api.md gives are logged (go test -v).
func TestConfidenceHeldOut(t *testing.T) {
	rows := mustReadCalibrationRows(t)
	var all, present, absent, held, later, raw []prediction
	for _, p := range crossValidated(rows) {
		if p.Position > 1 {
			later = append(later, p.prediction)
			continue
		}
		all = append(all, p.prediction)
		raw = append(raw, prediction{confidence: p.Score, right: p.Right})
		if p.Absent {
			absent = append(absent, p.prediction)
		} else {
			present = append(present, p.prediction)
		}
		if p.held {
			held = append(held, p.prediction)
		}
	}
	t.Logf("every first candidate, held out:\n%s", reliabilityTable(all))
	t.Logf("first candidates of companies the index holds, held out:\n%s", reliabilityTable(present))
	t.Logf("first candidates of companies the index lacks, held out:\n%s", reliabilityTable(absent))
	t.Logf("first candidates held at a ceiling, held out:\n%s", reliabilityTable(held))
	t.Logf("the candidates after the first, held out:\n%s", reliabilityTable(later))
	t.Logf("every first candidate, the score as the confidence:\n%s", reliabilityTable(raw))
	if _, ece := reliability(all); ece > MaxCalibrationError {
		t.Errorf("every first candidate, held out: expected calibration error %.4f, want at most %.2f", ece, MaxCalibrationError)
	}
	share, mean := absentFigures(absent)
	t.Logf("%d first candidates for companies the index lacks, held out: %.3f at %.2f or more, mean confidence %.3f", len(absent), share, PossibleConfidence, mean)
	if share > MaxAbsentConfident || mean > MaxAbsentMean {
		t.Errorf("companies the index lacks, held out: %.3f of first candidates at %.2f or more (want at most %.2f), mean %.3f (want at most %.2f)",
			share, PossibleConfidence, MaxAbsentConfident, mean, MaxAbsentMean)
	}
	var shown float64
	right := 0
	for _, p := range held {
		shown += p.confidence
		right += b2i(p.right)
	}
	if n := float64(len(held)); n > 0 && shown/n > float64(right)/n+MaxCalibrationError {
		t.Errorf("first candidates held at a ceiling show %.3f on average and are right %.3f of the time", shown/n, float64(right)/n)
	}
}

// absentFigures are the share of predictions at PossibleConfidence or
// more, and their mean confidence.
func absentFigures(preds []prediction) (share, mean float64) {
	if len(preds) == 0 {
		return 0, 0
	}
	high := 0
	for _, p := range preds {
		mean += p.confidence
		if p.confidence >= PossibleConfidence {
			high++
		}
	}
	return float64(high) / float64(len(preds)), mean / float64(len(preds))
}

// AbsentFigures are absentFigures of confidences shown.
func AbsentFigures(confidences []float64) (share, mean float64) {
	preds := make([]prediction, len(confidences))
	for i, c := range confidences {
		preds[i].confidence = c
	}
	return absentFigures(preds)
}

// TestFitLogisticIsDeterministicAndSeparates: the fit of a small set
// gives the same weights twice, and more confidence to the rows of a
// feature that is right than to those of one that is wrong.
func TestFitLogisticIsDeterministicAndSeparates(t *testing.T) {
	var rows []CalibrationRow
	add := func(code string, right, wrong int) {
		for i := range right + wrong {
			rows = append(rows, CalibrationRow{Case: len(rows), Position: 1, Score: 0.8, Right: i < right,
				Reasons: []companydocs.ReasonDetail{{Code: code}}})
		}
	}
	add(ReasonNameMatches, 40, 2)
	add(ReasonNameMatchesWeakly, 2, 40)
	w := fitLogistic(rows)
	if w != fitLogistic(rows) {
		t.Fatal("two fits of the same rows differ")
	}
	whole := w.probability(confidenceFeatures(rows[0].input()))
	weak := w.probability(confidenceFeatures(rows[len(rows)-1].input()))
	if whole < 0.85 || weak > 0.15 {
		t.Errorf("a whole name %.3f, a weak one %.3f: want above 0.85 and below 0.15", whole, weak)
	}
}
