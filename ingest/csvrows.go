package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// csvRows reads CSV records exactly as encoding/csv does with LazyQuotes
// set (comma separator, no comment character, any number of fields), but
// holds at most max bytes of one record: encoding/csv keeps a whole line
// and a whole record in memory, so one quoted field of a gigabyte costs
// gigabytes. A longer record is read to its end (outside quotes) without
// being kept, and reported as errRowTooLong; reading goes on after it.
// FuzzCSVRowsMatchEncodingCSV holds the two readers to the same records.
type csvRows struct {
	br  *bufio.Reader
	max int

	// line counts the lines read; start is the line the current record
	// starts on (1-based).
	line, start int
	state       csvState
	// pendingCR is a '\r' at the end of a chunk: dropped if a '\n' follows
	// (a CRLF line end) or the input ends, kept as content otherwise.
	pendingCR bool
	size      int  // raw bytes of the current record so far
	tooLong   bool // the current record is over max: its content is dropped
	buf       []byte
	ends      []int // end offset in buf of each field
	fields    []string
}

type csvState int

const (
	csvRecordStart csvState = iota // between records; empty lines are skipped
	csvFieldStart                  // after a comma
	csvUnquoted
	csvQuoted
	csvQuote // in a quoted field, just after a '"'
)

// errRowTooLong marks a record over the maximum size; the reader is
// positioned after it.
var errRowTooLong = errors.New("row longer than the maximum row size")

// Read returns the next record's fields, valid until the next call. At the
// end of the input it returns io.EOF; a record over the limit gives
// errRowTooLong (the caller may go on reading); any other error is a read
// error.
func (r *csvRows) Read() ([]string, error) {
	r.buf, r.ends, r.tooLong, r.size = r.buf[:0], r.ends[:0], false, 0
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		if r.state == csvRecordStart {
			r.size = 0 // empty lines before a record do not count
		}
		r.size += len(chunk)
		if r.size > r.max && !r.tooLong {
			r.tooLong, r.buf, r.ends = true, r.buf[:0], r.ends[:0]
		}
		done := r.chunk(chunk, err)
		if err == io.EOF && !done {
			done = r.endOfInput()
			if !done {
				return nil, io.EOF
			}
		}
		if done {
			return r.record()
		}
	}
}

// chunk feeds one piece of a line to the state machine; it reports whether
// a record ended with it.
func (r *csvRows) chunk(chunk []byte, err error) bool {
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
	if !eol {
		return false
	}
	return r.endOfLine()
}

// scan runs the state machine over content without line ends.
func (r *csvRows) scan(b []byte) {
	for len(b) > 0 {
		switch r.state {
		case csvRecordStart, csvFieldStart:
			if r.state == csvRecordStart {
				r.start = r.line + 1
			}
			switch b[0] {
			case '"':
				r.state, b = csvQuoted, b[1:]
			case ',':
				r.endField()
				r.state, b = csvFieldStart, b[1:]
			default:
				r.state = csvUnquoted
			}
		case csvUnquoted:
			i := bytes.IndexByte(b, ',')
			if i < 0 {
				r.add(b)
				return
			}
			r.add(b[:i])
			r.endField()
			r.state, b = csvFieldStart, b[i+1:]
		case csvQuoted:
			i := bytes.IndexByte(b, '"')
			if i < 0 {
				r.add(b)
				return
			}
			r.add(b[:i])
			r.state, b = csvQuote, b[i+1:]
		case csvQuote:
			switch b[0] {
			case '"': // an escaped quote
				r.add(b[:1])
				r.state, b = csvQuoted, b[1:]
			case ',':
				r.endField()
				r.state, b = csvFieldStart, b[1:]
			default: // a bare quote, taken literally
				r.add([]byte{'"'})
				r.state = csvQuoted
			}
		}
	}
}

// endOfLine handles a line end; it reports whether the record ended.
func (r *csvRows) endOfLine() bool {
	r.line++
	switch r.state {
	case csvRecordStart:
		return false // an empty line
	case csvQuoted:
		r.add([]byte{'\n'}) // a line break inside a quoted field
		return false
	}
	r.endField()
	r.state = csvRecordStart
	return true
}

// endOfInput ends the input; it reports whether a last record ended there.
func (r *csvRows) endOfInput() bool {
	if r.state == csvRecordStart {
		return false
	}
	r.line++
	r.endField()
	r.state = csvRecordStart
	return true
}

func (r *csvRows) add(b []byte) {
	if !r.tooLong {
		r.buf = append(r.buf, b...)
	}
}

func (r *csvRows) endField() {
	if !r.tooLong {
		r.ends = append(r.ends, len(r.buf))
	}
}

// record returns the fields of the record just ended.
func (r *csvRows) record() ([]string, error) {
	if r.tooLong {
		return nil, errRowTooLong
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
