package ordering

import (
	"context"
	"fmt"
	"time"
)

// DefaultSweepInterval is how often expired sessions are deleted.
const DefaultSweepInterval = time.Minute

// sweepBatch bounds the sessions one sweep transaction looks at, so that
// the sweep holds the write lock only briefly (about a millisecond for 500
// records) and order creates queue behind it no longer than that.
const sweepBatch = 500

// sweepEvery deletes expired sessions every interval until Close.
func (s *Accounts) sweepEvery(interval time.Duration) {
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
				s.logger.Error("sweeping expired sessions failed", "error", err)
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
func (s *Accounts) sweepSessions() (deleted int, err error) {
	from := ""
	for {
		select {
		case <-s.stop:
			return deleted, nil
		default:
		}
		now := s.now()
		var n int
		next := ""
		err := s.store.Update(context.Background(), func(tx Tx) error {
			var err error
			n, next, err = tx.SweepSessions(now, from, sweepBatch)
			return err
		})
		if err != nil {
			return deleted, fmt.Errorf("sweep sessions: %w", err)
		}
		deleted += n
		if from = next; from == "" {
			return deleted, nil
		}
	}
}
