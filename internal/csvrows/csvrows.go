// Package csvrows reads CSV records as encoding/csv does with LazyQuotes
// set, but with bounded memory: encoding/csv keeps a whole line and a
// whole record in memory, so one field of a gigabyte costs gigabytes.
// Both the ingest (GLEIF files) and the resolve command read with it.
package csvrows

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Options bound a Reader and say how strictly it reads quotes.
type Options struct {
	// Comma separates the fields; ',' when 0.
	Comma byte
	// MaxRow bounds the raw bytes of one record, quotes and line breaks
	// included.
	MaxRow int
	// MaxField, when over 0, bounds the bytes of one field's content.
	MaxField int
	// CheckQuotes reports a quote left open (QuoteError), and text after
	// a closing quote in a cell that then runs over its line's end
	// (TextAfterQuoteError), instead of reading the rest of the input
	// into its field as encoding/csv does. It needs MaxField.
	CheckQuotes bool
}

// Reader reads CSV records exactly as encoding/csv does with LazyQuotes
// set (no comment character, any number of fields) as long as no cap of
// its Options is reached and CheckQuotes is off, and holds at most
// MaxRow bytes of one record. A longer record, or one with a longer
// field, is read to its end (outside quotes) without being kept, and
// reported as ErrRowTooLong or ErrFieldTooLong; reading goes on after
// it. FuzzCSVRowsMatchEncodingCSV holds the two readers to the same
// records.
type Reader struct {
	br  *bufio.Reader
	opt Options

	// line counts the lines read; start is the line the current record
	// starts on (1-based); quoteLine the line its open quote is on.
	line, start, quoteLine int
	offset                 int64 // bytes read, to the end of the last record
	state                  state
	// pendingCR is a '\r' at the end of a chunk: dropped if a '\n' follows
	// (a CRLF line end) or the input ends, kept as content otherwise.
	pendingCR bool
	size      int  // raw bytes of the current record so far
	fieldSize int  // content bytes of the current field so far
	crossed   bool // the current field is quoted and holds a line break
	cells     int  // fields of the current record ended so far
	// textAfterQuote is the first text after a closing quote in the current
	// quoted field, on its first line (CheckQuotes only); the text starts
	// at textAt in buf.
	textAfterQuote *TextAfterQuoteError
	textAt         int
	refused        error // why the current record's content is dropped, or nil
	failed         error // a *QuoteError or *TextAfterQuoteError: reading cannot go on
	buf            []byte
	ends           []int // end offset in buf of each field
	fields         []string
}

type state int

const (
	recordStart state = iota // between records; empty lines are skipped
	fieldStart               // after a comma
	unquoted
	quoted
	quote // in a quoted field, just after a '"'
)

// ErrRowTooLong marks a record over MaxRow; the reader is positioned
// after it.
var ErrRowTooLong = errors.New("row longer than the maximum row size")

// ErrFieldTooLong marks a record with a field over MaxField; the reader
// is positioned after it.
var ErrFieldTooLong = errors.New("field longer than the maximum field size")

// QuoteError is a quote that opens a field and is not closed where a
// quote can close (before the delimiter or a line end): the input ends
// first, or the field runs over a line break and then holds a quote
// that closes nothing, or grows past MaxField. Reading stops there: the
// records after it cannot be told apart.
type QuoteError struct {
	Line  int    // where the quote opened
	How   string // what showed it open
	AtEnd bool   // the input ended with the quote open
}

func (e *QuoteError) Error() string {
	return fmt.Sprintf("the quote opened on line %d is not closed: %s", e.Line, e.How)
}

// TextAfterQuoteError is a quoted field whose closing quote is followed by
// text on its line ("Foo GmbH"x;Berlin) and which then reaches the line's
// end: encoding/csv would take the quote as text and read on to the next
// quote, merging the rows between into the field. Reading stops there. A
// field that ends on its line all the same ("a "b" c";d) is read as
// encoding/csv reads it.
type TextAfterQuoteError struct {
	Line int    // the line of the closing quote and the text
	Cell int    // the field's place in its record, from 1
	Text string // the text after the quote, its first maxTextAfterQuote bytes
}

func (e *TextAfterQuoteError) Error() string {
	return fmt.Sprintf("on line %d, cell %d has text after its closing quote: %q", e.Line, e.Cell, e.Text)
}

// maxTextAfterQuote bounds the text a TextAfterQuoteError keeps: enough
// to find the cell by.
const maxTextAfterQuote = 64

// New returns a Reader of br.
func New(br *bufio.Reader, opt Options) *Reader {
	if opt.Comma == 0 {
		opt.Comma = ','
	}
	return &Reader{br: br, opt: opt}
}

// SetLimits sets the caps of the records read next: a header line may
// have caps of its own.
func (r *Reader) SetLimits(maxRow, maxField int) {
	r.opt.MaxRow, r.opt.MaxField = maxRow, maxField
}

// Start is the line the last record read starts on (1-based).
func (r *Reader) Start() int { return r.start }

// Line is the number of lines read.
func (r *Reader) Line() int { return r.line }

// Size is the raw size of the last record read, in bytes.
func (r *Reader) Size() int { return r.size }

// Offset is the number of bytes read, to the end of the last record.
func (r *Reader) Offset() int64 { return r.offset }

// Read returns the next record's fields, valid until the next call. At the
// end of the input it returns io.EOF; a record over a cap gives
// ErrRowTooLong or ErrFieldTooLong (the caller may go on reading), a
// quote left open a *QuoteError, text after a closing quote a
// *TextAfterQuoteError (every later call returns either too); any other
// error is a read error.
func (r *Reader) Read() ([]string, error) {
	if r.failed != nil {
		return nil, r.failed
	}
	r.buf, r.ends, r.refused, r.size = r.buf[:0], r.ends[:0], nil, 0
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		r.offset += int64(len(chunk))
		if r.state == recordStart {
			r.size = 0 // empty lines before a record do not count
		}
		r.size += len(chunk)
		if r.size > r.opt.MaxRow {
			r.refuse(ErrRowTooLong)
		}
		done := r.chunk(chunk, err)
		if r.failed != nil {
			return nil, r.failed
		}
		if err == io.EOF && !done {
			done = r.endOfInput()
			if r.failed != nil {
				return nil, r.failed
			}
			if !done {
				return nil, io.EOF
			}
		}
		if done {
			return r.record()
		}
	}
}

// refuse drops the current record's content from here on; the first
// cap reached is the one reported.
func (r *Reader) refuse(why error) {
	if r.refused == nil {
		r.refused, r.buf, r.ends = why, r.buf[:0], r.ends[:0]
	}
}

// chunk feeds one piece of a line to the state machine; it reports whether
// a record ended with it.
func (r *Reader) chunk(chunk []byte, err error) bool {
	eol := err == nil // ReadSlice stopped at '\n'
	body := chunk
	if eol {
		body = body[:len(body)-1]
	}
	if r.pendingCR {
		r.pendingCR = false
		if !(eol && len(body) == 0) && !(err == io.EOF && len(body) == 0) {
			r.scan([]byte{'\r'})
		}
	}
	if n := len(body); n > 0 && body[n-1] == '\r' {
		body = body[:n-1]
		if !eol && err != io.EOF {
			r.pendingCR = true // decided by the next chunk
		}
	}
	r.scan(body)
	if !eol || r.failed != nil {
		return false
	}
	return r.endOfLine()
}

// scan runs the state machine over content without line ends.
func (r *Reader) scan(b []byte) {
	for len(b) > 0 && r.failed == nil {
		switch r.state {
		case recordStart, fieldStart:
			b = r.fieldBegins(b)
		case unquoted:
			var found bool
			if b, found = r.runTo(b, r.opt.Comma); found {
				r.endField()
				r.state = fieldStart
			}
		case quoted:
			var found bool
			if b, found = r.runTo(b, '"'); found {
				r.state = quote
			}
		case quote:
			b = r.afterQuote(b)
		}
	}
}

// fieldBegins reads the first byte of a field: a quote opens a quoted
// field, a comma ends an empty one.
func (r *Reader) fieldBegins(b []byte) []byte {
	if r.state == recordStart {
		r.start, r.cells = r.line+1, 0
	}
	switch b[0] {
	case '"':
		r.state, r.quoteLine, r.crossed, r.textAfterQuote = quoted, r.line+1, false, nil
		return b[1:]
	case r.opt.Comma:
		r.endField()
		r.state = fieldStart
		return b[1:]
	}
	r.state = unquoted
	return b
}

// runTo adds the field's content up to the next stop byte and returns
// what follows that byte; without one it adds all of b.
func (r *Reader) runTo(b []byte, stop byte) (rest []byte, found bool) {
	i := bytes.IndexByte(b, stop)
	if i < 0 {
		r.add(b)
		return nil, false
	}
	r.add(b[:i])
	return b[i+1:], true
}

// afterQuote reads the byte after a quote inside a quoted field.
func (r *Reader) afterQuote(b []byte) []byte {
	switch b[0] {
	case '"': // an escaped quote
		r.add(b[:1])
		r.state = quoted
		return b[1:]
	case r.opt.Comma:
		r.endField()
		r.state = fieldStart
		return b[1:]
	}
	// a bare quote, taken literally
	if r.opt.CheckQuotes && r.crossed {
		r.fail(fmt.Sprintf("on line %d a quote inside its cell closes nothing", r.line+1))
		return nil
	}
	r.add([]byte{'"'})
	if r.opt.CheckQuotes && r.textAfterQuote == nil {
		r.textAfterQuote, r.textAt = &TextAfterQuoteError{Line: r.line + 1, Cell: r.cells + 1}, len(r.buf)
	}
	r.state = quoted
	return b
}

// endOfLine handles a line end; it reports whether the record ended.
func (r *Reader) endOfLine() bool {
	r.line++
	switch r.state {
	case recordStart:
		return false // an empty line
	case quoted:
		if r.textAfterQuote != nil { // the field was closed, then text followed
			r.stopAfterQuote()
			return false
		}
		r.crossed = true
		r.add([]byte{'\n'}) // a line break inside a quoted field
		return false
	}
	r.endField()
	r.state = recordStart
	return true
}

// endOfInput ends the input; it reports whether a last record ended there.
func (r *Reader) endOfInput() bool {
	if r.state == recordStart {
		return false
	}
	if r.textAfterQuote != nil && r.state == quoted {
		r.stopAfterQuote()
		return false
	}
	if r.opt.CheckQuotes && r.state == quoted {
		r.fail("the input ends first")
		r.failed.(*QuoteError).AtEnd = true
		return false
	}
	r.line++
	r.endField()
	r.state = recordStart
	return true
}

// add appends field content; past MaxField the record is refused. A
// quoted field that has run over a line break and past MaxField is
// taken for a quote left open: a cell that long on many lines is rarer
// than a forgotten quote, and reading on would swallow the rows after it.
func (r *Reader) add(b []byte) {
	r.fieldSize += len(b)
	if r.opt.MaxField > 0 && r.fieldSize > r.opt.MaxField {
		if r.opt.CheckQuotes && r.crossed {
			r.fail(fmt.Sprintf("its cell runs over line breaks and past %d bytes", r.opt.MaxField))
			return
		}
		r.refuse(ErrFieldTooLong)
	}
	if r.refused == nil {
		r.buf = append(r.buf, b...)
	}
}

func (r *Reader) fail(how string) {
	if r.opt.CheckQuotes {
		r.failed = &QuoteError{Line: r.quoteLine, How: how}
	}
}

// stopAfterQuote stops reading at the text after a closing quote, which
// buf holds unless the record was refused over a cap.
func (r *Reader) stopAfterQuote() {
	if r.refused == nil {
		r.textAfterQuote.Text = head(r.buf[r.textAt:], maxTextAfterQuote)
	}
	r.failed = r.textAfterQuote
}

func (r *Reader) endField() {
	r.fieldSize, r.crossed, r.textAfterQuote = 0, false, nil
	r.cells++
	if r.refused == nil {
		r.ends = append(r.ends, len(r.buf))
	}
}

// head is the first bytes of b, at most n, cut before a character that
// does not fit whole (b holds whole characters).
func head(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n])
}

// record returns the fields of the record just ended.
func (r *Reader) record() ([]string, error) {
	if r.refused != nil {
		return nil, r.refused
	}
	s := string(r.buf) // one allocation for all fields, as encoding/csv does
	r.fields = r.fields[:0]
	prev := 0
	for _, end := range r.ends {
		r.fields = append(r.fields, s[prev:end])
		prev = end
	}
	return r.fields, nil
}
