package app

import (
	"context"
	"fmt"
	"io"
	"time"

	"companydocs/postgres"
	"companydocs/postgres/metastore"
	"companydocs/publication"
)

// runNodes runs "companydocs nodes": the published generations and the
// nodes that follow them, as the metastore knows them.
func runNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var store string
	fs := newFlagSet("nodes", stdout, stderr)
	fs.Synopsis = "usage: companydocs nodes --store postgres://...\n\nLists the published index generations and, for each node that follows them,\nthe generation it serves, how many newer ones are live, and its last heartbeat."
	fs.StringVar(&store, "store", "", "the PostgreSQL metastore (postgres://...; env "+envName("store")+", then DATABASE_URL)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if store = storeURL(fs, store); !postgresURL(store) {
		return fmt.Errorf("nodes needs --store postgres://..., the metastore: %w", errUsage)
	}
	db, err := postgres.Open(ctx, store, postgres.Options{})
	if err != nil {
		return fmt.Errorf("open the metastore (--store): %w", err)
	}
	defer db.Close()
	return publication.ListNodes(ctx, metastore.New(db), stdout, time.Now())
}
