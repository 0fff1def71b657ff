package ordering

import (
	"context"
	"log/slog"
	"time"
)

// WatchRetry is how long a Watcher waits after a comparison failed (the
// store did not answer) before it tries again.
const WatchRetry = 5 * time.Second

// WatcherHooks connect a Watcher to the index and the metrics, which this
// package does not know.
type WatcherHooks struct {
	// Acquire acquires the current generation and returns it with its
	// change record (nil when it has none: every watched profile is then
	// looked up) and its release; a nil generation means the index is
	// closing.
	Acquire func() (gen WatchGeneration, changed ChangedProfiles, release func())
	// OnCommit observes each committed transaction of a comparison (for
	// the metrics); optional.
	OnCommit func(WatchRun)
	// OnCount is told how many watches there are, at start and after a
	// comparison that compared any (for the gauge); optional.
	OnCount func(n int)
	// OnEvents wakes the webhook dispatcher after events were written;
	// optional.
	OnEvents func()
	// Logger receives what the comparisons did (default the Watches').
	Logger *slog.Logger
}

// Watcher compares the watches with the current generation in the
// background: once at start (finishing what a killed process left, or
// catching up with a generation swapped in while none ran) and after
// every Wake (a swap). Each watch commits its comparison with its event,
// so a comparison cut short loses nothing and repeats nothing.
type Watcher struct {
	watches *Watches
	hooks   WatcherHooks

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// StartWatcher starts the comparisons of s in the background; Close
// stops them.
func (s *Watches) StartWatcher(hooks WatcherHooks) *Watcher {
	if hooks.Logger == nil {
		hooks.Logger = s.logger
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{watches: s, hooks: hooks,
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	w.count()
	go w.run()
	return w
}

// Wake asks for a comparison with the current generation; it never
// blocks (a comparison asked for while one is pending is the same one).
func (w *Watcher) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Watcher) run() {
	defer close(w.done)
	for {
		retry := w.compare()
		var timer <-chan time.Time
		if retry {
			timer = time.After(WatchRetry)
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
func (w *Watcher) compare() (retry bool) {
	gen, changed, release := w.hooks.Acquire()
	defer release()
	if gen == nil {
		return false // closing
	}
	start := time.Now()
	run, err := w.watches.CompareWatches(w.ctx, gen, changed, w.committed)
	if err != nil {
		if w.ctx.Err() == nil {
			w.hooks.Logger.Error("comparing the watches with the generation failed; trying again", "generation", run.Generation,
				"compared", run.Compared, "events", run.Events, "retry_in", WatchRetry, "err", err)
		}
		return w.ctx.Err() == nil
	}
	if run.Compared > 0 {
		w.hooks.Logger.Info("watches compared with the generation", "generation", run.Generation, "compared", run.Compared,
			"changed", run.Changed, "ended", run.Removed, "events", run.Events, "duration", time.Since(start))
		w.count()
	}
	return false
}

// count tells OnCount how many watches there are; a store that does not
// answer leaves the gauge as it was.
func (w *Watcher) count() {
	if w.hooks.OnCount == nil {
		return
	}
	if n, err := w.watches.CountWatches(w.ctx); err == nil {
		w.hooks.OnCount(n)
	}
}

// committed counts what one transaction of a comparison did and sends
// its events on their way.
func (w *Watcher) committed(r WatchRun) {
	if w.hooks.OnCommit != nil {
		w.hooks.OnCommit(r)
	}
	w.hooks.Logger.Debug("watch comparison committed", "generation", r.Generation, "compared", r.Compared, "events", r.Events)
	if r.Events > 0 && w.hooks.OnEvents != nil {
		w.hooks.OnEvents()
	}
}

// Close stops the watcher, cancelling a comparison under way (the
// watches it has not reached are compared at the next start), and
// waits for it.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}
