package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"companydocs/index"
	"companydocs/objectstore"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"

	"gocloud.dev/blob"
)

// PublishDamaged uploads the generation meta of the publisher's data
// directory, flips a byte in the middle of its largest object but the
// profile store (keeping its size: the object no longer matches the
// manifest), and only then records it live, with its true manifest; it
// returns the generation's bytes.
func (f FollowSetup) PublishDamaged(t *testing.T, meta index.Meta) int64 {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(f.PublisherDir, "index", meta.ID)
	files, total, err := publication.GenerationFiles(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	objects, err := objectstore.Open(ctx, f.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer objects.Close()
	if _, err := objects.Upload(ctx, meta.ID, dir, files); err != nil {
		t.Fatal(err)
	}
	var largest objectstore.File
	for _, file := range files {
		if file.Path != index.ProfilesFile && file.Size > largest.Size {
			largest = file
		}
	}
	bucket, err := blob.OpenBucket(ctx, f.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer bucket.Close()
	key := meta.ID + "/" + largest.Path
	data, err := bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := bucket.WriteAll(ctx, key, data, nil); err != nil {
		t.Fatal(err)
	}
	f.RecordLive(t, meta.ID, files, total, int64(meta.Profiles))
	return total
}

// RecordLive records name live in the metastore with files as its
// manifest, as a publish does once its upload is checked.
func (f FollowSetup) RecordLive(t *testing.T, name string, files any, bytes, profiles int64) {
	t.Helper()
	ctx := context.Background()
	manifest, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, f.Store, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := metastore.New(db).BeginPublication(ctx, publication.Publication{Name: name, Manifest: manifest, Bytes: bytes, Profiles: profiles}); err != nil {
		t.Fatal(err)
	}
	if err := metastore.New(db).CompletePublication(ctx, name); err != nil {
		t.Fatal(err)
	}
}
