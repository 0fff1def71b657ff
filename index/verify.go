package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"companydocs/internal/filesum"
)

// Why a generation was refused, the reason of a RejectError. Every reason
// but RejectOpen is about the bytes on disk: the generation stays refused
// until another one is published. RejectOpen is about the process (out of
// file descriptors or memory, a lock not granted) and is retried.
const (
	RejectMeta      = "meta"      // meta.json missing, unreadable or not JSON
	RejectVersion   = "version"   // built with an index version this program does not read
	RejectFiles     = "files"     // a file missing, or its size or SHA-256 differs from meta.json
	RejectStructure = "structure" // the stores are inconsistent with each other or with meta.json
	RejectOpen      = "open"      // the stores could not be opened now; retried
)

// A RejectError says why a generation was not opened.
type RejectError struct {
	Reason string
	Err    error
}

func (e *RejectError) Error() string { return e.Err.Error() }
func (e *RejectError) Unwrap() error { return e.Err }

// RejectReason returns the reason of a failed Open: the RejectError's, or
// RejectOpen for any other error.
func RejectReason(err error) string {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Reason
	}
	return RejectOpen
}

// permanent reports whether a refusal holds until the generation changes.
func permanent(err error) bool { return RejectReason(err) != RejectOpen }

func reject(reason string, format string, args ...any) error {
	return &RejectError{Reason: reason, Err: fmt.Errorf(format, args...)}
}

// ioReason classifies a failure to read a file: a file that is not there
// is damage, anything else (EMFILE, EIO, EACCES) is reported as it is and
// retried.
func ioReason(err error, missing string) string {
	if errors.Is(err, fs.ErrNotExist) {
		return missing
	}
	return RejectOpen
}

// FileSum is the size and SHA-256 of one file of a generation, recorded in
// meta.json at publish time and checked before the generation serves.
type FileSum struct {
	Path   string `json:"path"` // relative to the generation, slash-separated
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// checksumFiles returns the FileSum of every file of the generation in dir
// except meta.json, in path order.
func checksumFiles(dir string) ([]FileSum, error) {
	var sums []FileSum
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == metaName {
			return err
		}
		size, sum, err := filesum.SHA256(path)
		if err != nil {
			return err
		}
		sums = append(sums, FileSum{Path: filepath.ToSlash(rel), Size: size, SHA256: sum})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checksum generation files: %w", err)
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i].Path < sums[j].Path })
	return sums, nil
}

// verifyFiles checks every file meta.json lists: present, of its size
// (checked for all files before any is read) and of its SHA-256. Files
// meta.json does not list are not read by Open and are ignored. A file
// this process hashed before and that was not written since is not read
// again (internal/filesum): the generation a node downloads shares most
// files with the one it serves, by hard link, and the download, Install
// and Open each check them all.
func verifyFiles(dir string, sums []FileSum) error {
	for _, s := range sums {
		path := filepath.Join(dir, filepath.FromSlash(s.Path))
		if !filepath.IsLocal(filepath.FromSlash(s.Path)) {
			return reject(RejectMeta, "meta.json lists %q, which is outside the generation", s.Path)
		}
		st, err := os.Stat(path)
		if err != nil {
			return reject(ioReason(err, RejectFiles), "file %s: %w", s.Path, err)
		}
		if st.Size() != s.Size {
			return reject(RejectFiles, "file %s has %d bytes, meta.json records %d: the file is damaged", s.Path, st.Size(), s.Size)
		}
	}
	for _, s := range sums {
		_, sum, err := filesum.SHA256(filepath.Join(dir, filepath.FromSlash(s.Path)))
		if err != nil {
			return reject(ioReason(err, RejectFiles), "file %s: %w", s.Path, err)
		}
		if sum != s.SHA256 {
			return reject(RejectFiles, "file %s does not match its SHA-256 in meta.json: the file is damaged", s.Path)
		}
	}
	return nil
}
