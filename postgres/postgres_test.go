package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"companydocs"
	"companydocs/metrics"
)

// TestMigrationsApplyOnAnEmptyDatabaseAndAgain: the first Open creates the
// schema at the binary's version; a second Open applies nothing.
func TestMigrationsApplyOnAnEmptyDatabaseAndAgain(t *testing.T) {
	ctx := context.Background()
	url := newDatabase(t)
	for i := range 2 {
		db, err := Open(ctx, url, Options{})
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		applied := countApplied(t, db)
		db.Close()
		if applied != migrationFiles(t) {
			t.Fatalf("open %d: %d versions recorded, want %d (one each)", i+1, applied, migrationFiles(t))
		}
	}
}

// TestConcurrentOpensApplyTheSchemaOnce: two nodes starting at once on an
// empty database (two pools) both open it, and each version is applied
// once, under the advisory lock.
func TestConcurrentOpensApplyTheSchemaOnce(t *testing.T) {
	url := newDatabase(t)
	var wg sync.WaitGroup
	dbs, errs := make([]*DB, 2), make([]error, 2)
	for i := range dbs {
		wg.Go(func() { dbs[i], errs[i] = Open(context.Background(), url, Options{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i+1, err)
		}
		defer dbs[i].Close()
	}
	if applied := countApplied(t, dbs[0]); applied != migrationFiles(t) {
		t.Fatalf("%d versions recorded after two concurrent opens, want %d", applied, migrationFiles(t))
	}
}

// TestNewerSchemaIsRefused: a database migrated by a newer release is not
// opened, with a sentence saying what to do.
func TestNewerSchemaIsRefused(t *testing.T) {
	ctx := context.Background()
	url := newDatabase(t)
	db, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", SchemaVersion()+1)
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, url, Options{})
	want := fmt.Sprintf("version %d, newer than this companydocs knows (%d)", SchemaVersion()+1, SchemaVersion())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("open of a newer schema: %v; want a refusal saying %q", err, want)
	}
}

// migrationFiles counts the migrations this binary has (versions may
// skip a number).
func migrationFiles(t *testing.T) int64 {
	t.Helper()
	files, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %v", files, err)
	}
	return int64(len(files))
}

func countApplied(t *testing.T, db *DB) int64 {
	t.Helper()
	var n int64
	err := db.view(context.Background(), func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), "SELECT count(*) FROM goose_db_version WHERE version_id > 0 AND is_applied").Scan(&n)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConstraintsHoldUnderConcurrentInserts: 32 transactions insert the
// same Idempotency-Key of an account (each with its own order), and 32
// others the same open-order slot: the database keeps exactly one of
// each, and refuses the rest with a unique violation.
func TestConstraintsHoldUnderConcurrentInserts(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{MaxConns: 16})
	mustExec(t, db, "INSERT INTO accounts (name, role, credits, key_hash, created_at) VALUES ('acme', 'client', 0, 'k', now())")
	for _, table := range []string{"idempotency_keys", "open_orders"} {
		t.Run(table, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make([]error, 32)
			for i := range errs {
				wg.Go(func() {
					errs[i] = db.update(ctx, func(tx pgx.Tx) error {
						id := fmt.Sprintf("%s-%02d", table, i)
						if _, err := tx.Exec(ctx, insertOrderSQL, id, "acme"); err != nil {
							return err
						}
						if table == "idempotency_keys" {
							_, err := tx.Exec(ctx, "INSERT INTO idempotency_keys (account, key, order_id) VALUES ('acme', 'key-1', $1)", id)
							return err
						}
						_, err := tx.Exec(ctx, "INSERT INTO open_orders (account, profile_id, document_type, plan_id, order_id) VALUES ('acme', 'p', 'AD', 'basic', $1)", id)
						return err
					})
				})
			}
			wg.Wait()
			ok := 0
			for _, err := range errs {
				var pgErr *pgconn.PgError
				switch {
				case err == nil:
					ok++
				case !errors.As(err, &pgErr) || pgErr.Code != "23505":
					t.Errorf("a concurrent insert failed with %v, want a unique violation", err)
				}
			}
			var rows int
			mustQuery(t, db, "SELECT count(*) FROM "+table, &rows)
			if ok != 1 || rows != 1 {
				t.Fatalf("%d of 32 concurrent inserts committed, %d rows stored; want exactly one", ok, rows)
			}
		})
	}
}

// insertOrderSQL stores a minimal order for the constraint tests.
const insertOrderSQL = `INSERT INTO orders (id, account, status, company_profile_id, document_type, plan_id,
	credits_charged, credits_refunded, created_at, record) VALUES ($1, $2, 'PREVIEW_READY', 'p', 'AD', 'basic', 0, 0, now(), '{}')`

// TestDebitNeverGoesNegative: 4N concurrent conditional debits on an
// account holding N credits: exactly N succeed, the balance ends at 0,
// and CHECK (credits >= 0) refuses a debit that skips the condition.
func TestDebitNeverGoesNegative(t *testing.T) {
	const n = 16
	ctx := context.Background()
	db := mustOpen(t, Options{MaxConns: 16})
	mustExec(t, db, fmt.Sprintf("INSERT INTO accounts (name, role, credits, key_hash, created_at) VALUES ('acme', 'client', %d, 'k', now())", n))
	var wg sync.WaitGroup
	var mu sync.Mutex
	debited := 0
	for range 4 * n {
		wg.Go(func() {
			err := db.update(ctx, func(tx pgx.Tx) error {
				tag, err := tx.Exec(ctx, "UPDATE accounts SET credits = credits - 1 WHERE name = 'acme' AND credits >= 1")
				if err == nil && tag.RowsAffected() == 1 {
					mu.Lock()
					debited++
					mu.Unlock()
				}
				return err
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	var credits int
	mustQuery(t, db, "SELECT credits FROM accounts WHERE name = 'acme'", &credits)
	if debited != n || credits != 0 {
		t.Fatalf("%d of %d debits of 1 credit succeeded on %d credits, balance %d; want %d and 0", debited, 4*n, n, credits, n)
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE accounts SET credits = credits - 1 WHERE name = 'acme'")
		return err
	})
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23514" {
		t.Fatalf("an unconditional debit below zero: %v; want a check violation", err)
	}
}

// TestLostDatabaseIsUnavailableAndRecovers: with the server down, a
// transaction and Ping answer service_unavailable (not internal); after
// the server is back, the same pool works again without a reopen.
func TestLostDatabaseIsUnavailableAndRecovers(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{})
	mustExec(t, db, "CREATE TABLE t (x int)")
	cluster.Crash()
	restarted := false
	defer func() {
		if !restarted {
			_ = cluster.Start(ctx)
		}
	}()
	if err := db.Ping(ctx); companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Errorf("ping without the server: %v (code %s); want service_unavailable", err, companydocs.ErrorCode(err))
	}
	err := db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES (1)")
		return err
	})
	if companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Errorf("write without the server: %v (code %s); want service_unavailable", err, companydocs.ErrorCode(err))
	}
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	// the pool drops the dead connections on its own; a request that
	// meets one before then answers service_unavailable and the next
	// one is served (bounded: the pool holds few connections)
	var last error
	for range 20 {
		if last = db.Ping(ctx); last == nil {
			break
		}
	}
	if last != nil {
		t.Fatalf("ping after the restart: %v", last)
	}
	mustExec(t, db, "INSERT INTO t VALUES (2)")
}

// TestStatementTimeoutIsUnavailable: a statement that runs past the
// statement timeout answers service_unavailable.
func TestStatementTimeoutIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{StatementTimeout: 50 * time.Millisecond})
	err := db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "SELECT pg_sleep(10)")
		return err
	})
	if companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Fatalf("a statement past the timeout: %v (code %s); want service_unavailable", err, companydocs.ErrorCode(err))
	}
}

// TestPoolExhaustionIsUnavailable: when every connection stays busy for
// the acquire timeout, a request answers service_unavailable instead of
// waiting without end.
func TestPoolExhaustionIsUnavailable(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{MaxConns: 1, AcquireTimeout: 50 * time.Millisecond})
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- db.update(ctx, func(pgx.Tx) error {
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	err := db.Ping(ctx)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if companydocs.ErrorCode(err) != companydocs.EUNAVAILABLE {
		t.Fatalf("a request while the pool is exhausted: %v (code %s); want service_unavailable", err, companydocs.ErrorCode(err))
	}
	if s := db.PoolStats(); s.Max != 1 || s.CanceledAcquires+s.EmptyAcquires == 0 {
		t.Fatalf("pool stats %+v: want max 1 and the waiting acquire counted", s)
	}
}

// TestDeadlockIsRetried: two transactions that lock two rows in opposite
// orders deadlock; PostgreSQL aborts one, Update runs it again, and both
// commit.
func TestDeadlockIsRetried(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, Options{})
	mustExec(t, db, "CREATE TABLE t (id int PRIMARY KEY, n int)")
	mustExec(t, db, "INSERT INTO t VALUES (1, 0), (2, 0)")
	var wg sync.WaitGroup
	var first sync.WaitGroup // both hold their first row before taking the second
	first.Add(2)
	errs := make([]error, 2)
	for i, order := range [][2]int{{1, 2}, {2, 1}} {
		wg.Go(func() {
			attempt := 0
			errs[i] = db.update(ctx, func(tx pgx.Tx) error {
				attempt++
				if _, err := tx.Exec(ctx, "UPDATE t SET n = n + 1 WHERE id = $1", order[0]); err != nil {
					return err
				}
				if attempt == 1 {
					first.Done()
					first.Wait()
				}
				_, err := tx.Exec(ctx, "UPDATE t SET n = n + 1 WHERE id = $1", order[1])
				return err
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("a deadlocked transaction was not retried: %v", err)
		}
	}
	var sum int
	mustQuery(t, db, "SELECT sum(n) FROM t", &sum)
	if sum != 4 || db.PoolStats().Retries == 0 {
		t.Fatalf("sum %d after two transactions of two increments, %d retries; want 4 and at least one retry", sum, db.PoolStats().Retries)
	}
}

func mustExec(t *testing.T, db *DB, sql string) {
	t.Helper()
	ctx := context.Background()
	err := db.update(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, sql)
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func mustQuery(t *testing.T, db *DB, sql string, dest ...any) {
	t.Helper()
	ctx := context.Background()
	if err := db.view(ctx, func(tx pgx.Tx) error { return tx.QueryRow(ctx, sql).Scan(dest...) }); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// The metrics package reads the same figures; a field added on one side
// only breaks this conversion, which cmd/companydocs relies on.
var _ = metrics.PoolStats(PoolStats{})
