package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Staged is a file being received under a temporary name: written, read
// back as often as needed, then published under its final name
// (Publish) or discarded.
type Staged struct {
	f    *os.File
	size int64
}

// Stage creates an empty temporary file in dir (created if missing; the
// system's temporary directory when dir is "").
func Stage(dir, pattern string) (*Staged, error) {
	if dir == "" {
		dir = os.TempDir()
	} else if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Join(dir, pattern), err)
	}
	return &Staged{f: f}, nil
}

// Write appends p to the staged file.
func (s *Staged) Write(p []byte) (int, error) {
	n, err := s.f.Write(p)
	s.size += int64(n)
	return n, err
}

// Reader reads the staged file from its start; each call is a new
// reader, for a caller that reads it more than once.
func (s *Staged) Reader() io.Reader {
	return io.NewSectionReader(s.f, 0, s.size)
}

// Publish makes the staged file durable under final (see Publish); the
// staged file is gone afterwards, and Discard does nothing.
func (s *Staged) Publish(final string) error {
	return Publish(s.f, final)
}

// Discard closes and removes the staged file (gone already once
// published).
func (s *Staged) Discard() {
	s.f.Close()
	os.Remove(s.f.Name())
}

// RemoveStaged removes every file in dir, the staged files a crash left
// behind; a missing dir holds none.
func RemoveStaged(dir string) error {
	files, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", dir, err)
	}
	for _, f := range files {
		if err := os.Remove(filepath.Join(dir, f.Name())); err != nil {
			return fmt.Errorf("remove an unfinished file: %w", err)
		}
	}
	return nil
}
