package ordering

import (
	"sync"
	"time"
)

// maxCachedSessions bounds the session cache; when it is full it starts
// over empty (live sessions are then read from the database once more).
const maxCachedSessions = 4096

// sessionCache keeps the live sessions that were authenticated, so that the
// session check of every request does not read and decode the stored
// record. It can hold only what the database holds: the server process is
// the only writer of the database (the file lock keeps the accounts
// command out), a session can end only by expiring, which every hit
// checks, or by RevokeSession or the per-account cap of CreateSession,
// which drop the entry; an entry read from the database before such an
// end committed is not stored (the epoch has moved on).
type sessionCache struct {
	mu      sync.RWMutex
	epoch   uint64 // counts revocations
	entries map[[32]byte]cachedSession
}

type cachedSession struct {
	account   string
	expiresAt time.Time
}

// get returns the account of a cached session that is live at now. An
// expired entry is dropped: the database answers why the token fails.
func (c *sessionCache) get(hash [32]byte, now time.Time) (string, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok {
		return "", false
	}
	if !now.Before(e.expiresAt) {
		c.mu.Lock()
		delete(c.entries, hash)
		c.mu.Unlock()
		return "", false
	}
	return e.account, true
}

// currentEpoch is read before a session is read from the database, and
// passed to put.
func (c *sessionCache) currentEpoch() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// put stores a live session read from the database, unless a revocation
// happened since epoch was read.
func (c *sessionCache) put(hash [32]byte, rec *SessionRecord, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if c.entries == nil || len(c.entries) >= maxCachedSessions {
		c.entries = make(map[[32]byte]cachedSession)
	}
	c.entries[hash] = cachedSession{account: rec.Account, expiresAt: rec.ExpiresAt}
}

// drop forgets a session that is being revoked.
func (c *sessionCache) drop(hash [32]byte) {
	c.mu.Lock()
	c.epoch++
	delete(c.entries, hash)
	c.mu.Unlock()
}
