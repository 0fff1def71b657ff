package bbolt

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

func openTestDB(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "group.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("b"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return db
}

// put writes key=key in bucket b; "fail" writes, then fails, "panic"
// writes, then panics, and "refuse" fails before writing.
func put(key string) func(*tx) error {
	return func(t *tx) error {
		if key == "refuse" {
			return errors.New("refused before writing")
		}
		if err := t.write([]byte("b")).Put([]byte(key), []byte(key)); err != nil {
			return err
		}
		switch key {
		case "fail":
			return errors.New("refused")
		case "panic":
			panic("boom")
		}
		return nil
	}
}

func TestGroupCommitIsolatesAFailingWrite(t *testing.T) {
	db := openTestDB(t)
	g := mustGroupCommit(t, db)
	defer g.close()
	keys := []string{"fail", "panic", "refuse"}
	for i := range 50 {
		keys = append(keys, fmt.Sprint("k", i))
	}
	errs := make([]error, len(keys))
	// The first write holds the committer inside its transaction until
	// the others, failing ones among them, are queued for the next one.
	inside, release := make(chan struct{}), make(chan struct{})
	first := func(tx *tx) error {
		close(inside)
		<-release
		return put("first")(tx)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := g.run(first); err != nil {
			t.Error(err)
		}
	}()
	<-inside
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.run(put(k))
		}()
	}
	waitPending(g, len(keys))
	close(release)
	wg.Wait()
	if errs[0] == nil || errs[0].Error() != "refused" {
		t.Errorf("failing write: %v, want its own error", errs[0])
	}
	if errs[1] == nil {
		t.Error("panicking write: no error")
	}
	if errs[2] == nil || errs[2].Error() != "refused before writing" {
		t.Errorf("refusing write: %v, want its own error", errs[2])
	}
	for i, err := range errs[3:] {
		if err != nil {
			t.Errorf("write %s: %v", keys[i+3], err)
		}
	}
	err := db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("b"))
		for _, k := range keys {
			got := b.Get([]byte(k))
			if stored := got != nil; stored != (k != "fail" && k != "panic" && k != "refuse") {
				t.Errorf("key %s stored = %v", k, stored)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitPending waits until n writes are queued.
func waitPending(g *groupCommit, n int) {
	for {
		g.mu.Lock()
		queued := len(g.pending)
		g.mu.Unlock()
		if queued == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestGroupCommitCloseRefusesLaterWrites(t *testing.T) {
	db := openTestDB(t)
	g := mustGroupCommit(t, db)
	if err := g.run(put("before")); err != nil {
		t.Fatal(err)
	}
	g.close()
	g.close()
	if err := g.run(put("after")); !errors.Is(err, berrors.ErrDatabaseNotOpen) {
		t.Errorf("write after close: %v, want ErrDatabaseNotOpen", err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("b")).Get([]byte("before")) == nil {
			t.Error("write before close not stored")
		}
		return nil
	})
}

// TestGroupCommitWithoutWritesCommitsNothing: a group whose calls only
// read (a claim of due webhooks in this store) is rolled back, so it costs
// no commit and no fsync.
func TestGroupCommitWithoutWritesCommitsNothing(t *testing.T) {
	db := openTestDB(t)
	g := mustGroupCommit(t, db)
	defer g.close()
	before := lastTxID(t, db)
	err := g.run(func(t *tx) error {
		t.read([]byte("b")).Get([]byte("k"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := lastTxID(t, db); after != before {
		t.Errorf("a group that only read committed: transaction id %d, was %d", after, before)
	}
	if err := g.run(put("k")); err != nil || lastTxID(t, db) != before+1 {
		t.Errorf("a write: %v, transaction id %d, want %d", err, lastTxID(t, db), before+1)
	}
}

// lastTxID is the id of the last committed write transaction.
func lastTxID(tb testing.TB, db *bolt.DB) int {
	tx, err := db.Begin(false)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback()
	return tx.ID()
}

func mustGroupCommit(t *testing.T, db *bolt.DB) *groupCommit {
	t.Helper()
	g, err := newGroupCommit(db)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
