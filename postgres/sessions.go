package postgres

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

// Session returns the session with the token hash, or nil.
func (t sessionTx) Session(hash [32]byte) (*ordering.SessionRecord, error) {
	var s ordering.SessionRecord
	found, err := t.one("SELECT account, created_at, expires_at, revoked, ended_by FROM sessions WHERE token_hash = $1",
		[]any{hash[:]}, &s.Account, &s.CreatedAt, &s.ExpiresAt, &s.Revoked, &s.EndedBy)
	if err != nil || !found {
		return nil, wrap(err, "read a session")
	}
	s.CreatedAt, s.ExpiresAt = utc(s.CreatedAt), utc(s.ExpiresAt)
	return &s, nil
}

// PutSession inserts or changes a session.
func (t sessionTx) PutSession(hash [32]byte, rec *ordering.SessionRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec(`INSERT INTO sessions (token_hash, account, created_at, expires_at, revoked, ended_by)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (token_hash) DO UPDATE SET expires_at = excluded.expires_at, revoked = excluded.revoked, ended_by = excluded.ended_by`,
		hash[:], rec.Account, rec.CreatedAt, rec.ExpiresAt, rec.Revoked, rec.EndedBy)
	return wrap(err, "store a session")
}

// CountSessions counts the account's sessions; in Update it locks the
// account first, since the rules count to enforce the cap.
func (t sessionTx) CountSessions(account string) (int, error) {
	if err := t.lockAccount(account); err != nil {
		return 0, wrap(err, "lock the account")
	}
	var n int
	_, err := t.one("SELECT count(*) FROM sessions WHERE account = $1", []any{account}, &n)
	return n, wrap(err, "count sessions")
}

// OldestSessions returns the hashes of the account's oldest sessions.
func (t sessionTx) OldestSessions(account string, limit int) ([][32]byte, error) {
	rows, err := t.tx.Query(t.ctx, "SELECT token_hash FROM sessions WHERE account = $1 ORDER BY created_at, token_hash LIMIT $2", account, limit)
	if err != nil {
		return nil, wrap(err, "list the oldest sessions")
	}
	hashes, err := pgx.CollectRows(rows, scanHash)
	return hashes, wrap(err, "list the oldest sessions")
}

func scanHash(row pgx.CollectableRow) ([32]byte, error) {
	var b []byte
	var h [32]byte
	if err := row.Scan(&b); err != nil {
		return h, err
	}
	if len(b) != len(h) {
		return h, fmt.Errorf("a session token hash of %d bytes", len(b))
	}
	copy(h[:], b)
	return h, nil
}

// DeleteSessions deletes the sessions with these hashes.
func (t sessionTx) DeleteSessions(hashes [][32]byte) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	list := make([][]byte, len(hashes))
	for i := range hashes {
		list[i] = hashes[i][:]
	}
	_, err := t.exec("DELETE FROM sessions WHERE token_hash = ANY($1)", list)
	return wrap(err, "delete sessions")
}

// RevokeSessions revokes every live session of the account.
func (t sessionTx) RevokeSessions(account, endedBy string) ([][32]byte, error) {
	if err := t.needWrite(); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx, "UPDATE sessions SET revoked = true, ended_by = $2 WHERE account = $1 AND NOT revoked RETURNING token_hash", account, endedBy)
	if err != nil {
		return nil, wrap(err, "revoke sessions")
	}
	hashes, err := pgx.CollectRows(rows, scanHash)
	return hashes, wrap(err, "revoke sessions")
}

// SweepSessions deletes the expired sessions among up to limit from the
// position from, in token hash order; the position is the hex of the
// last hash looked at.
func (t sessionTx) SweepSessions(now time.Time, from string, limit int) (int, string, error) {
	if err := t.needWrite(); err != nil {
		return 0, "", err
	}
	start := []byte{} // below every hash (nil would be NULL)
	if from != "" {
		b, err := hex.DecodeString(from)
		if err != nil {
			return 0, "", fmt.Errorf("sweep sessions from %q: not a position this store returned", from)
		}
		start = b
	}
	var deleted, seen int
	var last []byte
	_, err := t.one(`WITH batch AS (SELECT token_hash, expires_at FROM sessions WHERE token_hash > $1 ORDER BY token_hash LIMIT $2),
		gone AS (DELETE FROM sessions s USING batch b WHERE s.token_hash = b.token_hash AND b.expires_at <= $3 RETURNING 1)
		SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM batch), (SELECT token_hash FROM batch ORDER BY token_hash DESC LIMIT 1)`,
		[]any{start, limit, now}, &deleted, &seen, &last)
	if err != nil {
		return 0, "", wrap(err, "sweep sessions")
	}
	if seen < limit {
		return deleted, "", nil
	}
	return deleted, hex.EncodeToString(last), nil
}

// wrap adds context to a failure; nil stays nil.
func wrap(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
