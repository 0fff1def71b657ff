package objectstore

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// metaSHA256 is the metadata key holding an object's SHA-256 (hex). Keys
// are lower case: blob lowers them on every service.
const metaSHA256 = "sha256"

// Upload writes the files of the generation in dir under name/, each
// streamed from its file, with its SHA-256 in the object's metadata, then
// checks every object's attributes (size and SHA-256 metadata) and returns
// the bytes uploaded. An object already there with the right size and
// SHA-256 is not uploaded again: a publish that was killed and is run
// again continues. A file whose content an earlier generation's object
// holds (File.Object) is sent to that object only when it is not there
// with the right size and SHA-256 (restored, with the same bytes).
//
// A first pass over each file checks it against its listed size and
// SHA-256 (a damaged generation is never published) and computes its MD5,
// given as ContentMD5: blob checks it against the bytes the upload read
// and aborts the write on a difference, so that a file that changed
// between the passes is never stored. The store itself checks the bytes it
// received on its side: fileblob against that MD5; S3 against the CRC32
// the AWS SDK sends with every upload request (s3blob no longer passes
// ContentMD5 to S3).
func (s *Store) Upload(ctx context.Context, name, dir string, files []File) (int64, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	if err := checkFiles(files); err != nil {
		return 0, err
	}
	var sent int64
	buf := make([]byte, copyBuffer)
	for _, f := range files {
		n, err := s.uploadFile(ctx, name, dir, f, buf)
		sent += n
		if err != nil {
			return sent, fmt.Errorf("upload generation %s: %w", name, err)
		}
	}
	for _, f := range files {
		if err := s.checkObject(ctx, f.Key(name), f); err != nil {
			return sent, fmt.Errorf("upload generation %s: %w", name, err)
		}
	}
	return sent, nil
}

// uploadFile uploads one file unless its object is already there; it
// returns the bytes uploaded.
func (s *Store) uploadFile(ctx context.Context, name, dir string, f File, buf []byte) (int64, error) {
	key := f.Key(name)
	if ok, err := s.present(ctx, key, f); err != nil || ok {
		return 0, err
	}
	path := filepath.Join(dir, filepath.FromSlash(f.Path))
	sum, err := localMD5(path, f, buf)
	if err != nil {
		return 0, err
	}
	src, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("file %s: %w", f.Path, err)
	}
	defer src.Close()
	return s.put(ctx, key, src, f, sum, buf)
}

// put streams src into the object key. The writer's context is cancelled
// when the store takes no bytes for s.idle.
func (s *Store) put(ctx context.Context, key string, src io.Reader, f File, sum, buf []byte) (int64, error) {
	wctx, w := s.watch(ctx)
	defer w.stop()
	bw, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{
		ContentType: "application/octet-stream",
		ContentMD5:  sum,
		Metadata:    map[string]string{metaSHA256: f.SHA256},
	})
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", key, err)
	}
	n, err := pump(bw, src, buf, func(int) error { return w.touch() })
	if cerr := bw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", key, w.cause(err))
	}
	return n, nil
}

// Holds reports whether the object key ("<generation>/<path>", relative to
// the prefix) is there with f's size and SHA-256 in its metadata: whether
// a new generation may name it as the object of its file f (File.Object).
// Its bytes are not read; Download checks them.
func (s *Store) Holds(ctx context.Context, key string, f File) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	return s.present(ctx, key, f)
}

// present reports whether the object key is there with f's size and
// SHA-256.
func (s *Store) present(ctx context.Context, key string, f File) (bool, error) {
	err := s.checkObject(ctx, key, f)
	if err == nil {
		return true, nil
	}
	if gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, ErrDamaged) {
		return false, nil
	}
	return false, err
}

// checkObject compares the attributes of the object key with f: an
// object of another size or SHA-256 metadata is an ErrDamaged.
func (s *Store) checkObject(ctx context.Context, key string, f File) error {
	a, err := s.attributes(ctx, key)
	if err != nil {
		return err
	}
	if a.Size != f.Size {
		return fmt.Errorf("object %s has %d bytes, %d listed: %w", key, a.Size, f.Size, ErrDamaged)
	}
	if a.Metadata[metaSHA256] != f.SHA256 {
		return fmt.Errorf("object %s has SHA-256 %q in its metadata, %s listed: %w", key, a.Metadata[metaSHA256], f.SHA256, ErrDamaged)
	}
	return nil
}

// checkSize compares the size of the object key with f's: another size is
// an ErrDamaged.
func (s *Store) checkSize(ctx context.Context, key string, f File) error {
	a, err := s.attributes(ctx, key)
	if err != nil {
		return err
	}
	if a.Size != f.Size {
		return fmt.Errorf("object %s has %d bytes, %d listed: %w", key, a.Size, f.Size, ErrDamaged)
	}
	return nil
}

func (s *Store) attributes(ctx context.Context, key string) (*blob.Attributes, error) {
	rctx, cancel := context.WithTimeout(ctx, s.idle)
	defer cancel()
	a, err := s.bucket.Attributes(rctx, key)
	if err != nil {
		return nil, fmt.Errorf("attributes of %s: %w", key, err)
	}
	return a, nil
}

// localMD5 reads the file at path once, checks it against f's size and
// SHA-256 (a generation is never published with a damaged file) and
// returns its MD5.
func localMD5(path string, f File, buf []byte) ([]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Path, err)
	}
	defer file.Close()
	m, h := md5.New(), sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(m, h), file, buf)
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", f.Path, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return nil, fmt.Errorf("file %s: %d bytes on disk do not match the listed size %d and SHA-256", f.Path, n, f.Size)
	}
	return m.Sum(nil), nil
}
