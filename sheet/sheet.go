package sheet

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"companydocs"
	"companydocs/internal/cli"
	"companydocs/internal/csvrows"
	"companydocs/messages"
	"companydocs/resolver"
)

// BOM starts the CSV files Excel writes as "CSV UTF-8"; without it
// Excel reads a UTF-8 file as the local code page.
const BOM = "\ufeff"

// ResultColumns are the columns resolve appends to each input row, the
// page's download has the same. The last three say what a person decided
// in the page's review: the row was reviewed, its candidate was chosen by
// hand, or none of the candidates is the company ("none of these", which
// is not "not found"). resolve reviews nothing: it writes false in each,
// and --resume keeps what a person wrote there since.
var ResultColumns = []string{"profile_id", "name", "court", "registry_number", "confidence", "confidence_label", "ordering_eligible", "reasons",
	"reviewed", "chosen_by_hand", "none_of_these"}

// NotReviewed are the review columns of a row resolve wrote.
var NotReviewed = []string{"false", "false", "false"}

// cellFormat is how the output writes its cells for the reader's
// spreadsheet: the sentences in lang, the confidence with a decimal comma
// or point.
type cellFormat struct {
	lang    string
	decimal byte // ',' or '.'
}

// decimalFor returns the decimal mark of the --decimal flag ("comma",
// "point"; "" chooses the comma for a file separated by semicolons, as
// German spreadsheets write them, the point otherwise).
func decimalFor(flag string, comma rune) (byte, error) {
	switch flag {
	case "":
		if comma == ';' {
			return ',', nil
		}
		return '.', nil
	case "comma":
		if comma == ',' {
			return 0, fmt.Errorf("--decimal comma needs another delimiter than the comma (--delimiter \";\" or tab): %w", cli.ErrUsage)
		}
		return ',', nil
	case "point":
		return '.', nil
	}
	return 0, fmt.Errorf("--decimal must be comma or point, got %q: %w", flag, cli.ErrUsage)
}

// reasonSeparator joins a candidate's reasons into one cell.
const reasonSeparator = " | "

// Caps bound what resolve holds of one row of its input, and so of
// the output it resumes; past a cap a row is refused, not read.
type Caps struct {
	Field, Row, Header int // bytes
}

// The caps' defaults. A cell: 8 times the longest query in bytes (2,000
// characters of up to 4 bytes), and an Excel cell of German text (32,767
// characters) whole. A row: 16 cells at the cap, or a CRM export of
// hundreds of columns. A header: Excel's 16,384 columns with names of 16
// bytes. Each is a flag; raising them raises the worst case (docs/resolve.md).
const (
	DefaultMaxFieldBytes  = 64 << 10
	DefaultMaxRowBytes    = 1 << 20
	DefaultMaxHeaderBytes = 256 << 10
)

// resultCellsRoom is what the result columns add to a row of the output
// at most: a profile id, a name of at most 16 KiB (the ingest's cap), a
// court, a number, and the reasons.
const resultCellsRoom = 64 << 10

// check is the usage check of the caps' flags.
func (c Caps) check() error {
	switch {
	case c.Field < 1 || c.Row < 1 || c.Header < 1:
		return fmt.Errorf("--max-field-bytes, --max-row-bytes and --max-header-bytes must be 1 or more: %w", cli.ErrUsage)
	case c.Field > c.Row:
		return fmt.Errorf("--max-field-bytes (%d) must not be more than --max-row-bytes (%d): %w", c.Field, c.Row, cli.ErrUsage)
	}
	return nil
}

// output are the caps of an output this command wrote with caps c: a
// cell as long as the input's or a result cell; a row and header up to
// twice the input's (every quote of a cell written twice, and quotes
// around each) and the result columns.
func (c Caps) output() Caps {
	return Caps{Field: max(c.Field, resultCellsRoom), Row: 2*c.Row + resultCellsRoom, Header: 2*c.Header + resultCellsRoom}
}

// sheetReader reads the rows of a CSV or TSV file one at a time, after its
// header line.
type sheetReader struct {
	rows   *csvrows.Reader
	header []string
	comma  rune
	bom    bool
	caps   Caps
	lang   string // of the sentences that stop the run at a cell it cannot read
}

// openSheet reads the header of r. comma 0 detects the delimiter from
// the header line: the most frequent of comma, semicolon and tab outside
// quotes (German Excel writes semicolons). lang is the language of the
// sentences that stop the run.
func openSheet(r io.Reader, comma rune, caps Caps, lang string) (*sheetReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	s := &sheetReader{comma: comma, caps: caps, lang: lang}
	if head, _ := br.Peek(len(BOM)); string(head) == BOM {
		s.bom = true
		br.Discard(len(BOM))
	}
	if s.comma == 0 {
		s.comma = detectDelimiter(firstLine(br))
	}
	s.rows = newRowReader(br, s.comma, caps)
	header, err := s.rows.Read()
	var after *csvrows.TextAfterQuoteError
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("the input is empty: it needs a header line naming its columns: %w", cli.ErrUsage)
	case isOverCap(err):
		return nil, fmt.Errorf("the header line is longer than %s (--max-header-bytes): it should name the columns; if it does, raise the cap: %w",
			companydocs.SizeText(caps.Header), cli.ErrUsage)
	case errors.As(err, &after):
		return nil, textAfterQuote(after, lang)
	case err != nil:
		return nil, fmt.Errorf("reading the header line: %w", err)
	}
	s.header = make([]string, len(header))
	for i := range header {
		s.header[i] = strings.TrimSpace(header[i])
	}
	s.rows.SetLimits(caps.Row, caps.Field)
	return s, nil
}

// newRowReader reads rows with the caps, the header's first: a quote left
// open is an error, never a cell that swallows the rows after it.
func newRowReader(br *bufio.Reader, comma rune, caps Caps) *csvrows.Reader {
	return csvrows.New(br, csvrows.Options{Comma: byte(comma), MaxRow: caps.Header, MaxField: min(caps.Field, caps.Header), CheckQuotes: true})
}

func isOverCap(err error) bool {
	return errors.Is(err, csvrows.ErrRowTooLong) || errors.Is(err, csvrows.ErrFieldTooLong)
}

// maxQuotedInput is how much of the input an error message quotes.
const maxQuotedInput = 200

// quoteInput quotes text of the input for an error message, cut to
// maxQuotedInput characters.
func quoteInput(s string) string {
	return strconv.Quote(companydocs.Shorten(s, maxQuotedInput))
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
	return 0, fmt.Errorf("--delimiter must be \",\", \";\" or \"tab\", got %q: %w", s, cli.ErrUsage)
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

// unknownColumn is the usage error for a column the header lacks; it
// names the header's columns, up to maxQuotedInput characters of them.
func (s *sheetReader) unknownColumn(flagName, name string) error {
	var list strings.Builder
	used := 0
	for i, h := range s.header {
		if used += utf8.RuneCountInString(h); used > maxQuotedInput {
			fmt.Fprintf(&list, "... (%d columns in all)", len(s.header))
			break
		} else if i > 0 {
			list.WriteString(", ")
		}
		list.WriteString(strconv.Quote(h))
	}
	return fmt.Errorf("--%s %s is not a column of the input; its header has %s: %w",
		flagName, quoteInput(name), list.String(), cli.ErrUsage)
}

// refusedRow is a row over a cap: it is not read, and the run writes its
// refusal as the row's outcome and goes on.
type refusedRow struct{ refusal *companydocs.Error }

func (e *refusedRow) Error() string { return e.refusal.Message }

// next returns the next row, as wide as the header: a short row is
// padded with empty cells, empty cells beyond the header are dropped.
// A row over a cap is a *refusedRow error; a quote left open, or text
// after a closing quote, stops the run.
func (s *sheetReader) next() ([]string, error) {
	fields, err := s.rows.Read()
	var open *csvrows.QuoteError
	var after *csvrows.TextAfterQuoteError
	switch {
	case errors.Is(err, csvrows.ErrRowTooLong):
		return nil, &refusedRow{companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.sheet_row_too_long",
			companydocs.Args{"line": s.rows.Start(), "max": companydocs.SizeText(s.caps.Row)})}
	case errors.Is(err, csvrows.ErrFieldTooLong):
		return nil, &refusedRow{companydocs.Refusal(companydocs.EINVALIDQUERY, "refusal.sheet_cell_too_long",
			companydocs.Args{"line": s.rows.Start(), "max": companydocs.SizeText(s.caps.Field)})}
	case errors.As(err, &open):
		return nil, fmt.Errorf("%w: no row from line %d on was resolved; close the quote (a quote inside a cell is written twice: \"\"), "+
			"then run again, with --output FILE --resume to keep the rows written", err, open.Line)
	case errors.As(err, &after):
		return nil, textAfterQuote(after, s.lang)
	case err != nil:
		return nil, err
	}
	for len(fields) > len(s.header) && strings.TrimSpace(fields[len(fields)-1]) == "" {
		fields = fields[:len(fields)-1]
	}
	if len(fields) > len(s.header) {
		return nil, fmt.Errorf("line %d has %d cells but the header has %d: quote a cell that holds the delimiter %q",
			s.rows.Start(), len(fields), len(s.header), s.comma)
	}
	row := make([]string, len(s.header)) // the reader's fields are valid until its next read
	copy(row, fields)
	return row, nil
}

// textAfterQuote is the sentence, in lang, that stops a run at a cell
// whose closing quote text follows: the line, the cell and the text.
func textAfterQuote(e *csvrows.TextAfterQuoteError, lang string) error {
	return &sheetStop{messages.Say(lang, "refusal.sheet_text_after_quote",
		messages.Args{"line": e.Line, "cell": e.Cell, "text": quoteInput(e.Text)}), e}
}

// sheetStop is a sentence that stops the run, said in the run's
// language, and the reader's error behind it.
type sheetStop struct {
	sentence string
	cause    error
}

func (e *sheetStop) Error() string { return e.sentence }
func (e *sheetStop) Unwrap() error { return e.cause }

// sheetWriter writes the output rows: the input's cells, then
// ResultColumns.
type sheetWriter struct {
	csv    *csv.Writer
	format cellFormat
}

// newSheetWriter writes with comma, in English with a decimal point
// until its format is set.
func newSheetWriter(w io.Writer, comma rune) *sheetWriter {
	cw := csv.NewWriter(w)
	cw.Comma = comma
	return &sheetWriter{csv: cw, format: plainCells}
}

// plainCells is the format of a file in English with a decimal point.
var plainCells = cellFormat{lang: messages.English, decimal: '.'}

// writeHeader writes the input's header and ResultColumns; a BOM in,
// a BOM out: Excel then reads the umlauts right.
func (w *sheetWriter) writeHeader(input []string, bom bool) error {
	return w.csv.Write(outputHeader(input, bom))
}

// outputHeader is the header line of the output; the BOM travels in
// its first cell, so that a resumed file can be checked cell by cell.
func outputHeader(input []string, bom bool) []string {
	h := append(append([]string(nil), input...), ResultColumns...)
	if bom {
		h[0] = BOM + h[0]
	}
	return h
}

// writeRow writes an input row with its outcome.
func (w *sheetWriter) writeRow(row []string, out rowOutcome) error {
	return w.csv.Write(append(append(make([]string, 0, len(row)+len(ResultColumns)), row...), out.cells(w.format)...))
}

func (w *sheetWriter) flush() error {
	w.csv.Flush()
	return w.csv.Error()
}

// rowOutcome is what a row resolved to: its best candidate, none with
// the search's notes on why (as answered, and as codes), or the service's
// sentence (in the run's language) on why the row's clue was refused.
type rowOutcome struct {
	best        *companydocs.Candidate
	notes       []string
	noteDetails []companydocs.ReasonDetail
	errCode     string
	errText     string
}

// cells are the result columns of the row in format f: the codes
// (confidence_label, ordering_eligible, an error's code) as the API
// writes them, the sentences in f's language.
func (o rowOutcome) cells(f cellFormat) []string {
	var cells []string
	switch {
	case o.errCode != "":
		cells = []string{"", "", "", "", "", "", "", oneLine(o.errCode + ": " + o.errText)}
	case o.best == nil:
		cells = make([]string, len(ResultColumns)-len(NotReviewed))
		cells[len(cells)-1] = oneLine(notesIn(f.lang, o.notes, o.noteDetails))
	default:
		return CandidateCells(o.best, f.lang, f.decimal)
	}
	return append(cells, NotReviewed...)
}

// CandidateCells are the result columns of a row whose best candidate is
// c, as resolve and the page's download write them: the reasons in lang,
// the confidence with decimal mark decimal (',' or '.'), not reviewed.
func CandidateCells(c *companydocs.Candidate, lang string, decimal byte) []string {
	confidence := strconv.FormatFloat(c.Confidence, 'f', -1, 64)
	if decimal == ',' {
		confidence = strings.Replace(confidence, ".", ",", 1)
	}
	cells := []string{c.ProfileID, c.Name, c.Court, c.RegistryNumber, confidence,
		c.ConfidenceLabel, strconv.FormatBool(c.OrderingEligible), oneLine(reasonsIn(lang, c))}
	return append(cells, NotReviewed...)
}

// reasonsIn says a candidate's reasons in lang, from their codes and
// params (a server's answer says them in English).
func reasonsIn(lang string, c *companydocs.Candidate) string {
	if len(c.ReasonDetails) != len(c.ConfidenceReasons) {
		return strings.Join(c.ConfidenceReasons, reasonSeparator) // an answer without codes: as said
	}
	texts := make([]string, len(c.ReasonDetails))
	for i, d := range c.ReasonDetails {
		texts[i] = resolver.ReasonTextIn(lang, d)
	}
	return strings.Join(texts, reasonSeparator)
}

// notesIn says the notes of a search without candidates in lang, from
// their codes and params (a server's answer says them in English).
func notesIn(lang string, notes []string, details []companydocs.ReasonDetail) string {
	if len(details) != len(notes) {
		return strings.Join(notes, reasonSeparator) // an answer without codes: as said
	}
	texts := make([]string, len(details))
	for i, d := range details {
		texts[i] = resolver.NoteTextIn(lang, d)
	}
	return strings.Join(texts, reasonSeparator)
}

// resumeOutput opens an output file to append to: it counts the complete
// rows written before, cuts a torn last row (the process was killed in
// the middle of a write) and checks that the header is the one this run
// writes and that no row before the last is damaged. A missing or empty
// file starts afresh (rows 0, fresh true).
func resumeOutput(path string, header []string, comma rune, caps Caps) (f *os.File, rows int, fresh bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, 0, false, err
	}
	rows, end, err := completeRows(f, header, comma, caps)
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
// is whole. It reads with the caps of an output (Caps.output), so a
// row of any length costs no more memory than a row at the cap. Only the
// last row may be torn: one that ends the file before its line break, or
// inside a quoted cell. A row before it that this command does not write
// (another number of cells than the header, over a cap, a quote that
// closes nothing) is damage, and the file is refused naming its line.
func completeRows(f *os.File, header []string, comma rune, caps Caps) (rows int, end int64, err error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil || size == 0 {
		return 0, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, 0, err
	}
	out := caps.output()
	r := newRowReader(bufio.NewReaderSize(f, 64<<10), comma, out)
	whole := func() bool { return r.Offset() < size || endsInNewline(f, size) }
	got, err := r.Read()
	if err != nil || !equalRows(got, header) {
		return 0, 0, fmt.Errorf("--resume: %s was not written by this command from this input (its first line is not %s); "+
			"remove it or choose another --output: %w", f.Name(), quoteInput(strings.Join(header, string(comma))), cli.ErrUsage)
	}
	if !whole() {
		return 0, 0, nil
	}
	r.SetLimits(out.Row, out.Field)
	end = r.Offset()
	for {
		row, err := r.Read()
		var open *csvrows.QuoteError
		switch {
		case err == io.EOF, errors.As(err, &open) && open.AtEnd:
			return rows, end, nil
		case err != nil:
			return 0, 0, damagedOutput(f.Name(), r.Start(), err, out)
		case !whole():
			return rows, end, nil
		case len(row) != len(header):
			return 0, 0, damagedOutput(f.Name(), r.Start(), fmt.Errorf("has %d cells, the header %d", len(row), len(header)), out)
		}
		rows, end = rows+1, r.Offset()
	}
}

// damagedOutput is the refusal of an output with a damaged row at line.
func damagedOutput(name string, line int, why error, caps Caps) error {
	var open *csvrows.QuoteError
	var after *csvrows.TextAfterQuoteError
	what := why.Error()
	switch {
	case errors.Is(why, csvrows.ErrRowTooLong):
		what = "is longer than " + companydocs.SizeText(caps.Row)
	case errors.Is(why, csvrows.ErrFieldTooLong):
		what = "has a cell longer than " + companydocs.SizeText(caps.Field)
	case errors.As(why, &open):
		line, what = open.Line, "holds a quote that is not closed ("+open.How+")"
	case errors.As(why, &after):
		line, what = after.Line, fmt.Sprintf("has text after the closing quote of cell %d", after.Cell)
	}
	return fmt.Errorf("--resume: line %d of %s %s: this command did not write it so, the file is damaged or another's; "+
		"remove it or choose another --output: %w", line, name, what, cli.ErrUsage)
}

// oneLine keeps a result cell on one line: a reason or a refusal reads
// as one line in a terminal and in a spreadsheet.
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
