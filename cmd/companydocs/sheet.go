package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"companydocs"
)

// utf8BOM starts the CSV files Excel writes as "CSV UTF-8"; without it
// Excel reads a UTF-8 file as the local code page.
const utf8BOM = "\ufeff"

// resultColumns are the columns resolve appends to each input row, the
// page's download has the same.
var resultColumns = []string{"profile_id", "name", "court", "registry_number", "confidence", "confidence_label", "ordering_eligible", "reasons"}

// reasonSeparator joins a candidate's reasons into one cell.
const reasonSeparator = " | "

// sheetReader reads the rows of a CSV or TSV file one at a time, after its
// header line.
type sheetReader struct {
	csv    *csv.Reader
	header []string
	comma  rune
	bom    bool
}

// openSheet reads the header of r. comma 0 detects the delimiter from
// the header line: the most frequent of comma, semicolon and tab outside
// quotes (German Excel writes semicolons).
func openSheet(r io.Reader, comma rune) (*sheetReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	s := &sheetReader{comma: comma}
	if head, _ := br.Peek(len(utf8BOM)); string(head) == utf8BOM {
		s.bom = true
		br.Discard(len(utf8BOM))
	}
	if s.comma == 0 {
		s.comma = detectDelimiter(firstLine(br))
	}
	s.csv = csv.NewReader(br)
	s.csv.Comma = s.comma
	s.csv.FieldsPerRecord = -1 // a short row's missing cells are empty
	s.csv.LazyQuotes = true
	header, err := s.csv.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("the input is empty: it needs a header line naming its columns: %w", errUsage)
	} else if err != nil {
		return nil, fmt.Errorf("reading the header line: %w", err)
	}
	for i := range header {
		header[i] = strings.TrimSpace(header[i])
	}
	s.header = header
	return s, nil
}

// firstLine returns the first line of br without consuming it (up to
// the reader's buffer size).
func firstLine(br *bufio.Reader) []byte {
	for n := 512; ; n *= 2 {
		b, err := br.Peek(n)
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return b[:i]
		}
		if err != nil {
			return b
		}
	}
}

// detectDelimiter counts the candidate delimiters outside quotes; a
// header of one column reads as comma-separated.
func detectDelimiter(line []byte) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range string(line) {
		switch {
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ',' || c == ';' || c == '\t'):
			counts[c]++
		}
	}
	best := ','
	for _, c := range []rune{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

// parseDelimiter reads the --delimiter flag: "" detects it.
func parseDelimiter(s string) (rune, error) {
	switch s {
	case "":
		return 0, nil
	case ",", "comma":
		return ',', nil
	case ";", "semicolon":
		return ';', nil
	case "\t", `\t`, "tab":
		return '\t', nil
	}
	return 0, fmt.Errorf("--delimiter must be \",\", \";\" or \"tab\", got %q: %w", s, errUsage)
}

// column finds a header by name, ignoring case and surrounding spaces.
func (s *sheetReader) column(name string) (int, bool) {
	for i, h := range s.header {
		if strings.EqualFold(h, strings.TrimSpace(name)) {
			return i, true
		}
	}
	return 0, false
}

// unknownColumn is the usage error for a column the header lacks.
func (s *sheetReader) unknownColumn(flagName, name string) error {
	quoted := make([]string, len(s.header))
	for i, h := range s.header {
		quoted[i] = strconv.Quote(h)
	}
	return fmt.Errorf("--%s %q is not a column of the input; its header has %s: %w",
		flagName, name, strings.Join(quoted, ", "), errUsage)
}

// next returns the next row, as wide as the header: a short row is
// padded with empty cells, empty cells beyond the header are dropped.
func (s *sheetReader) next() ([]string, error) {
	row, err := s.csv.Read()
	if err != nil {
		return nil, err
	}
	for len(row) > len(s.header) && strings.TrimSpace(row[len(row)-1]) == "" {
		row = row[:len(row)-1]
	}
	if len(row) > len(s.header) {
		line, _ := s.csv.FieldPos(0)
		return nil, fmt.Errorf("line %d has %d cells but the header has %d: quote a cell that holds the delimiter %q",
			line, len(row), len(s.header), s.comma)
	}
	for len(row) < len(s.header) {
		row = append(row, "")
	}
	return row, nil
}

// sheetWriter writes the output rows: the input's cells, then
// resultColumns.
type sheetWriter struct {
	csv *csv.Writer
}

func newSheetWriter(w io.Writer, comma rune) *sheetWriter {
	cw := csv.NewWriter(w)
	cw.Comma = comma
	return &sheetWriter{csv: cw}
}

// writeHeader writes the input's header and resultColumns; a BOM in,
// a BOM out: Excel then reads the umlauts right.
func (w *sheetWriter) writeHeader(input []string, bom bool) error {
	return w.csv.Write(outputHeader(input, bom))
}

// outputHeader is the header line of the output; the BOM travels in
// its first cell, so that a resumed file can be checked cell by cell.
func outputHeader(input []string, bom bool) []string {
	h := append(append([]string(nil), input...), resultColumns...)
	if bom {
		h[0] = utf8BOM + h[0]
	}
	return h
}

// writeRow writes an input row with its outcome.
func (w *sheetWriter) writeRow(row []string, out rowOutcome) error {
	return w.csv.Write(append(append(make([]string, 0, len(row)+len(resultColumns)), row...), out.cells()...))
}

func (w *sheetWriter) flush() error {
	w.csv.Flush()
	return w.csv.Error()
}

// rowOutcome is what a row resolved to: its best candidate, none, or the
// service's sentence on why the row's clue was refused.
type rowOutcome struct {
	best    *companydocs.Candidate
	errCode string
	errText string
}

func (o rowOutcome) cells() []string {
	switch {
	case o.errCode != "":
		return []string{"", "", "", "", "", "", "", oneLine(o.errCode + ": " + o.errText)}
	case o.best == nil:
		return make([]string, len(resultColumns))
	}
	c := o.best
	return []string{c.ProfileID, c.Name, c.Court, c.RegistryNumber, strconv.FormatFloat(c.Confidence, 'f', -1, 64),
		c.ConfidenceLabel, strconv.FormatBool(c.OrderingEligible), oneLine(strings.Join(c.ConfidenceReasons, reasonSeparator))}
}

// resumeOutput opens an output file to append to: it counts the complete
// rows written before, cuts a torn last row (the process was killed in
// the middle of a write) and checks that the header is the one this run
// writes. A missing or empty file starts afresh (rows 0, fresh true).
func resumeOutput(path string, header []string, comma rune) (f *os.File, rows int, fresh bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, false, err
	}
	rows, end, err := completeRows(f, header, comma)
	if err == nil {
		err = f.Truncate(end)
	}
	if err == nil {
		_, err = f.Seek(end, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, false, err
	}
	return f, rows, end == 0, nil
}

// completeRows counts the data rows of f that end in a line break and
// returns the offset after the last of them; 0 when not even the header
// is whole.
func completeRows(f *os.File, header []string, comma rune) (rows int, end int64, err error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || size == 0 {
		return 0, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	r := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	r.Comma = comma
	r.FieldsPerRecord = -1
	whole := func() bool { return r.InputOffset() < size || endsInNewline(f, size) }
	got, err := r.Read()
	if err != nil || !equalRows(got, header) {
		return 0, 0, fmt.Errorf("--resume: %s was not written by this command from this input (its first line is not %q); "+
			"remove it or choose another --output: %w", f.Name(), strings.Join(header, string(comma)), errUsage)
	}
	if !whole() {
		return 0, 0, nil
	}
	end = r.InputOffset()
	for {
		// A torn row ends the file before its line break or before its
		// last cell (no cell this command writes holds a line break).
		row, err := r.Read()
		if err != nil || !whole() || len(row) != len(header) {
			break
		}
		rows, end = rows+1, r.InputOffset()
	}
	return rows, end, nil
}

// oneLine keeps a written cell on one line, which resume relies on to
// tell a torn row from a whole one.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func endsInNewline(f *os.File, size int64) bool {
	var b [1]byte
	_, err := f.ReadAt(b[:], size-1)
	return err == nil && b[0] == '\n'
}

func equalRows(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
