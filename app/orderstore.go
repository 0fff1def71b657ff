package app

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"companydocs/bbolt"
	"companydocs/metrics"
	"companydocs/ordering"
	"companydocs/postgres"
)

// storeFlags declares the order store's flags. --store is read by hand
// (storeFromEnv): its value may carry a password, which -h must not print
// as a default.
func storeFlags(fs *flagSet, c *Config) {
	fs.StringVar(&c.Store, "store", "", "order store: a postgres://user:password@host/db URL puts accounts, sessions, orders and webhooks in PostgreSQL, shared by several nodes; empty keeps orders.db in the data directory (env "+envName("store")+", then DATABASE_URL)")
	fs.Int(&c.StorePoolSize, "store-pool-size", 0, "PostgreSQL connections of this node; 0 is the larger of 4 and the number of CPUs")
	fs.Duration(&c.StoreStatementTimeout, "store-statement-timeout", postgres.DefaultStatementTimeout, "longest PostgreSQL statement; a request waiting longer answers 503 service_unavailable")
}

// storeFromEnv fills --store when the command line did not set it:
// COMPANYDOCS_STORE, then DATABASE_URL.
func storeFromEnv(fs *flagSet, c *Config) {
	c.Store = storeURL(fs, c.Store)
}

// storeURL is the --store value when the command line set it, otherwise
// COMPANYDOCS_STORE, then DATABASE_URL.
func storeURL(fs *flagSet, flagValue string) string {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "store" })
	if set {
		return flagValue
	}
	if v, ok := fs.env("store"); ok {
		return v
	}
	return os.Getenv("DATABASE_URL")
}

// postgresURL reports whether a --store value names PostgreSQL.
func postgresURL(url string) bool {
	return strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://")
}

// validateStore checks the order store's configuration; the URL itself
// is never repeated, since it may hold a password.
func (c *Config) validateStore(bad badValue) {
	if c.Store != "" && !postgresURL(c.Store) {
		bad("store", "must be a postgres:// URL, or empty for orders.db in the data directory")
	}
	if c.StorePoolSize < 0 {
		bad("store-pool-size", "must be 0 (the default size) or more, got %d", c.StorePoolSize)
	}
	if c.StoreStatementTimeout <= 0 {
		bad("store-statement-timeout", "must be longer than 0, got %s", c.StoreStatementTimeout)
	}
}

// openOrderStore opens the store --store names: PostgreSQL (migrated on
// open, its pool in the metrics), or orders.db in the data directory.
func (m *Main) openOrderStore(ctx context.Context) (ordering.Store, error) {
	if m.Config.Store == "" {
		path := filepath.Join(m.Config.DataDir, bbolt.DatabaseFile)
		db, err := bbolt.Open(path, bbolt.Options{CheckTimeout: m.Config.StoreCheckTimeout, SkipCheck: m.Config.SkipStoreCheck, Logger: m.Logger})
		if err != nil {
			return nil, explainStoreError(path, err)
		}
		m.OrderStore = db
		return db, nil
	}
	db, err := postgres.Open(ctx, m.Config.Store, postgres.Options{MaxConns: int32(m.Config.StorePoolSize), StatementTimeout: m.Config.StoreStatementTimeout})
	if err != nil {
		return nil, fmt.Errorf("open the order store in PostgreSQL (--store): %w", err)
	}
	m.Database = db
	m.Metrics.RegisterPool(func() metrics.PoolStats { return metrics.PoolStats(db.PoolStats()) })
	m.Metrics.RegisterOrderStore(m.databaseAnswers)
	return db, nil
}

// openDocuments opens where the order store keeps the delivered PDFs:
// the PostgreSQL store's own, or files in the data directory beside
// orders.db.
func (m *Main) openDocuments(store ordering.Store) (ordering.Documents, error) {
	dir := filepath.Join(m.Config.DataDir, ordering.DocumentsDir)
	if m.Database != nil {
		return postgres.OpenDocuments(m.Database, dir)
	}
	return bbolt.OpenDocuments(store, dir)
}

// explainOrderStoreError adds what to do to an error of ordering.New.
func (m *Main) explainOrderStoreError(err error) error {
	if m.OrderStore != nil {
		return explainStoreError(filepath.Join(m.Config.DataDir, bbolt.DatabaseFile), err)
	}
	return fmt.Errorf("open the orders in PostgreSQL (--store): %w", err)
}

// readyPingTimeout bounds the database check of /readyz.
const readyPingTimeout = 2 * time.Second

// databaseAnswers pings the PostgreSQL store for /readyz and
// companydocs_order_store_up.
func (m *Main) databaseAnswers() bool {
	ctx, cancel := context.WithTimeout(context.Background(), readyPingTimeout)
	defer cancel()
	return m.Database.Ping(ctx) == nil
}
