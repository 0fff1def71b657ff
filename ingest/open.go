package ingest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// Compression names the container an input file came in.
type Compression string

// Compressions recognised by their magic bytes.
const (
	CompressionNone  Compression = "none"
	CompressionGzip  Compression = "gzip"
	CompressionBzip2 Compression = "bzip2"
	CompressionZip   Compression = "zip"
)

// sniffSize is how much decompressed content format detection may look at:
// the first non-empty line must fit.
const sniffSize = 1 << 20

// File is an opened input: decompressed, its format known, ready to Read.
type File struct {
	// Name is the path the file was opened with, used in messages.
	Name string
	// Format is the detected (or forced) format.
	Format Format
	// Compression is the container the content came in.
	Compression Compression
	// Size is the size of the file on disk (compressed), 0 if unknown.
	Size int64

	raw      *countingReader
	content  *bufio.Reader
	closers  []io.Closer
	maxLine  int
	prefetch bool
}

// Open opens path, detects its compression by magic bytes and its format
// from the first non-empty line (unless format is not FormatAuto), and
// returns a File positioned at the start of the content.
func Open(path string, format Format) (*File, error) {
	return open(path, format, true)
}

// open opens path; with prefetch, decompression runs ahead in its own
// goroutine (for reading the whole file; detection alone should not pay
// for decompressing megabytes it never looks at).
func open(path string, format Format, prefetch bool) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	file := &File{Name: path, closers: []io.Closer{f}, maxLine: DefaultMaxLineBytes, prefetch: prefetch}
	if err := file.init(f, format); err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}

func (f *File) init(osf *os.File, format Format) error {
	if st, err := osf.Stat(); err == nil && st.Mode().IsRegular() {
		f.Size = st.Size()
	}
	f.raw = &countingReader{r: osf}
	br := bufio.NewReaderSize(f.raw, 256<<10)
	content, err := f.decompress(osf, br)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	f.content = bufio.NewReaderSize(content, sniffSize)
	if format == FormatAuto {
		format, err = f.detect()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	f.Format = format
	return nil
}

// decompress picks the decompressor by the magic bytes at the start of br.
func (f *File) decompress(osf *os.File, br *bufio.Reader) (io.Reader, error) {
	magic, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		f.Compression = CompressionGzip
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip header: %w", err)
		}
		return f.async(zr), nil
	case bytes.HasPrefix(magic, []byte("BZh")):
		f.Compression = CompressionBzip2
		return f.async(bzip2.NewReader(br)), nil
	case bytes.HasPrefix(magic, []byte("PK\x03\x04")):
		f.Compression = CompressionZip
		return f.openZip(osf, br)
	}
	f.Compression = CompressionNone
	return br, nil
}

// async decompresses in its own goroutine so that decompression and parsing
// overlap on two cores.
func (f *File) async(r io.Reader) io.Reader {
	if !f.prefetch {
		return r
	}
	ar := newAsyncReader(r)
	f.closers = append(f.closers, ar)
	return ar
}

// openZip opens the first .csv member of a zip archive (as GLEIF publishes
// its golden copy). zip needs random access: a file that is not a regular
// file (a pipe) is spooled to a temporary file first.
func (f *File) openZip(osf *os.File, br *bufio.Reader) (io.Reader, error) {
	ra, size := io.ReaderAt(&countingReaderAt{r: osf, n: &f.raw.n}), f.Size
	if size == 0 {
		tmp, n, err := spool(br)
		if err != nil {
			return nil, err
		}
		f.closers = append(f.closers, tmp)
		ra, size = tmp, n
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("zip archive: %w", err)
	}
	for _, m := range zr.File {
		if strings.EqualFold(filepath.Ext(m.Name), ".csv") {
			rc, err := m.Open()
			if err != nil {
				return nil, fmt.Errorf("zip member %q: %w", m.Name, err)
			}
			f.closers = append(f.closers, rc)
			return f.async(rc), nil
		}
	}
	return nil, errors.New("zip archive holds no .csv file")
}

// spooledFile is a temporary file removed on Close.
type spooledFile struct{ *os.File }

func (s spooledFile) Close() error {
	err := s.File.Close()
	os.Remove(s.File.Name())
	return err
}

func spool(r io.Reader) (spooledFile, int64, error) {
	tmp, err := os.CreateTemp("", "companydocs-ingest-*.zip")
	if err != nil {
		return spooledFile{}, 0, fmt.Errorf("spool zip archive: %w", err)
	}
	n, err := io.Copy(tmp, r)
	if err != nil {
		spooledFile{tmp}.Close()
		return spooledFile{}, 0, fmt.Errorf("spool zip archive: %w", err)
	}
	return spooledFile{tmp}, n, nil
}

// detect reads (without consuming) the first non-empty line.
func (f *File) detect() (Format, error) {
	// A read error (a truncated stream) is reported here only if it cuts
	// the first line; otherwise Read meets it again and names its line.
	buf, readErr := f.peekFirstLine()
	lineNo := 0
	for len(buf) > 0 {
		lineNo++
		line, rest, found := bytes.Cut(buf, []byte("\n"))
		if !found && readErr != nil {
			return FormatAuto, fmt.Errorf("line %d: read: %w", lineNo, readErr)
		}
		if !found && len(buf) == sniffSize {
			return FormatAuto, fmt.Errorf("line %d: first line is longer than %d bytes; not a known format", lineNo, sniffSize)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if format, ok := sniffLine(line); ok {
				return format, nil
			}
			return FormatAuto, fmt.Errorf("line %d: content is not a known format (want OffeneRegister JSONL, canonical JSONL, GLEIF golden-copy CSV or GLEIF API JSONL)", lineNo)
		}
		buf = rest
	}
	if readErr != nil {
		return FormatAuto, fmt.Errorf("line %d: read: %w", lineNo+1, readErr)
	}
	return FormatAuto, errors.New("file is empty")
}

// peekFirstLine peeks at growing prefixes of the content until one holds a
// non-empty line, the content ends, or sniffSize is reached.
func (f *File) peekFirstLine() ([]byte, error) {
	for n := 64 << 10; ; n *= 2 {
		n = min(n, sniffSize)
		buf, err := f.content.Peek(n)
		if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			err = nil
		}
		if err != nil || len(buf) < n || n == sniffSize || hasNonEmptyLine(buf) {
			return buf, err
		}
	}
}

func hasNonEmptyLine(buf []byte) bool {
	for len(buf) > 0 {
		line, rest, found := bytes.Cut(buf, []byte("\n"))
		if !found {
			return false
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return true
		}
		buf = rest
	}
	return false
}

// BytesRead returns how many bytes of the file on disk have been read so far.
func (f *File) BytesRead() int64 { return f.raw.n.Load() }

// Close releases the file and any decompressor goroutine.
func (f *File) Close() error {
	var first error
	for i := len(f.closers) - 1; i >= 0; i-- {
		if err := f.closers[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	f.closers = nil
	return first
}

// countingReader counts the bytes read through it, for progress reports
// from another goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countingReaderAt counts bytes read through ReadAt (zip archives).
type countingReaderAt struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}
