package ordering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DefaultSweepInterval is how often expired sessions are deleted.
const DefaultSweepInterval = time.Minute

// sweepBatch bounds the sessions one sweep transaction looks at, so that
// the sweep holds the write lock only briefly (about a millisecond for 500
// records) and order creates queue behind it no longer than that.
const sweepBatch = 500

// sweepEvery deletes expired sessions every interval until Close.
func (s *Service) sweepEvery(interval time.Duration) {
	defer close(s.sweepDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			n, err := s.sweepSessions()
			if err != nil {
				s.logger.Error("sweeping expired sessions failed", "file", s.db.Path(), "error", err)
			} else if n > 0 {
				s.logger.Debug("expired sessions swept", "deleted", n)
			}
		}
	}
}

// sweepSessions deletes every session that has expired (revoked sessions
// are kept until then, so that their clients learn why they fail). It
// walks the sessions in batches of one write transaction each and stops
// early when the service closes.
func (s *Service) sweepSessions() (deleted int, err error) {
	var from []byte
	for {
		select {
		case <-s.stop:
			return deleted, nil
		default:
		}
		now := s.now()
		var n int
		err := s.db.Update(func(tx *bolt.Tx) error {
			var err error
			n, from, err = sweepFrom(tx, from, now)
			return err
		})
		if err != nil {
			return deleted, fmt.Errorf("sweep sessions: %w", err)
		}
		deleted += n
		if from == nil {
			return deleted, nil
		}
	}
}

// sweepFrom looks at up to sweepBatch sessions from key from on (nil: the
// first), deletes the expired ones and returns where the next batch
// starts, or nil at the end.
func sweepFrom(tx *bolt.Tx, from []byte, now time.Time) (deleted int, next []byte, err error) {
	c := tx.Bucket(bucketSessions).Cursor()
	k, v := c.First()
	if from != nil {
		k, v = c.Seek(from)
	}
	type expired struct {
		hash []byte
		rec  SessionRecord
	}
	var gone []expired
	for i := 0; k != nil && i < sweepBatch; i++ {
		var rec SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return 0, nil, fmt.Errorf("decode session: %w", err)
		}
		if !now.Before(rec.ExpiresAt) {
			gone = append(gone, expired{bytes.Clone(k), rec})
		}
		k, v = c.Next()
	}
	next = bytes.Clone(k) // nil at the end
	for _, e := range gone {
		if err := deleteSession(tx, e.hash, &e.rec); err != nil {
			return 0, nil, err
		}
	}
	return len(gone), next, nil
}
