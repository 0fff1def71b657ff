package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"companydocs/index"
	"companydocs/objectstore"
	"companydocs/postgres"
)

const publishUsage = `usage: companydocs publish --index-source URL --store postgres://... [--data-dir D] [--generation NAME]

Uploads a finished index generation (the one CURRENT names, or --generation)
to the object store and records it in the PostgreSQL metastore; nodes that
follow (serve --index-source) download and serve it. It becomes visible to
them only after every file is uploaded and checked, in one transaction; a
publish killed before leaves nothing visible, and running it again
continues the upload.`

// orphanAge is how old a publication still uploading must be before a
// later publish takes it for one a killed publish left, and removes its
// objects and record.
const orphanAge = time.Hour

// nodeStale is how long since its last heartbeat a node is no longer
// counted as serving (it reports every --follow-interval, 10 s by
// default): retention waits for the nodes that report.
const nodeStale = 5 * time.Minute

// runPublish runs "companydocs publish".
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var dataDir, source, store, generation string
	fs := newFlagSet("publish", stdout, stderr)
	fs.Synopsis = publishUsage
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory holding the generation")
	fs.String(&source, "index-source", "", "object store to publish to (s3://bucket?endpoint=...&region=...&use_path_style=true, or file:///shared/dir)")
	fs.StringVar(&store, "store", "", "the PostgreSQL metastore, the nodes' order store (postgres://...; env "+envName("store")+", then DATABASE_URL)")
	fs.StringVar(&generation, "generation", "", "the generation to publish (gen-...); empty is the one CURRENT names")
	if err := fs.parse(args); err != nil {
		return err
	}
	store = storeURL(fs, store)
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("publish takes no arguments, got %q: %w", fs.Args(), errUsage)
	case source == "":
		return fmt.Errorf("publish needs --index-source URL: %w", errUsage)
	case !postgresURL(store):
		return fmt.Errorf("publish needs --store postgres://..., the metastore: %w", errUsage)
	}
	p, err := openPublisher(ctx, source, store)
	if err != nil {
		return err
	}
	defer p.close()
	if generation == "" {
		if generation, err = index.ReadCurrent(dataDir); err != nil {
			return err
		}
	}
	pub, err := p.publish(ctx, filepath.Join(dataDir, "index", generation))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "published %s: %d profiles, %d files, %d bytes\n", pub.Name, pub.Profiles, len(pub.files), pub.Bytes)
	for _, name := range pub.retired {
		fmt.Fprintf(stdout, "deleted %s from the object store: every node serves two newer generations\n", name)
	}
	return nil
}

// publisher uploads generations and records them in the metastore.
type publisher struct {
	meta    *postgres.DB
	objects *objectstore.Store
}

func openPublisher(ctx context.Context, source, store string) (*publisher, error) {
	objects, err := objectstore.Open(ctx, source)
	if err != nil {
		return nil, fmt.Errorf("open the object store (--index-source): %w", err)
	}
	meta, err := postgres.Open(ctx, store, postgres.Options{StatementTimeout: -1})
	if err != nil {
		objects.Close()
		return nil, fmt.Errorf("open the metastore (--store): %w", err)
	}
	return &publisher{meta: meta, objects: objects}, nil
}

func (p *publisher) close() {
	p.objects.Close()
	p.meta.Close()
}

// published is what a publish recorded.
type published struct {
	postgres.Publication
	files   []objectstore.File
	retired []string // older generations deleted from the object store
}

// publish checks the generation in dir as a server would open it,
// records it as uploading, uploads its files (those already uploaded by
// a killed run are kept), then makes it live in one transaction.
func (p *publisher) publish(ctx context.Context, dir string) (*published, error) {
	g, err := index.Open(dir) // every file against meta.json
	if err != nil {
		return nil, fmt.Errorf("the generation to publish: %w", err)
	}
	meta := g.Meta()
	g.Close()
	files, bytes, err := generationFiles(dir, meta)
	if err != nil {
		return nil, err
	}
	manifest, err := json.Marshal(files)
	if err != nil {
		return nil, err
	}
	pub := &published{Publication: postgres.Publication{Name: meta.ID, Manifest: manifest, Bytes: bytes, Profiles: int64(meta.Profiles)}, files: files}
	p.removeOrphans(ctx, meta.ID)
	if err := p.meta.BeginPublication(ctx, pub.Publication); err != nil {
		return nil, err
	}
	if _, err := p.objects.Upload(ctx, meta.ID, dir, files); err != nil {
		return nil, fmt.Errorf("upload %s: %w", meta.ID, err)
	}
	if err := p.meta.CompletePublication(ctx, meta.ID); err != nil && !errors.Is(err, postgres.ErrNotUploading) {
		return nil, err // ErrNotUploading: live already, published before
	}
	pub.retired = p.retire(ctx)
	return pub, nil
}

// retire deletes the published generations that two newer ones have
// replaced on every node that reports (a heartbeat within nodeStale):
// their objects, then their records. Never one a node still serves or
// may fall back to (a node keeps its previous generation); with no node
// reporting, none. It returns the names it deleted.
func (p *publisher) retire(ctx context.Context) []string {
	pubs, err := p.meta.Publications(ctx)
	if err != nil {
		return nil
	}
	nodes, err := p.meta.IndexNodes(ctx)
	if err != nil {
		return nil
	}
	var retired []string
	for _, name := range retirable(pubs, nodes, time.Now()) {
		if p.objects.Delete(ctx, name) == nil && p.meta.DeletePublication(ctx, name) == nil {
			retired = append(retired, name)
		}
	}
	return retired
}

// retirable names the live generations older than the one before the
// oldest that a reporting node serves (names sort by creation time).
func retirable(pubs []postgres.Publication, nodes []postgres.IndexNode, now time.Time) []string {
	oldest := ""
	for _, n := range nodes {
		if now.Sub(n.HeartbeatAt) > nodeStale || n.Generation == "" {
			continue
		}
		if oldest == "" || n.Generation < oldest {
			oldest = n.Generation
		}
	}
	if oldest == "" {
		return nil
	}
	var live []string // newest first
	for _, pub := range pubs {
		if pub.State == postgres.PublicationLive {
			live = append(live, pub.Name)
		}
	}
	var out []string
	newerThanServed := 0 // live generations between a candidate and the oldest served, that one included
	for _, name := range live {
		if name > oldest {
			continue
		}
		if newerThanServed >= 2 {
			out = append(out, name)
		}
		newerThanServed++
	}
	return out
}

// generationFiles lists the generation's files for the manifest: those
// meta.json records, and meta.json itself.
func generationFiles(dir string, meta index.Meta) ([]objectstore.File, int64, error) {
	size, sum, err := index.FileChecksum(filepath.Join(dir, index.MetaFile))
	if err != nil {
		return nil, 0, fmt.Errorf("checksum meta.json: %w", err)
	}
	files := []objectstore.File{{Path: index.MetaFile, Size: size, SHA256: sum}}
	total := size
	for _, f := range meta.Files {
		files = append(files, objectstore.File{Path: f.Path, Size: f.Size, SHA256: f.SHA256})
		total += f.Size
	}
	return files, total, nil
}

// removeOrphans removes what killed publishes left: objects of no
// recorded generation, and publications uploading for longer than
// orphanAge with their objects. A failure is no reason not to publish.
func (p *publisher) removeOrphans(ctx context.Context, publishing string) {
	pubs, err := p.meta.Publications(ctx)
	if err != nil {
		return
	}
	recorded := map[string]bool{publishing: true}
	for _, pub := range pubs {
		recorded[pub.Name] = true
		if pub.State == postgres.PublicationUploading && pub.Name != publishing && time.Since(pub.CreatedAt) > orphanAge {
			if p.objects.Delete(ctx, pub.Name) == nil {
				p.meta.DeletePublication(ctx, pub.Name)
			}
		}
	}
	names, err := p.objects.Names(ctx)
	if err != nil {
		return
	}
	for _, name := range names {
		if !recorded[name] {
			p.objects.Delete(ctx, name)
		}
	}
}
