package index

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"companydocs"
	"companydocs/register"
)

// DefaultPollInterval is how often Live checks CURRENT by default.
const DefaultPollInterval = time.Second

// LiveOptions configure OpenLive. The zero value is usable.
type LiveOptions struct {
	// PollInterval is how often CURRENT is checked; default
	// DefaultPollInterval. A negative value turns polling off (call Reload).
	PollInterval time.Duration
	// OnSwap is called after a new generation has been swapped in.
	OnSwap func(Meta)
	// OnReject is called when a generation is refused (see Open), with its
	// name and the reason (RejectMeta, RejectFiles, ...): once per
	// generation and reason in a row, however often polling retries it.
	OnReject func(generation, reason string)
	// Logger receives swap and failure messages; default slog.Default().
	Logger *slog.Logger
}

// Live serves the generation CURRENT names and follows CURRENT: when it
// changes, Live verifies and opens the new generation (Open), swaps it in
// atomically and closes the old one once the searches using it have
// finished. A generation that is refused is logged and reported to
// OnReject, and the old one keeps serving. A refusal for damage
// (RejectFiles, RejectStructure, RejectMeta, RejectVersion) holds until
// CURRENT names another generation, so a damaged generation is not read
// again on every poll; a failure to open (RejectOpen: out of file
// descriptors, say) is retried at every poll.
//
// Live implements the lookups of a Generation by acquiring the current
// generation for each call; a caller that needs several lookups on one
// generation uses Acquire.
type Live struct {
	dataDir string
	opts    LiveOptions
	cur     atomic.Pointer[liveGeneration]
	mu      sync.Mutex // serialises Reload and Close
	closed  bool
	// refused is the generation last refused for damage, and why; the
	// fields below are guarded by mu.
	refused    string
	refusedErr error
	// reported is the generation and reason last passed to OnReject.
	reported string
	stop     chan struct{}
	done     chan struct{}
}

// liveGeneration counts the users of a generation. Live holds one
// reference while the generation is current; the last release closes it.
type liveGeneration struct {
	gen  *Generation
	refs atomic.Int64
	log  *slog.Logger
}

func newLiveGeneration(g *Generation, log *slog.Logger) *liveGeneration {
	lg := &liveGeneration{gen: g, log: log}
	lg.refs.Store(1)
	return lg
}

// tryAcquire takes a reference unless the generation is already retired.
func (lg *liveGeneration) tryAcquire() bool {
	for {
		n := lg.refs.Load()
		if n <= 0 {
			return false
		}
		if lg.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (lg *liveGeneration) release() {
	if lg.refs.Add(-1) != 0 {
		return
	}
	if err := lg.gen.Close(); err != nil {
		lg.log.Error("closing index generation failed", "generation", lg.gen.ID(), "error", err)
	} else {
		lg.log.Info("index generation closed", "generation", lg.gen.ID())
	}
}

// OpenLive opens the generation CURRENT names in dataDir and starts
// following CURRENT. Without a published generation it returns
// ErrNoGeneration. When the generation CURRENT names is refused, it serves
// the newest older generation that Open accepts and logs so, leaving
// CURRENT as it is: polling keeps trying CURRENT's generation if the
// refusal was RejectOpen, and the next ingest publishes over it. With no
// usable generation it returns an error naming CURRENT's and why.
// Before opening, it removes a generation a killed ingest renamed but never
// published (see sweepOrphan), unless an ingest is running.
func OpenLive(dataDir string, opts LiveOptions) (*Live, error) {
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name, err := readCurrent(dataDir)
	if err != nil {
		return nil, err
	}
	l := &Live{dataDir: dataDir, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	if orphan, err := sweepOrphanUnlessBuilding(dataDir); err != nil {
		opts.Logger.Warn("looking for a generation a killed ingest left unpublished failed", "error", err)
	} else if orphan != "" {
		opts.Logger.Warn("removed a generation a killed ingest renamed but never published", "generation", orphan)
	}
	g, err := l.openAtStart(name)
	if err != nil {
		return nil, err
	}
	l.cur.Store(newLiveGeneration(g, opts.Logger))
	if opts.PollInterval > 0 {
		go l.poll()
	} else {
		close(l.done)
	}
	return l, nil
}

// openAtStart opens the generation CURRENT names or, if it is refused, the
// newest older one that is not.
func (l *Live) openAtStart(current string) (*Generation, error) {
	g, err := l.open(current)
	if err == nil {
		return g, nil
	}
	l.opts.Logger.Error("the index generation CURRENT names was refused", "generation", current, "reason", RejectReason(err), "error", err)
	names, lerr := generationNames(l.dataDir)
	if lerr != nil {
		return nil, errors.Join(err, lerr)
	}
	for i := len(names) - 1; i >= 0; i-- {
		if names[i] >= current {
			continue
		}
		older, oerr := l.open(names[i])
		if oerr != nil {
			l.opts.Logger.Error("an older index generation was refused too", "generation", names[i], "reason", RejectReason(oerr), "error", oerr)
			continue
		}
		l.opts.Logger.Warn("serving an older index generation instead of the refused one CURRENT names; CURRENT is left as it is",
			"generation", names[i], "current", current)
		return older, nil
	}
	return nil, fmt.Errorf("no usable index generation: CURRENT names %s, which was refused (%w), and no older generation can serve: re-run ingest", current, err)
}

// open opens the generation name of the data directory; a refusal is
// remembered and reported to OnReject.
func (l *Live) open(name string) (*Generation, error) {
	g, err := Open(filepath.Join(indexDir(l.dataDir), name))
	if err != nil {
		l.noteRefusal(name, err)
		return nil, err
	}
	start := time.Now()
	if err := g.readIDRanks(); err != nil {
		l.opts.Logger.Warn("reading the order of the index generation's ids failed: its searches read each tied match's id instead", "generation", name, "error", err)
	} else {
		l.opts.Logger.Info("index generation's ids ranked", "generation", name, "duration", time.Since(start).Round(time.Millisecond))
	}
	if !g.Checksummed() {
		l.opts.Logger.Warn("index generation has no checksums (built by an older version): only its structure was checked; re-run ingest to add them",
			"generation", name)
	}
	return g, nil
}

func (l *Live) noteRefusal(name string, err error) {
	reason := RejectReason(err)
	if permanent(err) {
		l.refused, l.refusedErr = name, err
	}
	if key := name + " " + reason; key != l.reported {
		l.reported = key
		if l.opts.OnReject != nil {
			l.opts.OnReject(name, reason)
		}
	}
}

func (l *Live) poll() {
	defer close(l.done)
	t := time.NewTicker(l.opts.PollInterval)
	defer t.Stop()
	// lastErr keeps a lasting failure (CURRENT naming a broken generation)
	// from being logged every interval.
	var lastErr string
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			err := l.Reload()
			if err != nil && err.Error() != lastErr {
				l.opts.Logger.Error("new index generation not opened, the current one keeps serving", "reason", RejectReason(err), "error", err)
			}
			lastErr = ""
			if err != nil {
				lastErr = err.Error()
			}
		}
	}
}

// Reload checks CURRENT now and swaps in the generation it names if that
// differs from the current one. On error the current generation stays.
func (l *Live) Reload() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	name, err := readCurrent(l.dataDir)
	if err != nil {
		return err
	}
	old := l.cur.Load()
	if old.gen.Faulted() {
		return l.replaceFaulted(old, name)
	}
	if name == old.gen.ID() {
		return nil
	}
	if name == l.refused {
		return l.refusedErr
	}
	g, err := l.open(name)
	if err != nil {
		return err
	}
	l.swap(old, g)
	return nil
}

// replaceFaulted replaces a generation whose files changed under it (see
// recoverFault) as at start: by the generation CURRENT names if it still
// verifies, or else the newest older one that does.
func (l *Live) replaceFaulted(old *liveGeneration, current string) error {
	l.opts.Logger.Error("the index generation being served failed reading its files; replacing it", "generation", old.gen.ID())
	l.refused = ""
	g, err := l.openAtStart(current)
	if err != nil {
		return err
	}
	l.swap(old, g)
	return nil
}

// swap makes g current and releases old.
func (l *Live) swap(old *liveGeneration, g *Generation) {
	l.reported = ""
	l.cur.Store(newLiveGeneration(g, l.opts.Logger))
	old.release()
	l.opts.Logger.Info("index generation swapped in", "generation", g.ID(), "previous", old.gen.ID(), "profiles", g.Count())
	if l.opts.OnSwap != nil {
		l.opts.OnSwap(g.Meta())
	}
}

// Acquire returns the current generation and a release function that the
// caller must call exactly once when done with it. The generation stays
// open until released, even if a newer one is swapped in meanwhile. After
// Close it returns a nil generation (and a no-op release).
func (l *Live) Acquire() (*Generation, func()) {
	for {
		lg := l.cur.Load()
		if lg.tryAcquire() {
			var once sync.Once
			return lg.gen, func() { once.Do(lg.release) }
		}
		if l.cur.Load() == lg {
			// Not swapped, yet retired: the live index is closed.
			return nil, func() {}
		}
	}
}

// acquire is Acquire for the lookup methods: ErrClosed after Close.
func (l *Live) acquire() (*Generation, func(), error) {
	g, release := l.Acquire()
	if g == nil {
		return nil, release, ErrClosed
	}
	return g, release, nil
}

// Current reports the id, profile count and creation time of the current
// generation, for health checks and metrics.
func (l *Live) Current() (id string, count int, createdAt time.Time) {
	m := l.cur.Load().gen.Meta()
	return m.ID, m.Profiles, m.CreatedAt
}

// Meta returns meta.json of the current generation.
func (l *Live) Meta() Meta { return l.cur.Load().gen.Meta() }

// Profile looks id up in the current generation.
func (l *Live) Profile(id string) (*companydocs.Profile, error) {
	g, release, err := l.acquire()
	defer release()
	if err != nil {
		return nil, err
	}
	return g.Profile(id)
}

// ByNumber looks a register type and number up in the current generation.
func (l *Live) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	g, release, err := l.acquire()
	defer release()
	if err != nil {
		return nil, err
	}
	return g.ByNumber(t, number)
}

// ByLEI looks an LEI up in the current generation.
func (l *Live) ByLEI(lei register.LEI) ([]*companydocs.Profile, error) {
	g, release, err := l.acquire()
	defer release()
	if err != nil {
		return nil, err
	}
	return g.ByLEI(lei)
}

// SearchText searches the current generation; one search uses one
// generation throughout.
func (l *Live) SearchText(ctx context.Context, q companydocs.TextQuery) ([]companydocs.Hit, error) {
	g, release, err := l.acquire()
	defer release()
	if err != nil {
		return nil, err
	}
	return g.SearchText(ctx, q)
}

// Close stops following CURRENT and closes the current generation once its
// users have released it.
func (l *Live) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	<-l.done
	l.cur.Load().release()
	return nil
}

// String describes the live index for logs.
func (l *Live) String() string {
	id, n, _ := l.Current()
	return fmt.Sprintf("index %s (%d profiles)", id, n)
}
