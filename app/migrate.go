package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"companydocs/bbolt"
	"companydocs/ordering"
	"companydocs/postgres"
	"companydocs/storecopy"
)

const migrateUsage = `usage:
  companydocs store migrate --from FILE --to postgres://... [--documents DIR] [--allow-existing-data]

migrate copies an orders.db into PostgreSQL in one transaction: accounts
(key hashes, credits), sessions, orders with their history, Idempotency-Keys,
open-order slots, the outbox, webhook endpoints, deliveries and their
schedule, and the delivered documents: each PDF is read from DIR (default:
the documents/ directory beside FILE), checked against its SHA-256 and
stored in the database, which every node reads. It then counts both sides
per kind of record and compares every account's balance and their sum.
FILE must not be in use by a running server: migrate a copy made with
"companydocs store backup" (copy the documents/ directory with it).
A database that holds accounts or orders already is refused unless
--allow-existing-data is given (records with the same keys then fail the
whole copy).`

// runMigrate runs "companydocs store migrate".
func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		from, to, docs string
		allowExisting  bool
		timeout        time.Duration
	)
	fs := newFlagSet("store migrate", stdout, stderr)
	fs.Synopsis = migrateUsage
	fs.StringVar(&from, "from", "", "the orders.db to copy (not in use by a server)")
	fs.StringVar(&to, "to", "", "the PostgreSQL database to copy into: postgres://user:password@host/db")
	fs.StringVar(&docs, "documents", "", "the directory of the delivered PDFs (default: documents/ beside --from)")
	fs.BoolVar(&allowExisting, "allow-existing-data", false, "copy into a database that holds accounts or orders already")
	fs.Duration(&timeout, "store-check-timeout", 10*time.Minute, "how long the check of FILE may take")
	if err := fs.parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("store migrate takes no arguments, got %q: %w", fs.Args(), errUsage)
	case from == "":
		return fmt.Errorf("store migrate needs --from FILE, the orders.db to copy: %w", errUsage)
	case !postgresURL(to):
		return fmt.Errorf("store migrate needs --to postgres://..., the database to copy into: %w", errUsage)
	}
	src, err := openMigrateSource(from, timeout)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := postgres.Open(ctx, to, postgres.Options{MaxConns: 2, StatementTimeout: time.Minute})
	if err != nil {
		return fmt.Errorf("open the PostgreSQL database (--to): %w", err)
	}
	defer dst.Close()
	if docs == "" {
		docs = filepath.Join(filepath.Dir(from), ordering.DocumentsDir)
	}
	return migrate(ctx, from, src, dst, bbolt.DocumentsIn(docs).Open, allowExisting, stdout)
}

// openMigrateSource opens orders.db read-only, which checks it page by
// page, and checks its records.
func openMigrateSource(path string, timeout time.Duration) (*bbolt.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no order database to migrate at %s: %w", path, err)
	}
	db, err := bbolt.Open(path, bbolt.Options{ReadOnly: true, CheckTimeout: timeout})
	if errors.Is(err, bbolt.ErrInUse) {
		return nil, fmt.Errorf("a running server holds %s: stop it, or migrate a copy made with \"companydocs store backup\"", path)
	} else if err != nil {
		return nil, explainStoreError(path, err)
	}
	if err := db.Check(); err != nil {
		db.Close()
		return nil, explainStoreError(path, err)
	}
	return db, nil
}

// migrate copies src into dst in one transaction and verifies the copy.
func migrate(ctx context.Context, from string, src *bbolt.DB, dst *postgres.DB, documents ordering.DocumentReader, allowExisting bool, stdout io.Writer) error {
	before, err := storecopy.TakeCensus(ctx, dst)
	if err != nil {
		return fmt.Errorf("count the records of the PostgreSQL database: %w", err)
	}
	if !before.Empty() && !allowExisting {
		return fmt.Errorf("the PostgreSQL database holds %d accounts and %d orders already; migrate into an empty database, or add --allow-existing-data to copy alongside them", before.Accounts, before.Orders)
	}
	want, err := storecopy.TakeCensus(ctx, src)
	if err != nil {
		return fmt.Errorf("count the records of %s: %w", from, err)
	}
	start := time.Now()
	if err := storecopy.Copy(ctx, src, dst, documents); errors.Is(err, ordering.ErrExists) {
		return fmt.Errorf("nothing was copied: a record of %s exists in the PostgreSQL database already (%w)", from, err)
	} else if err != nil {
		return fmt.Errorf("nothing was copied from %s: %w", from, err)
	}
	took := time.Since(start)
	got, err := storecopy.TakeCensus(ctx, dst)
	if err != nil {
		return fmt.Errorf("count the records of the PostgreSQL database after the copy: %w", err)
	}
	if err := storecopy.Verify(want.Added(before), got); err != nil {
		return fmt.Errorf("the copy was committed but does not verify (%w); do not serve from it, and migrate again into a fresh database", err)
	}
	if err := dst.Check(); err != nil {
		return fmt.Errorf("the copy was committed but fails the PostgreSQL store's check (%w); do not serve from it", err)
	}
	fmt.Fprintf(stdout, "Copied %s into PostgreSQL in one transaction (%v): %s.\n", from, took.Round(time.Millisecond), want)
	fmt.Fprintf(stdout, "Verified: the counts per kind of record, the balance of each of the %d accounts and their sum (%d credits) match.\n", want.Accounts, want.Credits)
	if want.DocumentRefs > 0 {
		fmt.Fprintf(stdout, "The PDFs of the %d document references are in the database, each checked against its SHA-256.\n", want.DocumentRefs)
	}
	return nil
}

// pgDumpAdvice is how to back up the PostgreSQL store.
const pgDumpAdvice = `store backup copies orders.db; back up the PostgreSQL store with PostgreSQL's own tools: pg_dump --format=custom --file=FILE "$COMPANYDOCS_STORE" while the nodes run (restore with pg_restore), or continuous archiving for point-in-time recovery`

// storePostgres runs "store check" or "store backup" with --store: check
// runs the PostgreSQL store's check; backup says to use pg_dump.
func storePostgres(ctx context.Context, command, url string, stdout io.Writer) error {
	if !postgresURL(url) {
		return fmt.Errorf("--store (%s) must be a postgres:// URL, or empty for orders.db: %w", envName("store"), errUsage)
	}
	if command == "backup" {
		return errors.New(pgDumpAdvice)
	}
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 2, StatementTimeout: time.Minute})
	if err != nil {
		return fmt.Errorf("open the order store in PostgreSQL (--store): %w", err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		return fmt.Errorf("the PostgreSQL store fails its check: %w", err)
	}
	c, err := storecopy.TakeCensus(ctx, db)
	if err != nil {
		return fmt.Errorf("count the records of the PostgreSQL store: %w", err)
	}
	fmt.Fprintf(stdout, "The PostgreSQL store is consistent: %s.\n", c)
	return nil
}
