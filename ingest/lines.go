package ingest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// DefaultMaxLineBytes is the longest line a JSONL reader accepts; longer
// lines are skipped and counted, never held in memory whole.
const DefaultMaxLineBytes = 1 << 20

// lineReader splits content into lines, counting them from 1, and skips
// lines longer than max without buffering them.
type lineReader struct {
	br   *bufio.Reader
	max  int
	line int
	buf  []byte
}

// errLineTooLong marks a line that exceeded the maximum line size.
var errLineTooLong = errors.New("line longer than the maximum line size")

// next returns the next line without its line ending. At the end of input
// it returns io.EOF; a line over the limit gives errLineTooLong (the caller
// may go on reading); any other error is a read error.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(chunk) > l.max+2 { // +2: the line ending
				tooLong, l.buf = true, l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && (len(l.buf) > 0 || tooLong):
			err = nil // last line without a line ending
		case err != nil:
			return nil, err
		}
		l.line++
		line := bytes.TrimRight(l.buf, "\r\n")
		if tooLong || len(line) > l.max {
			return nil, errLineTooLong
		}
		return line, nil
	}
}
