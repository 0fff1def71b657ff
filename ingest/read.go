package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"

	"companydocs"
	"companydocs/internal/csvrows"
)

// Item is one record read from a File: a profile (registry formats), a
// GLEIF record (GLEIF formats), or a skipped line with its reason.
type Item struct {
	// Line is the 1-based line number (for CSV, the line the row starts on).
	Line    int
	Profile *companydocs.Profile
	GLEIF   *GLEIFRecord
	// Skip is set when the line was skipped; the ingest goes on.
	Skip *SkipError
	// Bytes is the size of the line or row the item was decoded from: the
	// read-ahead bounds the bytes in flight by it.
	Bytes int
}

// Limits on unreadable lines: a file in which more than maxInvalidShare of
// the lines (and more than minInvalidLines lines) are not valid records is
// not a damaged file of this format but some other content, and the ingest
// stops on it rather than publishing a mostly empty index.
const (
	minInvalidLines = 100
	maxInvalidShare = 0.05
)

// ReadOption adjusts a File's reading.
type ReadOption func(*File)

// WithMaxLineBytes sets the longest accepted line (DefaultMaxLineBytes).
func WithMaxLineBytes(n int) ReadOption {
	return func(f *File) {
		if n > 0 {
			f.maxLine = n
		}
	}
}

// Read streams the file's records to fn in order. It stops at the first
// error fn returns, when ctx is done, or on a fatal input error (a read or
// decompression error, too many unreadable lines), which names the file and
// line. Skipped lines are passed to fn with Item.Skip set.
func (f *File) Read(ctx context.Context, fn func(Item) error, opts ...ReadOption) error {
	for _, o := range opts {
		o(f)
	}
	if f.Format == FormatGLEIFCSV {
		return f.readCSV(ctx, fn)
	}
	decode, err := f.lineDecoder()
	if err != nil {
		return err
	}
	return f.readLines(ctx, decode, fn)
}

// lineDecoder returns the per-line decoder of a JSONL format.
func (f *File) lineDecoder() (func([]byte) (Item, error), error) {
	switch f.Format {
	case FormatOffeneRegister:
		return profileDecoder(DecodeOffeneRegisterLine), nil
	case FormatCanonical:
		return profileDecoder(DecodeCanonicalLine), nil
	case FormatGLEIFJSON:
		return func(line []byte) (Item, error) {
			rec, err := DecodeGLEIFJSONLine(line)
			return Item{GLEIF: &rec}, err
		}, nil
	}
	return nil, fmt.Errorf("%s: no reader for format %q", f.Name, f.Format)
}

func profileDecoder(decode func([]byte) (*companydocs.Profile, error)) func([]byte) (Item, error) {
	return func(line []byte) (Item, error) {
		p, err := decode(line)
		return Item{Profile: p}, err
	}
}

func (f *File) readLines(ctx context.Context, decode func([]byte) (Item, error), fn func(Item) error) error {
	lr := &lineReader{br: f.content, max: f.maxLine}
	var guard invalidGuard
	for {
		if lr.line%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := lr.next()
		item, err := f.decodeLine(lr.line, line, err, decode)
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if item.Skip == nil && item.Profile == nil && item.GLEIF == nil {
			continue // blank line
		}
		if err := guard.check(f.Name, item); err != nil {
			return err
		}
		if err := fn(item); err != nil {
			return err
		}
	}
}

// decodeLine turns one line (or the line reader's error) into an item.
func (f *File) decodeLine(lineNo int, line []byte, readErr error, decode func([]byte) (Item, error)) (Item, error) {
	switch {
	case readErr == io.EOF:
		return Item{}, io.EOF
	case errors.Is(readErr, errLineTooLong):
		return Item{Line: lineNo, Skip: skipf(ReasonLineTooLong, "over %d bytes", f.maxLine)}, nil
	case readErr != nil:
		return Item{}, fmt.Errorf("%s: line %d: read: %w", f.Name, lineNo+1, readErr)
	}
	if len(trimSpaceBytes(line)) == 0 {
		return Item{}, nil
	}
	item, err := decode(line)
	item.Line, item.Bytes = lineNo, len(line)
	if err != nil {
		var se *SkipError
		if !errors.As(err, &se) {
			return Item{}, fmt.Errorf("%s: line %d: %w", f.Name, lineNo, err)
		}
		item.Profile, item.GLEIF, item.Skip = nil, nil, se
	}
	return item, nil
}

func trimSpaceBytes(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// invalidGuard stops a file whose lines are mostly not records of its format.
type invalidGuard struct{ lines, invalid int }

func (g *invalidGuard) check(name string, item Item) error {
	g.lines++
	if item.Skip == nil || (item.Skip.Reason != ReasonInvalidJSON && item.Skip.Reason != ReasonWrongColumns) {
		return nil
	}
	g.invalid++
	if g.invalid > minInvalidLines && float64(g.invalid) > maxInvalidShare*float64(g.lines) {
		return fmt.Errorf("%s: line %d: %d of %d lines are not valid records (%s); the file is damaged or not in this format", name, item.Line, g.invalid, g.lines, item.Skip)
	}
	return nil
}

// readCSV streams a GLEIF golden-copy CSV: header first, then one record
// per row. A row over the maximum line size is skipped and reported.
func (f *File) readCSV(ctx context.Context, fn func(Item) error) error {
	cr := csvrows.New(f.content, csvrows.Options{MaxRow: f.maxLine})
	header, err := cr.Read()
	if errors.Is(err, csvrows.ErrRowTooLong) {
		return fmt.Errorf("%s: line 1: the golden-copy header is over %d bytes", f.Name, f.maxLine)
	} else if err != nil {
		return fmt.Errorf("%s: line 1: read golden-copy header: %w", f.Name, err)
	}
	cols, err := NewGLEIFColumns(header)
	if err != nil {
		return fmt.Errorf("%s: line 1: %w", f.Name, err)
	}
	var guard invalidGuard
	for rows := 0; ; rows++ {
		if rows%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		item, err := f.csvItem(cr, cols)
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		if err := guard.check(f.Name, item); err != nil {
			return err
		}
		if err := fn(item); err != nil {
			return err
		}
	}
}

func (f *File) csvItem(cr *csvrows.Reader, cols *GLEIFColumns) (Item, error) {
	row, err := cr.Read()
	switch {
	case err == io.EOF:
		return Item{}, io.EOF
	case errors.Is(err, csvrows.ErrRowTooLong):
		return Item{Line: cr.Start(), Skip: skipf(ReasonRowTooLong, "over %d bytes", f.maxLine)}, nil
	case err != nil:
		return Item{}, fmt.Errorf("%s: line %d: read: %w", f.Name, cr.Line()+1, err)
	}
	rec, err := cols.Record(row)
	item := Item{Line: cr.Start(), GLEIF: &rec, Bytes: cr.Size()}
	if err != nil {
		var se *SkipError
		if !errors.As(err, &se) {
			return Item{}, fmt.Errorf("%s: line %d: %w", f.Name, cr.Start(), err)
		}
		item.GLEIF, item.Skip = nil, se
	}
	return item, nil
}
