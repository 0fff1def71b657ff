package httpapi

import "sync"

// slots counts what is held at once, in all and per key, each up to its
// cap (0: no cap): the connections of client addresses, the document
// transfers of accounts. onCount, when set, sees the count in all after
// every change, in order (it runs under the lock).
type slots[K comparable] struct {
	total, perKey int
	onCount       func(held int)

	mu    sync.Mutex
	held  int
	byKey map[K]int
}

func newSlots[K comparable](total, perKey int, onCount func(held int)) *slots[K] {
	return &slots[K]{total: total, perKey: perKey, onCount: onCount, byKey: map[K]int{}}
}

// take takes a slot for key unless a cap is full: key's own (checked
// first, and only when keyCapped) or the one in all.
func (s *slots[K]) take(key K, keyCapped bool) (keyFull, totalFull bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if keyCapped && s.perKey > 0 && s.byKey[key] >= s.perKey {
		return true, false
	}
	if s.total > 0 && s.held >= s.total {
		return false, true
	}
	s.held++
	s.byKey[key]++
	s.counted()
	return false, false
}

// release gives back a slot key took.
func (s *slots[K]) release(key K) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held--
	if s.byKey[key]--; s.byKey[key] <= 0 {
		delete(s.byKey, key)
	}
	s.counted()
}

func (s *slots[K]) counted() {
	if s.onCount != nil {
		s.onCount(s.held)
	}
}
