package metastore

import (
	"context"
	"fmt"
	"os"

	"companydocs"
	"companydocs/postgres"
)

// publishingLockID names the advisory lock a publish holds: any constant
// no other program on the database uses, and not the one the migrations
// run under (postgres's migrationLockID, "compdocs"), or a node starting
// during a publish would wait for it.
const publishingLockID = 0x636f_6d70_7075_626c // "comppubl"

// LockPublishing makes the caller the one publish on this database until
// release, or until its process ends: the lock is a session's
// (postgres.DB.TryLock), and the server ends the session of a process
// that is killed. It does not wait: while another publish holds the lock
// it refuses, naming that publish's process, host and start.
func (s *Store) LockPublishing(ctx context.Context) (release func(), err error) {
	release, holder, err := s.db.TryLock(ctx, publishingLockID, publisherName())
	if err != nil {
		return nil, wrap(err, "take the publishing lock")
	}
	if holder != nil {
		return nil, publishRunning(*holder)
	}
	return release, nil
}

// publisherName is what the session holding the publishing lock is
// called (its application_name): this process and its host, so that the
// next publish, and pg_stat_activity, can say which publish runs. The
// pid comes first since PostgreSQL keeps only the first 63 bytes.
func publisherName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "?"
	}
	return fmt.Sprintf("companydocs publish pid %d on %s", os.Getpid(), host)
}

// publishRunning is the refusal of a publish while another holds the
// lock; "?" stands for what the metastore cannot tell (the session of
// another role, or one that let go a moment ago).
func publishRunning(h postgres.LockHolder) error {
	holder, since := h.Application, "?"
	if holder == "" {
		holder = "?"
	}
	if !h.Since.IsZero() {
		since = h.Since.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.publish_running", companydocs.Args{"holder": holder, "since": since})
}
