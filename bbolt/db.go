package bbolt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// DatabaseFile is the name of the order database inside the data directory.
const DatabaseFile = "orders.db"

// DefaultOpenTimeout is how long Open waits for the file lock by default.
const DefaultOpenTimeout = time.Second

// Options tunes Open. The zero value is usable.
type Options struct {
	// OpenTimeout is how long Open waits for the file lock (default
	// DefaultOpenTimeout).
	OpenTimeout time.Duration
	// CheckTimeout bounds the check of an existing file at Open (default
	// DefaultCheckTimeout); past it, Open fails with ErrCheckTimeout.
	CheckTimeout time.Duration
	// SkipCheck skips the walk of every page at Open, for files too large
	// to check at each start. The meta pages and the file size are still
	// checked, so that bbolt can map the file safely.
	SkipCheck bool
	// ReadOnly opens the file without writing to it and without taking
	// the exclusive lock; a missing file is an error.
	ReadOnly bool
	// Logger receives warnings about damage bbolt tolerates, such as one
	// invalid meta page (default slog.Default()).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = DefaultOpenTimeout
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = DefaultCheckTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// DB is the order store in one bbolt file: an ordering.Store.
type DB struct {
	db    *bolt.DB
	group *groupCommit // nil when read-only
}

// Open opens the order database at path, creating it only when no file
// is there. An existing file is checked first (see Options.SkipCheck and
// CheckTimeout); a damaged one is refused with an error wrapping
// ErrDamaged and left untouched. A file written by an older version gets
// the buckets and indexes it lacks.
func Open(path string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	db, err := openDB(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return &DB{db: db}, nil
	}
	if err := db.Update(createBuckets); err != nil {
		db.Close()
		return nil, fmt.Errorf("create buckets in %q: %w", path, err)
	}
	group, err := newGroupCommit(db)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("read the outbox of %q: %w", path, err)
	}
	return &DB{db: db, group: group}, nil
}

// Update runs fn in a shared write transaction (see groupCommit): writes
// that wait together share one commit and one fsync. A write that fails
// after writing is rolled back by running the others again without it; one
// that fails before writing anything is simply left out.
func (d *DB) Update(ctx context.Context, fn func(ordering.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d.group == nil {
		return fmt.Errorf("update order database %q: opened read-only", d.db.Path())
	}
	return d.group.run(func(t *tx) error { return fn(t) })
}

// View runs fn in a read transaction.
func (d *DB) View(ctx context.Context, fn func(ordering.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return d.db.View(func(btx *bolt.Tx) error { return fn(newTx(btx, nil)) })
}

// Ping reports nil: a file that opened stays readable while it is open.
func (d *DB) Ping(ctx context.Context) error { return ctx.Err() }

// Close commits the writes under way, then closes the file.
func (d *DB) Close() error {
	if d.group != nil {
		d.group.close()
	}
	return d.db.Close()
}

// Path returns the file the store keeps its data in.
func (d *DB) Path() string { return d.db.Path() }

// Check verifies the consistency of the database (bbolt's own check, and
// that the records are where and what this package wrote). A failure
// wraps ErrDamaged.
func (d *DB) Check() error { return checkDB(d.db) }

// Snapshot calls fn with a consistent copy of the database as of now:
// its size in bytes and a WriterTo that writes it (bbolt's Tx.WriteTo,
// in a read transaction, so that writers go on meanwhile).
func (d *DB) Snapshot(fn func(size int64, db io.WriterTo) error) error {
	return d.db.View(func(tx *bolt.Tx) error {
		return fn(tx.Size(), tx)
	})
}

// Stats counts the records of the database.
type Stats struct {
	Accounts, Sessions, Orders int
	Bytes                      int64
}

// Stats counts accounts, sessions and orders.
func (d *DB) Stats() (Stats, error) {
	var st Stats
	err := d.db.View(func(tx *bolt.Tx) error {
		st.Bytes = tx.Size()
		count := func(name []byte) int {
			if b := tx.Bucket(name); b != nil {
				return b.Stats().KeyN
			}
			return 0
		}
		st.Accounts, st.Sessions, st.Orders = count(bucketAccounts), count(bucketSessions), count(bucketOrders)
		return nil
	})
	return st, err
}
