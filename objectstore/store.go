package objectstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Store is the part of a bucket (its prefix) that holds published
// generations, each under "<name>/". It lists, writes, deletes and aborts
// only under its prefix: what lies beside it is never read or touched.
type Store struct {
	bucket *blob.Bucket // under prefix: its keys are relative to it
	// prefix is the part of the bucket that is the store's, as the URL
	// names it ("companydocs/"; "" for a file:// directory of its own).
	prefix string
	// client and bucketName reach, on an s3:// store, the incomplete
	// multipart uploads that blob does not list; client is nil on a
	// file:// store, which has none.
	client     *s3.Client
	bucketName string
	// idle bounds every request and every pause of a transfer: a store
	// that accepts a connection and then says nothing would otherwise hold
	// a caller without a deadline forever.
	idle time.Duration
	// sdk is the AWS SDK's logger (s3:// only), writing to the logger
	// WithLogger sets.
	sdk *sdkLog
}

// defaultIdle is Store.idle: long enough for a slow link to move one copy
// buffer, short enough that a stalled publish fails within minutes.
const defaultIdle = 2 * time.Minute

// File is one file of a generation: its path relative to the generation
// (slash-separated), size and SHA-256 (hex), and where its content is
// stored when that is not under the generation's own name.
type File struct {
	Path   string
	Size   int64
	SHA256 string
	// Object is the key of an object of an earlier generation that holds
	// the file's content ("<generation>/<path>", relative to the prefix):
	// Upload does not upload the file but checks that object, Download
	// reads it. Empty: the file's own object, "<name>/<Path>". Manifests
	// written before it existed have none.
	Object string `json:",omitempty"`
}

// Key is the key of the object that holds f's content when f is a file of
// the generation name: f.Object, or name's own "<name>/<Path>".
func (f File) Key(name string) string {
	if f.Object != "" {
		return f.Object
	}
	return objectKey(name, f.Path)
}

// KeyGeneration is the generation a key ("<generation>/<path>") is stored
// under.
func KeyGeneration(key string) string {
	name, _, _ := strings.Cut(key, "/")
	return name
}

// Open opens the store at url with blob.OpenBucket:
// "s3://bucket?prefix=companydocs/&endpoint=...&region=...&use_path_style=true"
// or "file:///dir" (which may take a prefix too). An s3:// URL must name
// the prefix that is the index's own, a path ending in "/": a bucket is
// one flat namespace often shared with other data, and the store lists,
// deletes and aborts under its prefix only. A file:// directory is named
// whole by its path and is the prefix itself when the URL gives none.
// Credentials come from the environment (AWS_ACCESS_KEY_ID ...), never
// from the URL: a URL with user information is refused, so that no error
// can echo a secret.
func Open(ctx context.Context, url string) (*Store, error) {
	loc, err := parseURL(url)
	if err != nil {
		return nil, fmt.Errorf("open object store: %w", err)
	}
	sdk := new(sdkLog)
	b, err := openBucket(ctx, url, sdk)
	if err != nil {
		return nil, fmt.Errorf("open object store: %w", err)
	}
	s := &Store{bucket: b, prefix: loc.prefix, idle: defaultIdle, sdk: sdk}
	if loc.scheme == "s3" {
		// s3blob documents *s3.Client for Bucket.As; without it the
		// uploads of killed publishes could never be aborted.
		if !b.As(&s.client) {
			b.Close()
			return nil, errors.New("open object store: the s3 driver no longer gives its *s3.Client (blob.Bucket.As)")
		}
		s.bucketName = loc.bucket
	}
	return s, nil
}

// WithIdle sets how long a request, or a transfer that makes no progress,
// may take before it is cancelled with an error naming the object (Open
// sets 2 minutes), and returns s; a node that follows sets its follow
// interval, so that a store that stops answering fails within one. Call
// it before s is used; d must be positive (it panics otherwise).
func (s *Store) WithIdle(d time.Duration) *Store {
	if d <= 0 {
		panic(fmt.Sprintf("objectstore: idle bound %s is not positive", d))
	}
	s.idle = d
	return s
}

// WithLogger sends what the AWS SDK logs (s3:// stores) to logger, its
// warnings at level Warn and the rest at Debug, and returns s; without it
// they go to slog's default logger.
func (s *Store) WithLogger(logger *slog.Logger) *Store {
	s.sdk.logger.Store(logger)
	return s
}

// Prefix is the part of the bucket that is the store's ("" for a file://
// directory without one); names the store returns are relative to it.
func (s *Store) Prefix() string { return s.prefix }

// location is what Open reads of a URL itself.
type location struct {
	scheme, bucket, prefix string
}

// parseURL refuses what OpenBucket would echo back in its error with a
// secret in it, and names the problem without repeating the URL: url.Parse
// quotes the whole URL in its errors. It checks the prefix: required for
// s3://, a clean relative path ending in "/" wherever given.
func parseURL(raw string) (location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return location{}, errors.New("the URL does not parse (want file:///dir or s3://bucket?prefix=...)")
	}
	if u.User != nil {
		return location{}, errors.New("the URL carries user information: give credentials in the environment, not in the URL")
	}
	loc := location{scheme: u.Scheme, bucket: u.Host, prefix: u.Query().Get("prefix")}
	switch u.Scheme {
	case "file":
	case "s3":
		if loc.prefix == "" {
			return location{}, errors.New("the s3:// URL names no prefix: add prefix=NAME/, the part of the bucket that is the index's own (companydocs/, say); publish lists, deletes and aborts only under it")
		}
	case "":
		return location{}, errors.New("the URL has no scheme (want file:// or s3://)")
	default:
		return location{}, errors.New("the URL's scheme is neither file nor s3")
	}
	if loc.prefix != "" {
		if err := checkPrefix(loc.prefix); err != nil {
			return location{}, err
		}
	}
	return loc, nil
}

// checkPrefix accepts a prefix of path elements each followed by "/"
// ("companydocs/", "indexes/prod/"): no empty, "." or ".." element, no
// backslash or control character, so that it names one subtree and the
// keys under it are the same on every store.
func checkPrefix(p string) error {
	bad := !strings.HasSuffix(p, "/") || strings.ContainsAny(p, `\`) ||
		strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f })
	for _, el := range strings.Split(strings.TrimSuffix(p, "/"), "/") {
		bad = bad || el == "" || el == "." || el == ".."
	}
	if bad {
		return fmt.Errorf("prefix %q is not a path of names each ending in / (want companydocs/, say)", p)
	}
	return nil
}

// Close closes the bucket.
func (s *Store) Close() error {
	if err := s.bucket.Close(); err != nil {
		return fmt.Errorf("close object store: %w", err)
	}
	return nil
}

// Names lists the generations that have objects: the first path element of
// every key that has one (objects at the top level are not generations).
func (s *Store) Names(ctx context.Context) ([]string, error) {
	// Every key is listed, not the prefixes a delimiter gives: some
	// stores (SeaweedFS's filer) keep a prefix listed as a directory
	// after its last object was deleted.
	it := s.bucket.List(nil)
	var names []string
	seen := map[string]bool{}
	for {
		obj, err := s.next(ctx, it)
		if errors.Is(err, errDone) {
			return names, nil
		} else if err != nil {
			return nil, fmt.Errorf("list generations: %w", err)
		}
		name, _, nested := strings.Cut(obj.Key, "/")
		if nested && !obj.IsDir && !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
}

// Delete removes every object under name/.
func (s *Store) Delete(ctx context.Context, name string) error {
	_, err := s.DeleteExcept(ctx, name, nil)
	return err
}

// DeleteExcept removes every object under name/ but those whose key
// (relative to the prefix, "name/path") keep reports, and returns the
// keys it kept; keep nil keeps none.
func (s *Store) DeleteExcept(ctx context.Context, name string, keep func(key string) bool) ([]string, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	it := s.bucket.List(&blob.ListOptions{Prefix: name + "/"})
	var kept []string
	for {
		obj, err := s.next(ctx, it)
		if errors.Is(err, errDone) {
			return kept, nil
		} else if err != nil {
			return kept, fmt.Errorf("delete generation %s: list: %w", name, err)
		}
		if obj.IsDir {
			continue
		}
		if keep != nil && keep(obj.Key) {
			kept = append(kept, obj.Key)
			continue
		}
		if err := s.deleteKey(ctx, obj.Key); err != nil {
			return kept, fmt.Errorf("delete generation %s: %w", name, err)
		}
	}
}

// DeleteObject removes the object key ("<generation>/<path>", relative to
// the prefix); one already gone is no error.
func (s *Store) DeleteObject(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.deleteKey(ctx, key)
}

func (s *Store) deleteKey(ctx context.Context, key string) error {
	rctx, cancel := context.WithTimeout(ctx, s.idle)
	defer cancel()
	if err := s.bucket.Delete(rctx, key); err != nil && gcerrors.Code(err) != gcerrors.NotFound {
		return fmt.Errorf("object %s: %w", key, err)
	}
	return nil
}

var errDone = errors.New("no more objects")

// next returns the next object of a listing, or errDone; each page
// request is bounded by s.idle.
func (s *Store) next(ctx context.Context, it *blob.ListIterator) (*blob.ListObject, error) {
	rctx, cancel := context.WithTimeout(ctx, s.idle)
	defer cancel()
	obj, err := it.Next(rctx)
	if errors.Is(err, io.EOF) {
		return nil, errDone
	}
	return obj, err
}

// checkName refuses a generation name that is not one path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("generation name %q is not a single path element", name)
	}
	return nil
}

// checkFiles refuses a list with a path that could leave the generation's
// directory (a hostile or broken manifest) or that names two objects the
// same way, an object key that is not "<generation>/<clean path>", and a
// list where one file's path is another's partial file.
func checkFiles(files []File) error {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if f.Object != "" {
			if err := checkKey(f.Object); err != nil {
				return fmt.Errorf("file %s: %w", f.Path, err)
			}
		}
		if f.Size < 0 {
			return fmt.Errorf("file %s: negative size %d", f.Path, f.Size)
		}
		seen[f.Path] = true
	}
	for _, f := range files {
		if seen[f.Path+partSuffix] {
			return fmt.Errorf("file %s: its partial file would be %s, which is listed too", f.Path, f.Path+partSuffix)
		}
	}
	return nil
}

// checkPath accepts a clean, slash-separated path local to the generation
// that names a file in it ("." is the generation itself). A clean path is
// also required so that a file has one object key.
func checkPath(p string) error {
	if p == "." || !filepath.IsLocal(filepath.FromSlash(p)) || path.Clean(p) != p || strings.Contains(p, `\`) {
		return fmt.Errorf("file path %q is not a clean path inside the generation", p)
	}
	return nil
}

// checkKey accepts an object key "<generation>/<path>": a generation name
// and a clean path inside it.
func checkKey(key string) error {
	name, p, ok := strings.Cut(key, "/")
	if !ok {
		return fmt.Errorf("object key %q names no generation", key)
	}
	if err := checkName(name); err != nil {
		return fmt.Errorf("object key %q: %w", key, err)
	}
	if err := checkPath(p); err != nil {
		return fmt.Errorf("object key %q: %w", key, err)
	}
	return nil
}

func objectKey(name, p string) string { return name + "/" + p }
