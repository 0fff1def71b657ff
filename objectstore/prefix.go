package objectstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Entry is what lies under one top-level name of the store's prefix: a
// directory "name/" (a generation's, or something else's) with the
// objects and incomplete multipart uploads under it, or one object
// "name" at the top.
type Entry struct {
	Name    string // "gen-.../", "backups/", or an object's name
	Objects int
	Uploads int // incomplete multipart uploads (s3:// only)
}

// Generation is the generation name a directory entry stands for, or ""
// for an object at the top.
func (e Entry) Generation() string {
	name, dir := strings.CutSuffix(e.Name, "/")
	if !dir {
		return ""
	}
	return name
}

// Contents lists every top-level name under the store's prefix, sorted,
// with the objects and incomplete uploads under each. Nothing beside the
// prefix is listed: objects through the prefixed bucket, uploads with the
// prefix in the request and again checked on every key returned.
func (s *Store) Contents(ctx context.Context) ([]Entry, error) {
	byName := map[string]*Entry{}
	entry := func(key string) *Entry {
		name := topLevel(key)
		if byName[name] == nil {
			byName[name] = &Entry{Name: name}
		}
		return byName[name]
	}
	it := s.bucket.List(nil)
	for {
		obj, err := s.next(ctx, it)
		if errors.Is(err, errDone) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("list the store: %w", err)
		}
		if !obj.IsDir {
			entry(obj.Key).Objects++
		}
	}
	ups, err := s.uploads(ctx, "")
	if err != nil {
		return nil, err
	}
	for _, u := range ups {
		entry(u.key).Uploads++
	}
	out := make([]Entry, 0, len(byName))
	for _, e := range byName {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// topLevel is the top-level name of key: "name/" when the key is under a
// directory, the key itself otherwise.
func topLevel(key string) string {
	if name, _, nested := strings.Cut(key, "/"); nested {
		return name + "/"
	}
	return key
}

// AbortUploads aborts the incomplete multipart uploads under name/ (those
// a killed publish of name left: S3 keeps their parts, and bills them,
// until they are aborted) and returns their keys, relative to the prefix.
// An upload that is gone by the time it is aborted is not counted. A
// file:// store has none (fileblob writes a temporary file, in TMPDIR
// unless the URL says no_tmp_dir, and renames it).
func (s *Store) AbortUploads(ctx context.Context, name string) ([]string, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	ups, err := s.uploads(ctx, name+"/")
	if err != nil {
		return nil, fmt.Errorf("abort the incomplete uploads of %s: %w", name, err)
	}
	var aborted []string
	for _, u := range ups {
		rctx, cancel := context.WithTimeout(ctx, s.idle)
		_, err := s.client.AbortMultipartUpload(rctx, &s3.AbortMultipartUploadInput{
			Bucket: aws.String(s.bucketName), Key: aws.String(s.prefix + u.key), UploadId: aws.String(u.id)})
		cancel()
		var gone *types.NoSuchUpload
		if errors.As(err, &gone) {
			continue
		} else if err != nil {
			return aborted, fmt.Errorf("abort the incomplete upload of %s: %w", u.key, err)
		}
		aborted = append(aborted, u.key)
	}
	return aborted, nil
}

// upload is an incomplete multipart upload: its key relative to the
// prefix, and its id.
type upload struct{ key, id string }

// uploads lists the incomplete multipart uploads under the prefix and
// then under (relative to it; "" is the whole prefix). Every page request
// is bounded by s.idle; a key the store returns outside the prefix (one
// that ignored the request's Prefix) is dropped, never acted on.
func (s *Store) uploads(ctx context.Context, under string) ([]upload, error) {
	if s.client == nil {
		return nil, nil
	}
	full := s.prefix + under
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(s.bucketName), Prefix: aws.String(full)}
	var out []upload
	for {
		rctx, cancel := context.WithTimeout(ctx, s.idle)
		page, err := s.client.ListMultipartUploads(rctx, in)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("list the incomplete uploads under %s: %w", full, err)
		}
		for _, u := range page.Uploads {
			if rel, ok := strings.CutPrefix(aws.ToString(u.Key), full); ok {
				out = append(out, upload{key: under + rel, id: aws.ToString(u.UploadId)})
			}
		}
		if !aws.ToBool(page.IsTruncated) {
			return out, nil
		}
		if aws.ToString(page.NextKeyMarker) == "" {
			return nil, fmt.Errorf("list the incomplete uploads under %s: a truncated page names no next key", full)
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
}
