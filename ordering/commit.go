package ordering

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

	mu      sync.Mutex
	pending []*groupCall
	closed  bool
}

type groupCall struct {
	fn  func(*bolt.Tx) error
	err chan error
}

func newGroupCommit(db *bolt.DB) *groupCommit {
	g := &groupCommit{db: db, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go g.loop()
	return g
}

// run queues fn for the next shared transaction and returns after that
// transaction is committed and synced: nil, or fn's own error (its
// writes are then not committed), or the commit's error. fn may run more
// than once (when another write in its group fails, the group is rolled
// back and run again without it), so it must only fill variables that
// each run sets afresh.
func (g *groupCommit) run(fn func(*bolt.Tx) error) error {
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

// commit runs calls in one transaction. A call that fails gets its error
// and the others run again without it, in a fresh transaction, since the
// failed call may have written part of its changes.
func (g *groupCommit) commit(calls []*groupCall) {
	for len(calls) > 0 {
		failed, failErr := -1, error(nil)
		err := g.db.Update(func(tx *bolt.Tx) error {
			for i, c := range calls {
				if err := safeCall(c.fn, tx); err != nil {
					failed, failErr = i, err
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			for _, c := range calls {
				c.err <- err
			}
			return
		}
		calls[failed].err <- failErr
		calls = append(calls[:failed:failed], calls[failed+1:]...)
	}
}

// safeCall turns a panic of fn into its error, so that one bad write does
// not take the committing goroutine (and every waiting create) down.
func safeCall(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in order transaction: %v", p)
		}
	}()
	return fn(tx)
}
