package httpapi

import (
	"crypto/sha256"
	"strings"
	"sync"
	"time"

	"companydocs"
)

// A batch is charged to the client address's search budget for the
// queries the service answered: an item that got an error of the
// service's own (service_unavailable: the index not ready, a search or
// the batch past its deadline; internal) is not charged, so that a client
// sending it again pays for it once. A batch sent again with the same
// Idempotency-Key (a retry after a lost answer) is charged only for the
// items not charged under that key before; chargedBatches remembers which
// were, per client address and key.

// Bounds of chargedBatches: at most maxChargedBatches keys, each
// forgotten chargedBatchTTL after its batch; a key holds a SHA-256 and a
// bit per query (about 0.5 kB with its key for a batch of 1,000).
const (
	maxChargedBatches = 10_000
	chargedBatchTTL   = time.Hour
)

// serviceFault reports whether an item's error code is the service's own
// failure, not the client's: such an item is not charged.
func serviceFault(code string) bool {
	return code == companydocs.EUNAVAILABLE || code == companydocs.EINTERNAL || code == companydocs.ETIMEOUT
}

// chargedBatches remembers which items of keyed batches were charged.
type chargedBatches struct {
	mu    sync.Mutex
	byKey map[string]*chargedBatch
	now   func() time.Time
}

type chargedBatch struct {
	body    [sha256.Size]byte // the batch's body, which a retry must repeat
	charged []bool            // by position
	at      time.Time
}

func newChargedBatches() *chargedBatches {
	return &chargedBatches{byKey: map[string]*chargedBatch{}, now: time.Now}
}

// uncharged counts the queries of a batch of n not charged under rec.
func (b *chargedBatches) uncharged(rec *chargedBatch, n int) int {
	if rec == nil {
		return n
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, charged := range rec.charged {
		if charged {
			n--
		}
	}
	return n
}

// recall returns the record of client's key for a batch of n queries,
// made for body when the key is new; nil when key is empty. A key used
// before for another body is refused.
func (b *chargedBatches) recall(client, key string, body []byte, n int) (*chargedBatch, error) {
	if key == "" {
		return nil, nil
	}
	sum := sha256.Sum256(body)
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	id := client + "\x00" + key
	rec, ok := b.byKey[id]
	if ok && now.Sub(rec.at) > chargedBatchTTL {
		ok = false
	}
	if ok && (rec.body != sum || len(rec.charged) != n) {
		return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.batch_key_reused", nil)
	}
	if !ok {
		b.forgetOld(now)
		rec = &chargedBatch{body: sum, charged: make([]bool, n), at: now}
		b.byKey[strings.Clone(id)] = rec
	}
	return rec, nil
}

// markPositions records in rec (when not nil) the positions charged now.
func (b *chargedBatches) markPositions(rec *chargedBatch, positions []int) {
	if rec == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, i := range positions {
		rec.charged[i] = true
	}
}

// forgetOld drops the records past their time and, when the table is
// still full, all of them: that only ever errs on the client's side.
func (b *chargedBatches) forgetOld(now time.Time) {
	if len(b.byKey) < maxChargedBatches {
		return
	}
	for id, rec := range b.byKey {
		if now.Sub(rec.at) > chargedBatchTTL {
			delete(b.byKey, id)
		}
	}
	if len(b.byKey) >= maxChargedBatches {
		b.byKey = map[string]*chargedBatch{}
	}
}
