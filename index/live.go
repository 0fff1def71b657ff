package index

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"companydocs"
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
	// Logger receives swap and failure messages; default slog.Default().
	Logger *slog.Logger
}

// Live serves the generation CURRENT names and follows CURRENT: when it
// changes, Live opens the new generation, swaps it in atomically and closes
// the old one once the searches using it have finished. A generation that
// cannot be opened is logged and the old one keeps serving.
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
	stop    chan struct{}
	done    chan struct{}
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
// ErrNoGeneration.
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
	g, err := Open(filepath.Join(indexDir(dataDir), name))
	if err != nil {
		return nil, err
	}
	l := &Live{dataDir: dataDir, opts: opts, stop: make(chan struct{}), done: make(chan struct{})}
	l.cur.Store(newLiveGeneration(g, opts.Logger))
	if opts.PollInterval > 0 {
		go l.poll()
	} else {
		close(l.done)
	}
	return l, nil
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
				l.opts.Logger.Error("new index generation not opened, the current one keeps serving", "error", err)
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
	if name == old.gen.ID() {
		return nil
	}
	g, err := Open(filepath.Join(indexDir(l.dataDir), name))
	if err != nil {
		return err
	}
	l.cur.Store(newLiveGeneration(g, l.opts.Logger))
	old.release()
	l.opts.Logger.Info("index generation swapped in", "generation", name, "previous", old.gen.ID(), "profiles", g.Count())
	if l.opts.OnSwap != nil {
		l.opts.OnSwap(g.Meta())
	}
	return nil
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
func (l *Live) ByNumber(t companydocs.RegisterType, number string) ([]*companydocs.Profile, error) {
	g, release, err := l.acquire()
	defer release()
	if err != nil {
		return nil, err
	}
	return g.ByNumber(t, number)
}

// ByLEI looks an LEI up in the current generation.
func (l *Live) ByLEI(lei companydocs.LEI) ([]*companydocs.Profile, error) {
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
