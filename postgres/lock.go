package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// LockHolder is the session that holds an advisory lock TryLock did not
// get.
type LockHolder struct {
	// Application is its application_name, which pg_stat_activity shows
	// every role ("" when it set none).
	Application string
	// Since is when its session began: zero when the holder is another
	// role's (pg_stat_activity hides it from others) or has just let go.
	Since time.Time
}

// TryLock takes the session-level advisory lock key at once or not at
// all. The lock is held by a connection of its own, named application
// (its application_name), made with the pool's settings but outside it:
// a lock belongs to its session, and a pooled connection serves others.
// It is held until release, or until the session ends: the server ends
// the session of a process that is killed, and the lock with it. When
// another session holds the lock, TryLock returns that one and a nil
// release.
func (db *DB) TryLock(ctx context.Context, key int64, application string) (release func(), holder *LockHolder, err error) {
	conn, err := db.ownConnection(ctx, application)
	if err != nil {
		return nil, nil, classify(ctx, fmt.Errorf("connect to take advisory lock %d: %w", key, err))
	}
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&locked); err != nil {
		closeConnection(conn)
		return nil, nil, classify(ctx, fmt.Errorf("take advisory lock %d: %w", key, err))
	}
	if !locked {
		defer closeConnection(conn)
		holder, err := lockHolder(ctx, conn, key)
		return nil, holder, classify(ctx, err)
	}
	return func() { unlock(conn, key) }, nil, nil
}

// lockHolder returns the session that holds the advisory lock key in
// this database; an empty holder when it let go since.
func lockHolder(ctx context.Context, conn *pgx.Conn, key int64) (*LockHolder, error) {
	// A bigint key is shown as its two unsigned halves (classid, objid)
	// and objsubid 1.
	rows, err := conn.Query(ctx, `SELECT coalesce(a.application_name, ''), coalesce(a.backend_start, 'epoch')
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid = (($1::bigint >> 32) & 4294967295)::oid AND l.objid = ($1::bigint & 4294967295)::oid`, key)
	if err != nil {
		return nil, fmt.Errorf("find the holder of advisory lock %d: %w", key, err)
	}
	holders, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LockHolder, error) {
		var h LockHolder
		err := r.Scan(&h.Application, &h.Since)
		if h.Since.Equal(time.Unix(0, 0)) {
			h.Since = time.Time{}
		}
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("find the holder of advisory lock %d: %w", key, err)
	}
	if len(holders) == 0 {
		return &LockHolder{}, nil
	}
	return &holders[0], nil
}

// unlock lets go of the advisory lock key and closes its connection. The
// lock is let go of before the connection closes, so that it is free when
// release returns (the server ends a closed session a moment later); a
// connection lost before holds no lock any more.
func unlock(conn *pgx.Conn, key int64) {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
	closeConnection(conn)
}
