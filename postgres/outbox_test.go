package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"companydocs/ordering"
)

// hangGuard bounds the waits of these tests; it is no timing check.
const hangGuard = time.Minute

func appendTestEvent(tx ordering.Tx, id string) error {
	return tx.AppendEvent(&ordering.Event{ID: id, Type: "order.created", OrderID: "ord_1", Account: "acme", At: t0, Payload: []byte("{}")})
}

// claimAll claims up to limit events in one transaction, deletes them, and
// returns their ids once it has committed.
func claimAll(db *DB, limit int) ([]string, error) {
	var ids []string
	err := db.Update(context.Background(), func(tx ordering.Tx) error {
		ids = nil
		events, err := tx.ClaimEvents(limit)
		for _, e := range events {
			if err == nil {
				err = tx.DeleteEvent(e.ID)
			}
			ids = append(ids, e.ID)
		}
		return err
	})
	return ids, err
}

// TestClaimsTakeEveryCommittedEventOnceAcrossNodes: 32 transactions on two
// nodes append events while claims on both nodes take them; one more
// transaction appends the lowest id first and commits only after the
// claims have taken all the others (a late commit below them). Every
// event is claimed exactly once, the late one included, and none is left.
func TestClaimsTakeEveryCommittedEventOnceAcrossNodes(t *testing.T) {
	nodes := openNodes(t, newDatabase(t), 2)
	newAccount(t, nodes[0], "acme", 0)
	mustUpdate(t, nodes[0], func(tx ordering.Tx) error { return tx.InsertOrder(testOrder("ord_1", "acme")) })
	appended, release, late := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once, released sync.Once
	var done atomic.Bool
	var writers, claimers sync.WaitGroup
	// On any failure, let every transaction end before the nodes close.
	t.Cleanup(func() {
		released.Do(func() { close(release) })
		done.Store(true)
		writers.Wait()
		claimers.Wait()
	})
	go func() {
		late <- nodes[1].Update(context.Background(), func(tx ordering.Tx) error {
			if err := appendTestEvent(tx, "evt_000"); err != nil {
				return err
			}
			once.Do(func() { close(appended) })
			<-release
			return nil
		})
	}()
	<-appended
	errs := make([]error, 32)
	for i := range errs {
		writers.Go(func() {
			errs[i] = nodes[i%2].Update(context.Background(), func(tx ordering.Tx) error {
				return appendTestEvent(tx, fmt.Sprintf("evt_%03d", i+1))
			})
		})
	}
	var taken atomic.Int64
	claimed := make([][]string, 2)
	claimErrs := make([]error, 2)
	for n := range claimed {
		claimers.Go(func() {
			for {
				finishing := done.Load() // set before this claim began
				ids, err := claimAll(nodes[n], 5)
				if err != nil {
					claimErrs[n] = err
					return
				}
				claimed[n] = append(claimed[n], ids...)
				taken.Add(int64(len(ids)))
				if len(ids) == 0 && finishing {
					return
				}
				if len(ids) == 0 {
					time.Sleep(time.Millisecond) // nothing to take yet
				}
			}
		})
	}
	writers.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(hangGuard); taken.Load() < int64(len(errs)); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the claims took %d of the %d committed events", taken.Load(), len(errs))
		}
	}
	released.Do(func() { close(release) })
	if err := <-late; err != nil {
		t.Fatal(err)
	}
	done.Store(true)
	claimers.Wait()
	for _, err := range claimErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(claimed[0]), claimed[1]...)))
	want := []string{"evt_000"}
	for i := range errs {
		want = append(want, fmt.Sprintf("evt_%03d", i+1))
	}
	if !slices.Equal(all, want) {
		t.Errorf("claimed %v (node 1: %d, node 2: %d); want each of evt_000 to evt_032 once", all, len(claimed[0]), len(claimed[1]))
	}
	mustUpdate(t, nodes[0], func(tx ordering.Tx) error {
		if depth, _, err := tx.OutboxStats(); depth != 0 || err != nil {
			t.Errorf("%d events left after the claims (%v)", depth, err)
		}
		return nil
	})
}

// TestClaimsKeepAnOrdersEventsInOrder: while one node's claim holds an
// order's first event, another node's claim does not take the order's
// next event: it waits for the first claim to end, then takes what is
// left. So the deliveries of one order are made in the order of its
// events, whichever nodes fan them out.
func TestClaimsKeepAnOrdersEventsInOrder(t *testing.T) {
	nodes := openNodes(t, newDatabase(t), 2)
	newAccount(t, nodes[0], "acme", 0)
	mustUpdate(t, nodes[0], func(tx ordering.Tx) error {
		if err := tx.InsertOrder(testOrder("ord_1", "acme")); err != nil {
			return err
		}
		if err := appendTestEvent(tx, "evt_1"); err != nil {
			return err
		}
		return appendTestEvent(tx, "evt_2")
	})
	holding, release, first := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	var once, released sync.Once
	t.Cleanup(func() { released.Do(func() { close(release) }) }) // before the nodes close
	go func() {
		first <- nodes[0].Update(context.Background(), func(tx ordering.Tx) error {
			events, err := tx.ClaimEvents(1)
			if err != nil || len(events) != 1 || events[0].ID != "evt_1" {
				return fmt.Errorf("first claim: %v, %v; want evt_1", events, err)
			}
			once.Do(func() { close(holding) })
			<-release
			return tx.DeleteEvent("evt_1")
		})
	}()
	select {
	case <-holding:
	case err := <-first:
		t.Fatal(err)
	}
	type result struct {
		ids []string
		err error
	}
	second := make(chan result, 1)
	go func() {
		ids, err := claimAll(nodes[1], 10)
		second <- result{ids, err}
	}()
	for deadline := time.Now().Add(hangGuard); !waitingForALock(t, nodes[0]); time.Sleep(time.Millisecond) {
		select {
		case r := <-second:
			t.Fatalf("a second claim took %v (%v) while the first held evt_1", r.ids, r.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second claim neither waited nor returned")
		}
	}
	released.Do(func() { close(release) })
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if r := <-second; r.err != nil || !slices.Equal(r.ids, []string{"evt_2"}) {
		t.Errorf("the second claim took %v (%v); want evt_2, after the first claim ended", r.ids, r.err)
	}
}

// waitingForALock reports whether a backend of this database waits for a
// lock (the claim lock, or a row another claim holds).
func waitingForALock(t *testing.T, db *DB) bool {
	var n int
	err := db.pool.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'").Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}
