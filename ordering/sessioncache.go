package ordering

import (
	"sync"
	"time"
)

// maxCachedSessions bounds the session cache; when it is full it starts
// over empty (live sessions are then read from the database once more).
const maxCachedSessions = 4096

// SharedSessionCacheTTL is how long Accounts trusts a session it read
// from a SharedStore without reading it again. Another node may end the
// session (sign-out, key rotation, the session cap, the accounts
// command), and that node cannot reach this one's memory: so a session
// ended anywhere is refused on every node at most this long after the end
// committed. Each node then reads each busy token twice a second, one
// primary-key lookup.
const SharedSessionCacheTTL = 500 * time.Millisecond

// sessionCache keeps the live sessions that were authenticated, so that the
// session check of every request does not read and decode the stored
// record. With a store only this process writes (bbolt: the file lock
// keeps the accounts command out), it can hold only what the database
// holds: a session can end only by expiring, which every hit checks, or by
// RevokeSession or the per-account cap of CreateSession, which drop the
// entry; an entry read from the database before such an end committed is
// not stored (the epoch has moved on). With a SharedStore, other
// processes end sessions too: then an entry lives at most ttl from the
// moment before its read began.
type sessionCache struct {
	ttl     time.Duration // 0: until the session expires
	mu      sync.RWMutex
	epoch   uint64 // counts revocations
	entries map[[32]byte]cachedSession
}

type cachedSession struct {
	account string
	until   time.Time // the session's expiry, or the end of the ttl
}

// get returns the account of a cached session that is live at now. An
// expired entry is dropped: the database answers why the token fails, or
// (after the ttl) that it is still live.
func (c *sessionCache) get(hash [32]byte, now time.Time) (string, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok {
		return "", false
	}
	if !now.Before(e.until) {
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
// happened since epoch was read. readAt is the time taken before the read
// began, so that the ttl also covers the read itself.
func (c *sessionCache) put(hash [32]byte, rec *SessionRecord, epoch uint64, readAt time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if c.entries == nil || len(c.entries) >= maxCachedSessions {
		c.entries = make(map[[32]byte]cachedSession)
	}
	until := rec.ExpiresAt
	if c.ttl > 0 && readAt.Add(c.ttl).Before(until) {
		until = readAt.Add(c.ttl)
	}
	c.entries[hash] = cachedSession{account: rec.Account, until: until}
}

// drop forgets a session that is being revoked.
func (c *sessionCache) drop(hash [32]byte) {
	c.mu.Lock()
	c.epoch++
	delete(c.entries, hash)
	c.mu.Unlock()
}
