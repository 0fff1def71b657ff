package metastore

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"companydocs/internal/syncbuf"
	"companydocs/publication"

	"github.com/jackc/pgx/v5"
)

// TestListenerHearsAPublicationOnceLive: a node that starts listening
// hears of the newest live generation (it may have missed it); one begun
// is not heard of, one completed is, at once; completing a live one
// again is refused and tells no one.
func TestListenerHearsAPublicationOnceLive(t *testing.T) {
	ctx := context.Background()
	nodes := openNodes(t, newDatabase(t), 2)
	publisher, node := nodes[0], nodes[1]
	a, b := "gen-20261128T060000.000Z-aaaaaa", "gen-20261128T070000.000Z-bbbbbb"
	publish(t, publisher, a)
	heard := listen(t, node)
	waitHeard(t, heard, a) // from here on it listens: the newest live is read after LISTEN

	if err := publisher.BeginPublication(ctx, publication.Publication{Name: b, Manifest: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	hearNothing(t, heard, "after BeginPublication")
	began := time.Now()
	if err := publisher.CompletePublication(ctx, b); err != nil {
		t.Fatal(err)
	}
	waitHeard(t, heard, b)
	t.Logf("heard of %s %s after CompletePublication began", b, time.Since(began).Round(time.Millisecond))
	if err := publisher.CompletePublication(ctx, b); err == nil {
		t.Fatal("completing a live publication again was not refused")
	}
	hearNothing(t, heard, "after a refused CompletePublication")
}

// TestListenerListensAgainAfterItsConnectionIsLost: a listener whose
// connection is terminated logs a warning and connects again; a
// generation made live while it was away is heard of once it is back
// (as the newest live one), and the next one by its notification.
func TestListenerListensAgainAfterItsConnectionIsLost(t *testing.T) {
	nodes := openNodes(t, newDatabase(t), 2)
	publisher, node := nodes[0], nodes[1]
	var logged syncbuf.Buffer
	node.WithLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	a, b, c := "gen-20261128T060000.000Z-aaaaaa", "gen-20261128T070000.000Z-bbbbbb", "gen-20261128T080000.000Z-cccccc"
	publish(t, publisher, a)
	heard := listen(t, node)
	waitHeard(t, heard, a)

	lost := time.Now()
	terminateListener(t, publisher)
	publish(t, publisher, b) // while the listener is away
	waitHeard(t, heard, b)
	t.Logf("heard of %s, made live while the connection was lost, %s after it was", b, time.Since(lost).Round(time.Millisecond))
	publish(t, publisher, c)
	waitHeard(t, heard, c)
	if !strings.Contains(logged.String(), "listening for publications failed") {
		t.Errorf("the lost connection was not logged; the log:\n%s", logged.String())
	}
}

// publish begins and completes the publication of name.
func publish(t *testing.T, s *Store, name string) {
	t.Helper()
	ctx := context.Background()
	if err := s.BeginPublication(ctx, publication.Publication{Name: name, Manifest: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.CompletePublication(ctx, name); err != nil {
		t.Fatal(err)
	}
}

// listen runs s.ListenPublications until the test ends, and returns what
// it hears.
func listen(t *testing.T, s *Store) <-chan string {
	heard := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ListenPublications(ctx, func(name string) { heard <- name })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return heard
}

// heardWithin bounds the wait for a notification: a listener that lost
// its connection listens again after a second.
const heardWithin = 10 * time.Second

// waitHeard waits until name is heard, passing over what comes before.
func waitHeard(t *testing.T, heard <-chan string, name string) {
	t.Helper()
	deadline := time.After(heardWithin)
	for {
		select {
		case got := <-heard:
			if got == name {
				return
			}
		case <-deadline:
			t.Fatalf("%s not heard of within %s", name, heardWithin)
		}
	}
}

// hearNothing checks that nothing is heard for a while.
func hearNothing(t *testing.T, heard <-chan string, when string) {
	t.Helper()
	select {
	case got := <-heard:
		t.Errorf("%s: heard of %s", when, got)
	case <-time.After(500 * time.Millisecond):
	}
}

// terminateListener ends the session of the database's one listening
// connection, as a database restart or a network failure would, and
// waits until it is gone.
func terminateListener(t *testing.T, s *Store) {
	t.Helper()
	terminateSession(t, s, "the listening session", `SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %'`)
}

// terminateSession ends the one session whose pid query selects, and
// waits until it is gone.
func terminateSession(t *testing.T, s *Store, what, query string) {
	t.Helper()
	ctx := context.Background()
	var pid int32
	err := s.db.UpdateSQL(ctx, func(tx pgx.Tx) error {
		var terminated bool
		return tx.QueryRow(ctx, `SELECT pid, pg_terminate_backend(pid) FROM (`+query+`) s`).Scan(&pid, &terminated)
	})
	if err != nil {
		t.Fatalf("terminate %s: %v", what, err)
	}
	for deadline := time.Now().Add(heardWithin); ; time.Sleep(10 * time.Millisecond) {
		var alive bool
		err := s.db.ViewSQL(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&alive)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminated session %d is still there after %s", pid, heardWithin)
		}
	}
}
