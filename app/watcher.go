package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"companydocs"
	"companydocs/index"
	"companydocs/metrics"
	"companydocs/ordering"
)

// watchRetry is how long the watcher waits after a comparison failed (the
// store did not answer) before it tries again.
const watchRetry = 5 * time.Second

// watcher compares the watches with the current generation in the
// background: once at start (finishing what a killed process left, or
// catching up with a generation swapped in while none ran) and after
// every swap. Each watch commits its comparison with its event, so a
// comparison cut short loses nothing and repeats nothing.
type watcher struct {
	orders  *ordering.Orders
	live    *index.Live
	metrics *metrics.Registry
	logger  *slog.Logger
	// onEvents wakes the webhook dispatcher after events were written.
	onEvents func()

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

func startWatcher(orders *ordering.Orders, live *index.Live, m *metrics.Registry, logger *slog.Logger, onEvents func()) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{orders: orders, live: live, metrics: m, logger: logger, onEvents: onEvents,
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	if n, err := orders.CountWatches(ctx); err == nil {
		m.SetWatches(n)
	}
	go w.run()
	return w
}

// Wake asks for a comparison with the current generation; it never
// blocks (a comparison asked for while one is pending is the same one).
func (w *watcher) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) run() {
	defer close(w.done)
	for {
		retry := w.compare()
		var timer <-chan time.Time
		if retry {
			timer = time.After(watchRetry)
		}
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		case <-timer:
		}
	}
}

// compare runs one comparison with the current generation and reports
// whether it must be tried again.
func (w *watcher) compare() (retry bool) {
	gen, release := w.live.Acquire()
	defer release()
	if gen == nil {
		return false // closing
	}
	start := time.Now()
	run, err := w.orders.CompareWatches(w.ctx, gen, w.changesOf(gen), w.committed)
	if err != nil {
		if w.ctx.Err() == nil {
			w.logger.Error("comparing the watches with the generation failed; trying again", "generation", run.Generation,
				"compared", run.Compared, "events", run.Events, "retry_in", watchRetry, "err", err)
		}
		return w.ctx.Err() == nil
	}
	if run.Compared > 0 {
		w.logger.Info("watches compared with the generation", "generation", run.Generation, "compared", run.Compared,
			"changed", run.Changed, "ended", run.Removed, "events", run.Events, "duration", time.Since(start))
		if n, err := w.orders.CountWatches(w.ctx); err == nil {
			w.metrics.SetWatches(n)
		}
	}
	return false
}

// changesOf returns the change record of gen, or nil when it has none
// (built before change records, with --no-changes, or damaged): the
// comparison then looks every watched profile up.
func (w *watcher) changesOf(gen *index.Generation) ordering.ChangedProfiles {
	cs, err := gen.Changes()
	if err != nil {
		if !errors.Is(err, index.ErrNoChanges) {
			w.logger.Warn("the generation's change record cannot be read; every watched profile is looked up", "generation", gen.ID(), "err", err)
		}
		return nil
	}
	return changeRecord{cs}
}

// changeRecord is a generation's change record as the watches use it.
type changeRecord struct{ *index.ChangeSet }

// MovedTo returns the profile id a register change of the entry names,
// when it is another than the entry's own.
func (c changeRecord) MovedTo(id string) string {
	changes, ok, err := c.Lookup(id)
	if !ok || err != nil {
		return ""
	}
	for _, f := range changes {
		if f.Field != companydocs.FieldRegister {
			continue
		}
		raw, _ := json.Marshal(f.After)
		var after companydocs.RegisterValue
		if json.Unmarshal(raw, &after) == nil && after.ProfileID != id {
			return after.ProfileID
		}
	}
	return ""
}

// committed counts what one transaction of a comparison did and sends
// its events on their way.
func (w *watcher) committed(r ordering.WatchRun) {
	w.metrics.ObserveWatchRun(r.Compared, r.Changes, r.Changed, r.Removed, r.Events)
	w.logger.Debug("watch comparison committed", "generation", r.Generation, "compared", r.Compared, "events", r.Events)
	if r.Events > 0 && w.onEvents != nil {
		w.onEvents()
	}
}

// Close stops the watcher, cancelling a comparison under way (the
// watches it has not reached are compared at the next start), and
// waits for it.
func (w *watcher) Close() {
	w.cancel()
	<-w.done
}
