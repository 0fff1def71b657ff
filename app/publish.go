package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"companydocs/index"
	"companydocs/objectstore"
	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"
)

const publishUsage = `usage: companydocs publish --index-source URL --store postgres://... [--data-dir D] [--generation NAME]

Uploads a finished index generation (the one CURRENT names, or --generation)
to the object store and records it in the PostgreSQL metastore; nodes that
follow (serve --index-source) download and serve it. A file whose content
an earlier live generation's object holds (the same size and SHA-256) is
not uploaded again: the manifest names that object, and nodes take the
file from a generation they hold. It becomes visible to
them only after every file is uploaded and checked, in one transaction; a
publish killed before leaves nothing visible, and running it again
continues the upload. One publish runs at a time on a metastore, from any
machine: another started meanwhile changes nothing and exits 1 at once,
naming the one that runs.

The URL names a bucket and a prefix of its own for the index:
s3://bucket?prefix=companydocs/&endpoint=...&region=...&use_path_style=true
(prefix required) or file:///shared/dir (the directory is the index's; a
prefix=... may narrow it). Publish lists, deletes and aborts only under the
prefix, and there only what the metastore records as its own: incomplete
multipart uploads its killed runs left of the generation it publishes, and
generations killed publishes left uploading for over an hour or retired
(objects and incomplete uploads). Anything else under the prefix is left
alone and named in a line "left alone: ..."; nothing beside the prefix is
listed or touched.`

// indexSourceHelp is the help of publish's --index-source flag.
const indexSourceHelp = "the object store to publish to, a bucket and a prefix of its own: s3://bucket?prefix=companydocs/&endpoint=...&region=...&use_path_style=true (prefix required), or file:///shared/dir; nodes follow the same URL"

// runPublish runs "companydocs publish".
func runPublish(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var dataDir, source, store, generation string
	fs := newFlagSet("publish", stdout, stderr)
	fs.Synopsis = publishUsage
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory holding the generation")
	fs.String(&source, "index-source", "", indexSourceHelp)
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
	p, closePublisher, err := openPublisher(ctx, source, store, stdout, stderr)
	if err != nil {
		return err
	}
	defer closePublisher()
	if generation == "" {
		if generation, err = index.ReadCurrent(dataDir); err != nil {
			return err
		}
	}
	pub, err := p.Publish(ctx, filepath.Join(dataDir, "index", generation))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "published %s: %d profiles, %d files, %d bytes (%d uploaded, %d shared with earlier generations)\n",
		pub.Name, pub.Profiles, len(pub.Files), pub.Bytes, pub.Uploaded, pub.Shared)
	p.Retire(ctx)
	return nil
}

// openPublisher opens the object store source and the metastore store
// of a publish.
func openPublisher(ctx context.Context, source, store string, out, warn io.Writer) (*publication.Publisher, func(), error) {
	objects, err := objectstore.Open(ctx, source)
	if err != nil {
		return nil, nil, fmt.Errorf("open the object store (--index-source): %w", err)
	}
	db, err := postgres.Open(ctx, store, postgres.Options{StatementTimeout: -1})
	if err != nil {
		objects.Close()
		return nil, nil, fmt.Errorf("open the metastore (--store): %w", err)
	}
	objects.WithLogger(slog.New(slog.NewTextHandler(warn, nil))) // the SDK's warnings, beside the command's own
	closeAll := func() {
		objects.Close()
		db.Close()
	}
	return publication.NewPublisher(metastore.New(db), objects, out, warn), closeAll, nil
}
