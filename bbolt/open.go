package bbolt

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"companydocs/internal/boltfile"
	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// DefaultCheckTimeout bounds the check of an existing database at Open.
const DefaultCheckTimeout = time.Minute

// ErrDamaged is wrapped by the errors of Open and Check that describe a
// damaged database file. It is ordering.ErrDamaged, which a missing
// document file wraps too, so that callers test for one error.
var ErrDamaged = ordering.ErrDamaged

// ErrInUse is returned by Open when another process holds the database.
var ErrInUse = errors.New("the order database is in use by a running server; stop it, or use the server's HTTP API instead")

// ErrCheckTimeout is returned by Open when the check did not finish
// within Options.CheckTimeout.
var ErrCheckTimeout = errors.New("the check of the order database did not finish in time")

// openDB opens the bbolt file at path. It never creates a database over
// an existing file: a missing file becomes a new database, an existing
// one is checked first (unless opts.SkipCheck) and refused when damaged,
// and is never written to before the check has passed.
func openDB(path string, opts Options) (*bolt.DB, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && !opts.ReadOnly:
		return boltOpen(path, opts)
	case err != nil:
		return nil, fmt.Errorf("open order database %q: %w", path, err)
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("open order database %q: not a regular file", path)
	}
	deadline := time.Now().Add(opts.CheckTimeout)
	if err := precheck(path, opts, deadline); err != nil {
		return nil, err
	}
	db, err := boltOpen(path, opts)
	if err != nil || opts.SkipCheck {
		return db, err
	}
	if err := checkBefore(db, deadline); err != nil {
		return nil, fmt.Errorf("order database %q: %w", path, err)
	}
	return db, nil
}

// precheck walks the file with bounds-checked reads (package boltfile),
// under a shared lock so that a running server's writes are not mistaken
// for damage: bbolt would fault or panic on what it finds wrong.
func precheck(path string, opts Options, deadline time.Time) error {
	unlock, err := sharedLock(path, opts.OpenTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	bf, err := boltfile.Open(path)
	if err != nil {
		return damage(path, err)
	}
	defer bf.Close()
	for _, w := range bf.Warnings {
		opts.Logger.Warn("order database: "+w, "path", path)
	}
	if opts.SkipCheck {
		return nil // the meta pages and the file size are checked: bbolt can map it
	}
	if err := bf.Walk(deadline, nil); err != nil {
		return damage(path, err)
	}
	return nil
}

// damage turns a boltfile error into an error of this package.
func damage(path string, err error) error {
	switch {
	case errors.Is(err, boltfile.ErrDeadline):
		return fmt.Errorf("order database %q: %w", path, ErrCheckTimeout)
	case errors.Is(err, boltfile.ErrDamaged):
		return fmt.Errorf("order database %q: %w: %w", path, ErrDamaged, err)
	}
	return fmt.Errorf("open order database %q: %w", path, err)
}

// sharedLock takes a shared flock on path, as a read-only bbolt does, and
// returns ErrInUse when a server holds the exclusive one past timeout.
func sharedLock(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open order database %q: %w", path, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing the file drops the lock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("open order database %q: %w", path, ErrInUse)
			}
			return nil, fmt.Errorf("lock order database %q: %w", path, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// boltOpen opens the file with bbolt. A panic in bbolt is the last line
// of defence against damage the precheck did not see (or was told to
// skip): it becomes an error, never a crash.
func boltOpen(path string, opts Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("order database %q: %w: bbolt: %v", path, ErrDamaged, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.OpenTimeout, ReadOnly: opts.ReadOnly})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open order database %q: %w", path, ErrInUse)
	} else if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return nil, fmt.Errorf("order database %q: %w: %w", path, ErrDamaged, err)
	} else if err != nil {
		return nil, fmt.Errorf("open order database %q: %w", path, err)
	}
	db.MaxBatchDelay = batchDelay
	return db, nil
}

// batchDelay is how long a webhook attempt's record (the one Batch user)
// waits for others to share its commit. bbolt's 10 ms default is most of
// the time between two deliveries to one endpoint, which get one attempt
// at a time; the commits of many endpoints' attempts still coalesce.
const batchDelay = 2 * time.Millisecond

// checkBefore runs checkDB until deadline. On time-out the check goes on
// in the background and closes the database when it ends (bbolt cannot
// stop it, and Close would wait for it).
func checkBefore(db *bolt.DB, deadline time.Time) error {
	done := make(chan error, 1)
	go func() { done <- checkDB(db) }()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			db.Close()
		}
		return err
	case <-timer.C:
		go func() { <-done; db.Close() }()
		return ErrCheckTimeout
	}
}

// checkDB runs bbolt's check (pages lost, freed twice, keys out of order)
// and this package's: only known buckets at the top, JSON records in the
// buckets that hold JSON.
func checkDB(db *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDamaged, r)
		}
	}()
	check := func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			if len(errs) < 10 { // the first few say enough
				errs = append(errs, err)
			}
		}
		if len(errs) == 0 {
			errs = append(errs, checkRecords(tx))
		}
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%w: %w", ErrDamaged, err)
		}
		return nil
	}
	if db.IsReadOnly() {
		return db.View(check)
	}
	// bbolt's page check in a read transaction compares the snapshot with
	// the live freelist, so a write committing meanwhile (the webhook
	// dispatcher, the session sweep) shows up as "unreachable unfreed"
	// pages (boltdb/bolt#174). A write transaction, rolled back, keeps
	// writers out for the check's duration instead.
	err = db.Update(func(tx *bolt.Tx) error {
		if err := check(tx); err != nil {
			return err
		}
		return errRollback
	})
	if errors.Is(err, errRollback) {
		return nil
	}
	return err
}

// errRollback ends a write transaction that only reads.
var errRollback = errors.New("rollback")
