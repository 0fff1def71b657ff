package bbolt

import (
	"fmt"
	"sync"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// maxGroup bounds the creates that share one transaction, so that one
// commit under a burst stays short.
const maxGroup = 512

// groupCommit runs writes in shared bbolt transactions: one goroutine takes
// every write that is waiting, runs them one after the other in one
// transaction and commits once, so that they share one fsync. While it
// commits, new writes queue for the next round: the group grows with the
// load, and a write that comes alone commits at once instead of waiting a
// fixed delay for company (bbolt's DB.Batch waits MaxBatchDelay, and its
// batches started while a commit runs queue behind it one by one).
type groupCommit struct {
	db   *bolt.DB
	wake chan struct{}
	done chan struct{}
	// lastEvent is the highest outbox event id stored or appended; only
	// the committing goroutine uses it (see tx.EventIDFloor).
	lastEvent string

	mu      sync.Mutex
	pending []*groupCall
	closed  bool
}

type groupCall struct {
	fn  func(*tx) error
	err chan error
}

func newGroupCommit(db *bolt.DB) (*groupCommit, error) {
	g := &groupCommit{db: db, wake: make(chan struct{}, 1), done: make(chan struct{})}
	err := db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketOutbox); b != nil {
			last, _ := b.Cursor().Last()
			g.lastEvent = string(last)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	go g.loop()
	return g, nil
}

// run queues fn for the next shared transaction and returns after that
// transaction is committed and synced: nil, or fn's own error (its
// writes are then not committed), or the commit's error. fn may run more
// than once (when another write in its group fails, the group is rolled
// back and run again without it), so it must only fill variables that
// each run sets afresh.
func (g *groupCommit) run(fn func(*tx) error) error {
	c := &groupCall{fn: fn, err: make(chan error, 1)}
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return berrors.ErrDatabaseNotOpen
	}
	g.pending = append(g.pending, c)
	g.mu.Unlock()
	g.signal()
	return <-c.err
}

func (g *groupCommit) signal() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// close commits what is queued, refuses further writes and returns once
// the goroutine has stopped.
func (g *groupCommit) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.signal()
	<-g.done
}

func (g *groupCommit) loop() {
	defer close(g.done)
	for range g.wake {
		for {
			g.mu.Lock()
			n := min(len(g.pending), maxGroup)
			calls := g.pending[:n:n]
			if g.pending = g.pending[n:]; len(g.pending) == 0 {
				g.pending = nil
			}
			g.mu.Unlock()
			if n == 0 {
				break
			}
			g.commit(calls)
		}
		g.mu.Lock()
		stop := g.closed && len(g.pending) == 0
		g.mu.Unlock()
		if stop {
			return
		}
	}
}

// commit runs calls in one transaction. A call that fails after writing
// gets its error and the others run again without it, in a fresh
// transaction, since it may have written part of its changes. A call that
// fails before writing (a refusal: a duplicate, too few credits) stays in
// the group and gets its error once the group has committed, since its
// answer rests on what the calls before it wrote.
func (g *groupCommit) commit(calls []*groupCall) {
	for len(calls) > 0 {
		failed, errs, err := g.runGroup(calls)
		if failed < 0 {
			for i, c := range calls {
				if err != nil {
					c.err <- err
				} else {
					c.err <- errs[i]
				}
			}
			return
		}
		calls[failed].err <- errs[failed]
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// runGroup runs calls in one write transaction and commits it, unless a
// call failed after writing (failed is its index, and nothing commits) or
// no call wrote anything (nothing to commit, no fsync).
func (g *groupCommit) runGroup(calls []*groupCall) (failed int, errs []error, err error) {
	btx, err := g.db.Begin(true)
	if err != nil {
		return -1, nil, err
	}
	errs = make([]error, len(calls))
	wrote := false
	for i, c := range calls {
		t := newTx(btx, g)
		errs[i] = safeCall(c.fn, t)
		wrote = wrote || t.wrote
		if errs[i] != nil && t.wrote {
			btx.Rollback()
			return i, errs, nil
		}
	}
	if !wrote {
		return -1, errs, btx.Rollback()
	}
	return -1, errs, btx.Commit()
}

// safeCall turns a panic of fn into its error, so that one bad write does
// not take the committing goroutine (and every waiting create) down.
func safeCall(fn func(*tx) error, t *tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			t.wrote = true // it may have written part of its changes
			err = fmt.Errorf("panic in order transaction: %v", p)
		}
	}()
	return fn(t)
}
