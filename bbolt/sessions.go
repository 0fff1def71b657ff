package bbolt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"companydocs/ordering"
)

// Session returns the session with the token hash, or nil.
func (t sessionTx) Session(hash [32]byte) (*ordering.SessionRecord, error) {
	var rec ordering.SessionRecord
	found, err := getJSON(t.read(bucketSessions), hash[:], &rec)
	if !found || err != nil {
		return nil, err
	}
	return &rec, nil
}

// PutSession stores a session and its entry in the account's index.
func (t sessionTx) PutSession(hash [32]byte, rec *ordering.SessionRecord) error {
	if err := putJSON(t.write(bucketSessions), hash[:], rec); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	if err := t.write(bucketAccountSessions).Put(accountSessionKey(rec, hash[:]), nil); err != nil {
		return fmt.Errorf("index session: %w", err)
	}
	return nil
}

// CountSessions counts the account's entries in the session index.
func (t sessionTx) CountSessions(account string) (int, error) {
	n := 0
	t.accountSessions(account, func([32]byte) bool { n++; return true })
	return n, nil
}

// OldestSessions returns the first limit hashes of the account's index.
func (t sessionTx) OldestSessions(account string, limit int) ([][32]byte, error) {
	var out [][32]byte
	t.accountSessions(account, func(h [32]byte) bool {
		if len(out) == limit {
			return false
		}
		out = append(out, h)
		return true
	})
	return out, nil
}

// accountSessions calls fn with the account's session hashes, oldest
// first, while it returns true.
func (t sessionTx) accountSessions(account string, fn func([32]byte) bool) {
	prefix := append([]byte(account), 0)
	c := t.read(bucketAccountSessions).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		var h [32]byte
		copy(h[:], k[len(k)-len(h):])
		if !fn(h) {
			return
		}
	}
}

// DeleteSessions removes sessions and their index entries.
func (t sessionTx) DeleteSessions(hashes [][32]byte) error {
	for _, h := range hashes {
		rec, err := t.Session(h)
		if err != nil {
			return err
		}
		if rec == nil {
			continue
		}
		if err := t.deleteSession(h[:], rec); err != nil {
			return err
		}
	}
	return nil
}

func (t sessionTx) deleteSession(hash []byte, rec *ordering.SessionRecord) error {
	if err := t.write(bucketAccountSessions).Delete(accountSessionKey(rec, hash)); err != nil {
		return fmt.Errorf("delete session index entry: %w", err)
	}
	if err := t.write(bucketSessions).Delete(hash); err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	return nil
}

// RevokeSessions marks the account's live sessions revoked.
func (t sessionTx) RevokeSessions(account, endedBy string) ([][32]byte, error) {
	var hashes, revoked [][32]byte
	t.accountSessions(account, func(h [32]byte) bool { hashes = append(hashes, h); return true })
	for _, h := range hashes {
		rec, err := t.Session(h)
		if err != nil {
			return nil, err
		}
		if rec == nil || rec.Revoked {
			continue
		}
		rec.Revoked, rec.EndedBy = true, endedBy
		if err := t.PutSession(h, rec); err != nil {
			return nil, err
		}
		revoked = append(revoked, h)
	}
	return revoked, nil
}

// SweepSessions walks the sessions bucket in key (hash) order; the
// position is the key to start at.
func (t sessionTx) SweepSessions(now time.Time, from string, limit int) (deleted int, next string, err error) {
	c := t.read(bucketSessions).Cursor()
	k, v := c.First()
	if from != "" {
		k, v = c.Seek([]byte(from))
	}
	type expired struct {
		hash []byte
		rec  ordering.SessionRecord
	}
	var gone []expired
	for i := 0; k != nil && i < limit; i++ {
		var rec ordering.SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return 0, "", fmt.Errorf("decode session: %w", err)
		}
		if !now.Before(rec.ExpiresAt) {
			gone = append(gone, expired{bytes.Clone(k), rec})
		}
		k, v = c.Next()
	}
	next = string(k) // "" at the end
	for _, e := range gone {
		if err := t.deleteSession(e.hash, &e.rec); err != nil {
			return 0, "", err
		}
	}
	return len(gone), next, nil
}
