package metastore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"companydocs"
)

// TestOnePublishAtATime: while one publish holds the publishing lock, a
// second is refused at once, from another node and from the same one,
// with a sentence naming the first's process and host and when it
// connected; a node opening the database meanwhile migrates it (the
// migrations' lock is another). Released, the lock is taken again at
// once; a holder whose session ends without releasing it, as a killed
// publish's does (pg_terminate_backend here), lets go of it, and its
// release does nothing then.
func TestOnePublishAtATime(t *testing.T) {
	url := newDatabase(t)
	nodes := openNodes(t, url, 2)
	release := mustLockPublishing(t, nodes[0])
	for i, n := range nodes {
		began := time.Now()
		_, err := n.LockPublishing(context.Background())
		mustBeRefusedWhilePublishing(t, err)
		t.Logf("node %d refused after %s: %v", i, time.Since(began).Round(time.Millisecond), err)
	}
	openNodes(t, url, 1)
	release()

	killed := mustLockPublishing(t, nodes[1])
	terminateSession(t, nodes[0], "the publishing session", fmt.Sprintf(`SELECT pid FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = (%[1]d::bigint >> 32)::oid AND objid = (%[1]d::bigint & 4294967295)::oid`,
		publishingLockID))
	again := mustLockPublishing(t, nodes[0])
	began := time.Now()
	killed()
	if d := time.Since(began); d > time.Second {
		t.Errorf("releasing a lock whose session was terminated took %s", d)
	}
	if _, err := nodes[1].LockPublishing(context.Background()); err == nil {
		t.Error("the release of a terminated session let go of the lock its successor holds")
	}
	again()
}

// mustLockPublishing takes the publishing lock through s.
func mustLockPublishing(t *testing.T, s *Store) func() {
	t.Helper()
	release, err := s.LockPublishing(context.Background())
	if err != nil {
		t.Fatalf("the publishing lock, free: %v", err)
	}
	return release
}

// mustBeRefusedWhilePublishing checks that err is the refusal of a
// publish while another holds the lock, naming it.
func mustBeRefusedWhilePublishing(t *testing.T, err error) {
	t.Helper()
	var refusal *companydocs.Error
	switch {
	case err == nil:
		t.Fatal("the publishing lock was taken twice")
	case !errors.As(err, &refusal) || refusal.Key != "refusal.publish_running":
		t.Fatalf("%v, want the refusal refusal.publish_running", err)
	case !strings.Contains(err.Error(), publisherName()) || !strings.Contains(err.Error(), " UTC)"):
		t.Errorf("%q does not name the holder %q and when it connected", err, publisherName())
	}
}
