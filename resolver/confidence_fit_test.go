package resolver

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"go/format"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"companydocs"
)

// The fit of the confidence: the evaluation (TestEvaluationConfidence)
// writes one row per candidate it is shown into CalibrationRowsFile, and
// WriteCalibration fits calibration_table.go on them. `make calibrate`
// does both; the tests here check that the table is the fit of the rows,
// and how well a fit predicts the rows it was not fitted on.

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
)

// A CalibrationRow is one candidate of one query of the evaluation set,
// with its score, whether it is the company the query names, and the
// codes of its reasons (the score's components).
type CalibrationRow struct {
	Case     int // line of eval.jsonl
	Kind     string
	Position int // 1 for the first candidate
	Score    float64
	Right    bool
	Codes    []string
}

// NewCalibrationRow records a candidate shown at position (1 first).
func NewCalibrationRow(line int, kind string, position int, c companydocs.Candidate, right bool) CalibrationRow {
	codes := make([]string, len(c.ReasonDetails))
	for i, d := range c.ReasonDetails {
		codes[i] = d.Code
	}
	return CalibrationRow{Case: line, Kind: kind, Position: position, Score: math.Round(c.Score*1e6) / 1e6, Right: right, Codes: codes}
}

// ceiling is the confidence the row's reasons hold it at (1 for none).
func (r CalibrationRow) ceiling() float64 {
	reasons := make([]companydocs.ReasonDetail, len(r.Codes))
	for i, c := range r.Codes {
		reasons[i].Code = c
	}
	return confidenceCeiling(reasons)
}

const calibrationHeader = "case\tkind\tposition\tscore\tright\tcodes"

// WriteCalibration writes the rows and the table fitted on them.
func WriteCalibration(rows []CalibrationRow) error {
	var b strings.Builder
	b.WriteString(calibrationHeader + "\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "%d\t%s\t%d\t%s\t%d\t%s\n", r.Case, r.Kind, r.Position,
			strconv.FormatFloat(r.Score, 'f', -1, 64), b2i(r.Right), strings.Join(r.Codes, ","))
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
	if len(f) != 6 {
		return CalibrationRow{}, fmt.Errorf("%d fields, want 6", len(f))
	}
	var r CalibrationRow
	var err [4]error
	r.Case, err[0] = strconv.Atoi(f[0])
	r.Kind = f[1]
	r.Position, err[1] = strconv.Atoi(f[2])
	r.Score, err[2] = strconv.ParseFloat(f[3], 64)
	r.Right, err[3] = strconv.ParseBool(f[4])
	if f[5] != "" {
		r.Codes = strings.Split(f[5], ",")
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

// An isotonicBlock is a run of scores pooled by the fit, with the share of
// its rows found right.
type isotonicBlock struct {
	from, to    float64
	right, rows int
}

// rawShare is the block's share right.
func (b isotonicBlock) rawShare() float64 { return float64(b.right) / float64(b.rows) }

// share is the block's share right with one right and one wrong row
// added (Laplace's rule): a finite sample never makes a score certain,
// nor impossible.
func (b isotonicBlock) share() float64 { return float64(b.right+1) / float64(b.rows+2) }

// fitIsotonic pools adjacent violators: the rows sorted by score (rows of
// equal score one block from the start), every block whose share right is
// not above the one before it is merged into it, so that the shares rise
// with the score. The blocks so found are pooled once more by their
// shares with Laplace's rule, which a small block can otherwise put out
// of order.
func fitIsotonic(rows []CalibrationRow) []isotonicBlock {
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b CalibrationRow) int { return cmp.Compare(a.Score, b.Score) })
	var blocks []isotonicBlock
	for _, r := range sorted {
		if n := len(blocks); n > 0 && blocks[n-1].to == r.Score {
			blocks[n-1].rows++
			blocks[n-1].right += b2i(r.Right)
		} else {
			blocks = append(blocks, isotonicBlock{from: r.Score, to: r.Score, right: b2i(r.Right), rows: 1})
		}
	}
	return poolViolators(poolViolators(blocks, isotonicBlock.rawShare), isotonicBlock.share)
}

// poolViolators merges every block whose share is not above the one
// before it into that one, until the shares rise.
func poolViolators(in []isotonicBlock, share func(isotonicBlock) float64) []isotonicBlock {
	var out []isotonicBlock
	for _, b := range in {
		out = append(out, b)
		for n := len(out); n > 1 && share(out[n-2]) >= share(out[n-1]); n-- {
			last := out[n-1]
			out = out[:n-1]
			out[n-2].to, out[n-2].rows, out[n-2].right = last.to, out[n-2].rows+last.rows, out[n-2].right+last.right
		}
	}
	return out
}

// tableOf is the interpolation table of a fit: each block is flat from its
// least score to its greatest, and the probability rises linearly from
// one block's greatest score to the next block's least.
func tableOf(blocks []isotonicBlock) []calibrationPoint {
	var out []calibrationPoint
	for _, b := range blocks {
		out = append(out, calibrationPoint{b.from, b.share()})
		if b.to != b.from {
			out = append(out, calibrationPoint{b.to, b.share()})
		}
	}
	return out
}

// splitByPosition parts rows into first candidates and later ones.
func splitByPosition(rows []CalibrationRow) (first, later []CalibrationRow) {
	for _, r := range rows {
		if r.Position == 1 {
			first = append(first, r)
		} else {
			later = append(later, r)
		}
	}
	return first, later
}

// calibrationSource is calibration_table.go for the rows.
func calibrationSource(rows []CalibrationRow) ([]byte, error) {
	first, later := splitByPosition(rows)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by make calibrate from %s; DO NOT EDIT.\n\npackage resolver\n\n", CalibrationRowsFile)
	writeTable(&b, "firstCandidateCalibration", "the first candidate of an answer", first)
	writeTable(&b, "laterCandidateCalibration", "the candidates after the first", later)
	return format.Source(b.Bytes())
}

func writeTable(b *bytes.Buffer, name, what string, rows []CalibrationRow) {
	fmt.Fprintf(b, "// %s maps the score of %s onto its\n// confidence, fitted on %d candidates of the evaluation set.\n", name, what, len(rows))
	fmt.Fprintf(b, "var %s = []calibrationPoint{\n", name)
	for _, blk := range fitIsotonic(rows) {
		fmt.Fprintf(b, "\t{%s, %s}, // %d of %d right", fmtFloat(blk.from), fmtFloat(blk.share()), blk.right, blk.rows)
		if blk.to != blk.from {
			fmt.Fprintf(b, ", scores %s to %s\n\t{%s, %s},", fmtFloat(blk.from), fmtFloat(blk.to), fmtFloat(blk.to), fmtFloat(blk.share()))
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n\n")
}

func fmtFloat(x float64) string { return strconv.FormatFloat(math.Round(x*1e6)/1e6, 'f', -1, 64) }

// A prediction is a confidence given to a row not fitted on, and whether
// the row is right.
type prediction struct {
	confidence float64
	right      bool
	held       bool // held at a ceiling (confidenceCeilings)
}

// predict gives a row its confidence from a calibration, as
// calibratedConfidence does.
func predict(c calibration, r CalibrationRow) prediction {
	p := c.probability(r.Score, r.Position == 1)
	ceiling := r.ceiling()
	return prediction{confidence: min(p, ceiling), right: r.Right, held: ceiling < p}
}

// crossValidated predicts every row from tables fitted on the other folds:
// the queries are shuffled with a fixed seed and dealt into the folds, all
// candidates of a query in one fold.
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
		first, later := splitByPosition(train)
		fitted := calibration{tableOf(fitIsotonic(first)), tableOf(fitIsotonic(later))}
		for i, r := range rows {
			if fold[r.Case] == k {
				out[i] = rowPrediction{r, predict(fitted, r)}
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
	for _, table := range [][]calibrationPoint{firstCandidateCalibration, laterCandidateCalibration} {
		for i := 1; i < len(table); i++ {
			if table[i].score <= table[i-1].score || table[i].probability < table[i-1].probability {
				t.Errorf("table not monotone at %d: %v after %v", i, table[i], table[i-1])
			}
		}
	}
}

// TestConfidenceHeldOut fits the confidence on four fifths of the
// evaluation's queries and measures it on the fifth, five times: the
// first candidates' expected calibration error (ten bins) must be at most
// MaxCalibrationError, over all of them and over those whose confidence
// the mapping sets; those held at a ceiling must not claim more than they
// are found right. The figures docs/api.md gives are logged (go test -v).
func TestConfidenceHeldOut(t *testing.T) {
	rows := mustReadCalibrationRows(t)
	var mapped, held, all, later, raw []prediction
	for _, p := range crossValidated(rows) {
		if p.Position > 1 {
			later = append(later, p.prediction)
			continue
		}
		all = append(all, p.prediction)
		raw = append(raw, prediction{confidence: p.Score, right: p.Right})
		if p.held {
			held = append(held, p.prediction)
		} else {
			mapped = append(mapped, p.prediction)
		}
	}
	t.Logf("every first candidate, held out:\n%s", reliabilityTable(all))
	t.Logf("first candidates whose confidence the mapping sets, held out:\n%s", reliabilityTable(mapped))
	t.Logf("first candidates held at a ceiling, held out:\n%s", reliabilityTable(held))
	t.Logf("the candidates after the first, held out:\n%s", reliabilityTable(later))
	t.Logf("every first candidate, the score as the confidence:\n%s", reliabilityTable(raw))
	for _, set := range []struct {
		name  string
		preds []prediction
	}{{"every first candidate", all}, {"first candidates whose confidence the mapping sets", mapped}} {
		if _, ece := reliability(set.preds); ece > MaxCalibrationError {
			t.Errorf("%s, held out: expected calibration error %.4f, want at most %.2f", set.name, ece, MaxCalibrationError)
		}
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

// TestInterpolate reads scores off a small table: flat outside it, linear
// between its points.
func TestInterpolate(t *testing.T) {
	table := []calibrationPoint{{0.3, 0.1}, {0.5, 0.1}, {0.7, 0.9}}
	for _, tc := range []struct{ score, want float64 }{
		{0, 0.1}, {0.3, 0.1}, {0.4, 0.1}, {0.5, 0.1}, {0.6, 0.5}, {0.7, 0.9}, {1, 0.9},
	} {
		if got := interpolate(table, tc.score); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("score %.2f: %.4f, want %.4f", tc.score, got, tc.want)
		}
	}
}

// TestFitIsotonicPoolsViolators: a share right that falls as the score
// rises is pooled with the one before it.
func TestFitIsotonicPoolsViolators(t *testing.T) {
	var rows []CalibrationRow
	add := func(score float64, right, wrong int) {
		for range right {
			rows = append(rows, CalibrationRow{Score: score, Right: true})
		}
		for range wrong {
			rows = append(rows, CalibrationRow{Score: score})
		}
	}
	add(0.2, 0, 4)
	add(0.5, 3, 1)
	add(0.6, 1, 3) // falls below 0.5's share: pooled with it
	add(0.9, 4, 0)
	got := fitIsotonic(rows)
	want := []isotonicBlock{{0.2, 0.2, 0, 4}, {0.5, 0.6, 4, 8}, {0.9, 0.9, 4, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("blocks %+v, want %+v", got, want)
	}
}
