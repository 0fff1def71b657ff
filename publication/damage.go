package publication

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"companydocs/index"
	"companydocs/metrics"
	"companydocs/objectstore"
)

// A published generation can be damaged as it is published: an object
// that differs from its manifest, a manifest that cannot be read or that
// names paths outside the generation, or a file that matches a lying
// manifest but does not check (a profile store cut short). Fetching it
// again at every follow interval costs every node the whole download each
// time and changes nothing, so a node records the damage once (a metric,
// a log line, its heartbeat: companydocs nodes), goes on serving what it
// has, and fetches the generation again only after an exponential
// backoff. A damaged generation takes part in no answer of the ordering
// gate. A transient failure (the store down, a timeout) is not damage:
// the next interval continues the download.

// Backoff of a damaged generation: the first retry after damageBackoffBase,
// doubling with each failure up to damageBackoffMax. In five minutes a
// damaged generation is fetched at most four times (at 0, 30 s, 90 s and
// 210 s), then every 10 minutes.
const (
	damageBackoffBase = 30 * time.Second
	damageBackoffMax  = 10 * time.Minute
)

var (
	errDamagedManifest = errors.New("the published manifest is damaged")
	errDamagedStore    = errors.New("the downloaded profile store does not check")
)

// damage is what a node knows of a damaged published generation.
type damage struct {
	reason   string
	failures int
	retryAt  time.Time
}

// IsDamage tells damage of the published generation itself from a
// failure that the next try may not meet.
func IsDamage(err error) bool {
	return errors.Is(err, objectstore.ErrDamaged) || errors.Is(err, objectstore.ErrBadManifest) ||
		errors.Is(err, errDamagedManifest) || errors.Is(err, errDamagedStore) ||
		(errors.As(err, new(*index.RejectError)) && index.RejectReason(err) != index.RejectOpen)
}

// damageBackoff is how long a generation that failed failures times in a
// row is left alone.
func damageBackoff(failures int) time.Duration {
	d := damageBackoffBase
	for i := 1; i < failures && d < damageBackoffMax; i++ {
		d *= 2
	}
	return min(d, damageBackoffMax)
}

// recordDamage records name as damaged by err, closes its pending profile
// store, and says so once per failure: a log line and a metric.
func (f *Follower) recordDamage(name string, err error) {
	f.mu.Lock()
	d := f.damaged[name]
	d.failures++
	d.reason = err.Error()
	wait := damageBackoff(d.failures)
	d.retryAt = f.now().Add(wait)
	f.damaged[name] = d
	if f.pending == name {
		f.closePending()
	}
	count := len(f.damaged)
	f.mu.Unlock()
	f.metrics.ObserveFollowFailure(metrics.FollowDamaged)
	f.metrics.SetDamagedGenerations(count)
	f.logger.Error("a published generation is damaged; serving what this node has, fetched again after a backoff",
		"generation", name, "failures", d.failures, "retry_in", wait, "err", err)
}

// backingOff returns how long name is still left alone (0: try it).
func (f *Follower) backingOff(name string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.damaged[name]
	if !ok {
		return 0
	}
	return max(d.retryAt.Sub(f.now()), 0)
}

// isDamaged reports whether name is recorded as damaged; f.mu is held.
func (f *Follower) isDamaged(name string) bool {
	_, ok := f.damaged[name]
	return ok
}

// forgetDamage drops the damage records of generations no longer
// published live, or not newer than the one installed.
func (f *Follower) forgetDamage(pubs []Publication, installed string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for name := range f.damaged {
		live := slices.ContainsFunc(pubs, func(p Publication) bool {
			return p.Name == name && p.State == StateLive
		})
		if !live || name <= installed {
			delete(f.damaged, name)
		}
	}
	f.metrics.SetDamagedGenerations(len(f.damaged))
}

// report is what the heartbeat says of the node beside what it serves:
// the generation it installs, and the damaged ones with why and when they
// are fetched again.
func (f *Follower) report() (installing, damaged string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.damaged))
	for name := range f.damaged {
		names = append(names, name)
	}
	slices.Sort(names)
	var notes []string
	for _, name := range names {
		d := f.damaged[name]
		notes = append(notes, fmt.Sprintf("%s (%d failures, next try in %s): %s", name, d.failures,
			max(d.retryAt.Sub(f.now()), 0).Round(time.Second), d.reason))
	}
	return f.installing, truncateNote(strings.Join(notes, "; "))
}

// maxDamageNote bounds the damage note a heartbeat records.
const maxDamageNote = 1000

func truncateNote(s string) string {
	if len(s) <= maxDamageNote {
		return s
	}
	return strings.ToValidUTF8(s[:maxDamageNote], "") + "…"
}
