package postgres

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"companydocs"
)

// Defaults of Options.
const (
	DefaultStatementTimeout = 5 * time.Second
	DefaultAcquireTimeout   = 5 * time.Second
	// pingTimeout bounds the connection check at Open and in Ping.
	pingTimeout = 5 * time.Second
)

// Options configure Open. Zero values take the defaults.
type Options struct {
	// MaxConns is the pool size per node; 0 is pgxpool's default (the
	// larger of 4 and the number of CPUs).
	MaxConns int32
	// StatementTimeout ends a statement that runs longer (PostgreSQL's
	// statement_timeout, set on every connection); the request then
	// answers service_unavailable. Negative disables it.
	StatementTimeout time.Duration
	// AcquireTimeout bounds the wait for a free connection when every
	// one is busy (pool exhaustion answers service_unavailable).
	AcquireTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.StatementTimeout == 0 {
		o.StatementTimeout = DefaultStatementTimeout
	}
	if o.AcquireTimeout <= 0 {
		o.AcquireTimeout = DefaultAcquireTimeout
	}
	return o
}

// DB is the order store's PostgreSQL database: a connection pool on a
// migrated schema.
type DB struct {
	pool    *pgxpool.Pool
	opts    Options
	retries atomic.Int64
	// node names this open store in the webhook delivery claims, so that
	// another node leaves a claimed endpoint alone and this one finds its
	// own claims again.
	node string

	closeOnce sync.Once
}

// Open connects to the database at url (postgres://...), applies the
// migrations this binary has under an advisory lock, and refuses a
// database whose schema is newer than it knows. The URL's password never
// appears in an error.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.bad_postgres_url", companydocs.Args{"error": err})
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if err := migrate(ctx, cfg.ConnConfig.Copy()); err != nil {
		return nil, err
	}
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create the connection pool: %w", err)
	}
	db := &DB{pool: pool, opts: opts, node: rand.Text()}
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close closes every connection; it waits for the ones in use. Calls
// after the first do nothing.
func (db *DB) Close() error {
	db.closeOnce.Do(db.pool.Close)
	return nil
}

// Ping checks that the database answers, for readiness: an error is
// service_unavailable.
func (db *DB) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return db.view(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT 1")
		return err
	})
}

// PoolStats are the figures of the connection pool and the transaction
// retries, for the metrics (metrics.PoolStats has the same fields).
type PoolStats struct {
	Acquired, Idle, Constructing, Total, Max int64
	// Acquires counts connections handed out; EmptyAcquires those that
	// had to wait for one; CanceledAcquires the waits given up.
	Acquires, EmptyAcquires, CanceledAcquires int64
	// AcquireWait is the total time spent waiting for a connection.
	AcquireWait time.Duration
	// Retries counts transactions run again after a serialization
	// failure or a deadlock.
	Retries int64
}

// PoolStats returns the pool's figures now.
func (db *DB) PoolStats() PoolStats {
	s := db.pool.Stat()
	return PoolStats{
		Acquired: int64(s.AcquiredConns()), Idle: int64(s.IdleConns()), Constructing: int64(s.ConstructingConns()),
		Total: int64(s.TotalConns()), Max: int64(s.MaxConns()),
		Acquires: s.AcquireCount(), EmptyAcquires: s.EmptyAcquireCount(), CanceledAcquires: s.CanceledAcquireCount(),
		AcquireWait: s.AcquireDuration(), Retries: db.retries.Load(),
	}
}
