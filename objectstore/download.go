package objectstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"companydocs/internal/atomicfile"
	"companydocs/internal/filesum"
)

// partSuffix marks a file being downloaded: it gets its final name only
// once it has been checked.
const partSuffix = ".part"

// ErrDamaged says that an object differs from the size or SHA-256 listed
// for its file. Download removes what it read of it, so that another try
// fetches the file anew; the same error again means that the published
// generation itself is damaged, and Upload replaces such an object when
// the size or SHA-256 metadata differs.
var ErrDamaged = errors.New("object damaged")

// ErrBadManifest says that a list of files to download names a path
// outside the generation, a negative size or a file twice: the manifest
// itself is damaged or hostile, and another try meets it again.
var ErrBadManifest = errors.New("manifest refused")

// A fetch is what Download does for one file: keep it, or read its object
// from offset on into its partial file.
type fetch struct {
	File
	offset int64
	keep   bool
}

// Download fetches name's files into dir (created if missing), each from
// its object (File.Key: its own, or an earlier generation's). It resumes:
// a file present with its size and SHA-256 is kept, a shorter partial file
// ("<path>.part") is continued from its length with a range read, and
// anything else is fetched anew. Every file is checked against its size and
// SHA-256 and only then renamed from its partial name to its own (the file
// synced first, its directory after). Reads are limited to rate bytes a
// second when rate > 0; memory is one copy buffer whatever the file sizes;
// progress, when not nil, is told the bytes read so far and the bytes the
// download reads in all (files kept and parts on disk are not counted). A
// damaged object is an ErrDamaged naming the file, and its partial file is
// removed so that the next try starts it anew; a partial file cut short by
// any other error is kept and continued by the next try.
func (s *Store) Download(ctx context.Context, name, dir string, files []File, rate int64, progress func(done, total int64)) error {
	if err := checkName(name); err != nil {
		return fmt.Errorf("%w: %w", ErrBadManifest, err)
	}
	if err := checkFiles(files); err != nil {
		return fmt.Errorf("%w: %w", ErrBadManifest, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download generation %s: %w", name, err)
	}
	t := newTransfer(rate, progress)
	fetches, err := planFetches(dir, files, t)
	if err != nil {
		return fmt.Errorf("download generation %s: %w", name, err)
	}
	for _, f := range fetches {
		if f.keep {
			continue
		}
		if err := s.fetchFile(ctx, t, name, dir, f); err != nil {
			return fmt.Errorf("download generation %s: %w", name, err)
		}
	}
	return nil
}

// planFetches decides for every file whether it is kept, continued or
// fetched anew, removing what cannot be kept or continued, and sets the
// bytes t has to read.
func planFetches(dir string, files []File, t *transfer) ([]fetch, error) {
	fetches := make([]fetch, len(files))
	for i, f := range files {
		fe, err := planFetch(dir, f)
		if err != nil {
			return nil, fmt.Errorf("file %s: %w", f.Path, err)
		}
		fetches[i] = fe
		if !fe.keep {
			t.total += f.Size - fe.offset
		}
	}
	return fetches, nil
}

func planFetch(dir string, f File) (fetch, error) {
	final := filepath.Join(dir, filepath.FromSlash(f.Path))
	keep, err := hasFile(final, f)
	if err != nil {
		return fetch{}, err
	}
	part := final + partSuffix
	if keep {
		return fetch{File: f, keep: true}, removeIfThere(part)
	}
	if err := removeIfThere(final); err != nil {
		return fetch{}, err
	}
	st, err := os.Stat(part)
	if errors.Is(err, fs.ErrNotExist) {
		return fetch{File: f}, nil
	} else if err != nil {
		return fetch{}, err
	}
	if st.Mode().IsRegular() && st.Size() < f.Size {
		return fetch{File: f, offset: st.Size()}, nil
	}
	return fetch{File: f}, removeIfThere(part)
}

// hasFile reports whether the file at path has f's size and SHA-256. A
// file this process hashed before and that was not written since is not
// read again (internal/filesum): most files of a download are hard links
// to the files of the generation the node serves, which it hashed when it
// opened that one.
func hasFile(path string, f File) (bool, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || st.Size() != f.Size {
		return false, nil
	}
	size, sum, err := filesum.SHA256(path)
	if err != nil {
		return false, err
	}
	return size == f.Size && sum == f.SHA256, nil
}

func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// fetchFile reads f's object into its partial file from f.offset on,
// checks the whole file and gives it its name.
func (s *Store) fetchFile(ctx context.Context, t *transfer, name, dir string, f fetch) error {
	final := filepath.Join(dir, filepath.FromSlash(f.Path))
	part := final + partSuffix
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("file %s: %w", f.Path, err)
	}
	out, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("file %s: %w", f.Path, err)
	}
	if err := s.fill(ctx, t, f.Key(name), f, out); err != nil {
		out.Close()
		if errors.Is(err, ErrDamaged) {
			return errors.Join(err, removeIfThere(part))
		}
		return err
	}
	if err := atomicfile.Publish(out, final); err != nil {
		return fmt.Errorf("file %s: %w", f.Path, err)
	}
	return nil
}

// fill hashes the first f.offset bytes of out, appends the rest of the
// object and checks the whole against f.
func (s *Store) fill(ctx context.Context, t *transfer, key string, f fetch, out *os.File) error {
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(out, f.offset), t.buf)
	if err == nil && n != f.offset {
		err = fmt.Errorf("partial file has %d bytes, %d expected", n, f.offset)
	}
	if err == nil {
		err = out.Truncate(f.offset)
	}
	if err != nil {
		return fmt.Errorf("file %s: %w", f.Path, err)
	}
	if err := s.readObject(ctx, t, key, f, io.MultiWriter(out, h)); err != nil {
		return err
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return fmt.Errorf("file %s: object %s has SHA-256 %s, %s listed: %w", f.Path, key, sum, f.SHA256, ErrDamaged)
	}
	return nil
}

// readObject copies the object key from f.offset on into w, checking its
// length against f.Size.
func (s *Store) readObject(ctx context.Context, t *transfer, key string, f fetch, w io.Writer) error {
	rctx, wd := s.watch(ctx)
	defer wd.stop()
	r, err := s.bucket.NewRangeReader(rctx, key, f.offset, -1, nil)
	if err != nil {
		return s.openFailed(ctx, key, f, wd.cause(err))
	}
	defer r.Close()
	if r.Size() != f.Size {
		return fmt.Errorf("file %s: object %s has %d bytes, %d listed: %w", f.Path, key, r.Size(), f.Size, ErrDamaged)
	}
	n, err := pump(w, r, t.buf, func(n int) error {
		if err := wd.touch(); err != nil {
			return err
		}
		return wd.paused(func() error { return t.add(rctx, n) })
	})
	if err != nil {
		return fmt.Errorf("file %s: read %s: %w", f.Path, key, wd.cause(err))
	}
	if f.offset+n != f.Size {
		return fmt.Errorf("file %s: object %s ended after %d bytes, %d listed: %w", f.Path, key, f.offset+n, f.Size, ErrDamaged)
	}
	return nil
}

// openFailed explains a failed read of key from f.offset on. S3 refuses a
// range that starts past the end of an object cut shorter than the partial
// file: that is damage, which removes the part, not a failure that the
// next try, continuing the same part, would meet again.
func (s *Store) openFailed(ctx context.Context, key string, f fetch, err error) error {
	if f.offset > 0 {
		if derr := s.checkSize(ctx, key, f.File); errors.Is(derr, ErrDamaged) {
			return fmt.Errorf("file %s: %w", f.Path, derr)
		}
	}
	return fmt.Errorf("file %s: read %s: %w", f.Path, key, err)
}
