package bench

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// maxLine is the longest JSONL line read; real records stay far below.
const maxLine = 16 << 20

// OpenDump opens a plain, .gz or .bz2 dump file for reading.
func OpenDump(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dump: %w", err)
	}
	switch {
	case strings.HasSuffix(path, ".bz2"):
		return readCloser{bzip2.NewReader(bufio.NewReaderSize(f, 1<<20)), f}, nil
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open dump %q: %w", path, err)
		}
		return readCloser{zr, f}, nil
	}
	return f, nil
}

type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }

// lineBatch is a run of consecutive lines of one file.
type lineBatch struct {
	lines [][]byte
}

// ScanRecords decodes every record of the dump files with workers
// goroutines and calls fn(worker, record) for each; fn runs concurrently
// for different workers, never for the same one. Lines that are not
// records are skipped. The order of calls is not defined.
func ScanRecords(paths []string, workers int, fn func(worker int, r *Record)) error {
	workers = max(1, workers)
	batches := make(chan lineBatch, 4*workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				decodeBatch(w, b, fn)
			}
		}()
	}
	errs := make(chan error, len(paths))
	var readers sync.WaitGroup
	sem := make(chan struct{}, workers)
	for _, p := range paths {
		readers.Add(1)
		sem <- struct{}{}
		go func() {
			defer readers.Done()
			defer func() { <-sem }()
			errs <- readLines(p, batches)
		}()
	}
	readers.Wait()
	close(batches)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func decodeBatch(worker int, b lineBatch, fn func(int, *Record)) {
	for _, line := range b.lines {
		var r Record
		if json.Unmarshal(line, &r) != nil || r.CompanyNumber == "" {
			continue
		}
		fn(worker, &r)
	}
}

// readLines sends the lines of one dump in batches of 1,000.
func readLines(path string, out chan<- lineBatch) error {
	rc, err := OpenDump(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 1<<20), maxLine)
	var b lineBatch
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		b.lines = append(b.lines, bytes.Clone(line))
		if len(b.lines) == 1000 {
			out <- b
			b = lineBatch{}
		}
	}
	if len(b.lines) > 0 {
		out <- b
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read dump %q: %w", path, err)
	}
	return nil
}
