package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"companydocs/index"
	"companydocs/objectstore"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"
)

// PublishCutProfileStore builds a generation of the first records of the
// sample, cuts its profiles.db to size bytes, records the cut file's size
// and SHA-256 in meta.json and the manifest, uploads it and records it
// live in the metastore, as publish would but without publish's check
// (which refuses it). It returns the generation's name.
func (f FollowSetup) PublishCutProfileStore(t *testing.T, records int, size int64) string {
	t.Helper()
	dataDir := t.TempDir()
	meta := MustBuild(t, dataDir, records, SampleFile(t))
	dir := filepath.Join(dataDir, "index", meta.ID)
	meta = cutProfileStore(t, dir, size)
	files, bytes, err := publication.GenerationFiles(dir, meta)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(files)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	objects, err := objectstore.Open(ctx, f.Source)
	if err != nil {
		t.Fatal(err)
	}
	defer objects.Close()
	db, err := postgres.Open(ctx, f.Store, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pub := publication.Publication{Name: meta.ID, Manifest: manifest, Bytes: bytes, Profiles: int64(meta.Profiles)}
	if err := metastore.New(db).BeginPublication(ctx, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := objects.Upload(ctx, meta.ID, dir, files); err != nil {
		t.Fatal(err)
	}
	if err := metastore.New(db).CompletePublication(ctx, meta.ID); err != nil {
		t.Fatal(err)
	}
	return meta.ID
}

// cutProfileStore cuts the generation's profiles.db to size bytes and
// records its new size and SHA-256 in meta.json, which it returns.
func cutProfileStore(t *testing.T, dir string, size int64) index.Meta {
	t.Helper()
	path := filepath.Join(dir, index.ProfilesFile)
	if st, err := os.Stat(path); err != nil || st.Size() <= size {
		t.Fatalf("profiles.db: %v, %v; want more than %d bytes to cut", st, err, size)
	}
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	n, sum, err := index.FileChecksum(path)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := index.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	recorded := false
	for i := range meta.Files {
		if meta.Files[i].Path == index.ProfilesFile {
			meta.Files[i].Size, meta.Files[i].SHA256, recorded = n, sum, true
		}
	}
	if !recorded {
		t.Fatal("meta.json does not list profiles.db")
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, index.MetaFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return meta
}
