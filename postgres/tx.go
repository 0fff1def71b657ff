package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// maxAttempts bounds how often a transaction runs when PostgreSQL
// aborts it for a serialization failure or a deadlock; the last failure
// answers service_unavailable. Each wait is random up to a ceiling that
// doubles from 1 ms to maxBackoff, so that contenders spread out.
const (
	maxAttempts = 20
	maxBackoff  = 64 * time.Millisecond
)

var (
	// readWrite is READ COMMITTED: the rules read what they change with
	// row locks (SELECT ... FOR NO KEY UPDATE), and the constraints hold what
	// spans rows; see the package documentation.
	readWrite = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}
	// readOnly is one snapshot for the whole transaction; a read-only
	// transaction never fails to serialise at this level.
	readOnly = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
)

// update runs fn in a read-write transaction and commits, running it
// again (bounded) when PostgreSQL aborts it for a serialization failure
// or a deadlock. fn must therefore have no effect
// outside the transaction. An application error from fn rolls back and is
// returned as it is.
func (db *DB) update(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.retry(ctx, readWrite, fn)
}

// view runs fn in a read-only transaction on one snapshot.
func (db *DB) view(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.retry(ctx, readOnly, fn)
}

func (db *DB) retry(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.run(ctx, opts, fn)
		if err == nil || !retryable(err) || attempt == maxAttempts || ctx.Err() != nil {
			return classify(ctx, err)
		}
		db.retries.Add(1)
		ceiling := min(maxBackoff, time.Millisecond<<min(attempt, 10))
		select {
		case <-ctx.Done():
			return classify(ctx, ctx.Err())
		case <-time.After(rand.N(ceiling) + 1):
		}
	}
}

// run is one attempt: a connection from the pool (waiting at most the
// acquire timeout), a transaction, fn, commit.
func (db *DB) run(ctx context.Context, opts pgx.TxOptions, fn func(pgx.Tx) error) error {
	actx, cancel := context.WithTimeout(ctx, db.opts.AcquireTimeout)
	conn, err := db.pool.Acquire(actx)
	cancel()
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			return errPoolExhausted
		}
		return err
	}
	defer conn.Release()
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// UpdateSQL runs fn in a read-write transaction as the order store runs
// its own (see update), for the packages that keep tables of their own in
// this database: the metastore of published generations.
func (db *DB) UpdateSQL(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.update(ctx, fn)
}

// ViewSQL runs fn in a read-only transaction as the order store runs its
// own (see view), for the packages that keep tables of their own in this
// database.
func (db *DB) ViewSQL(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.view(ctx, fn)
}
