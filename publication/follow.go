package publication

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"companydocs/index"
	"companydocs/metrics"
	"companydocs/objectstore"
)

// Publish and follow: an ingest's generation is uploaded to an object
// store and recorded in the PostgreSQL metastore (publish.go); a node
// started with --index-source follows the metastore, downloads the newest
// live generation beside the one it serves, verifies it and installs it,
// and Live swaps it in as it swaps a local ingest's. A node holds nothing
// of its own worth a backup: one starts on an empty data directory.

// followRetry is how long a node waits before it asks again when nothing
// is published yet or the metastore or the object store failed.
const followRetry = 2 * time.Second

// gateLookupTimeout bounds the ordering gate's question to the metastore
// (which generation is newest): a metastore that does not answer in time
// is a 503 to retry, never a refusal.
const gateLookupTimeout = 2 * time.Second

// installRetryAfter is the Retry-After of an order or watch answered 503
// while the node fetches the newest generation's profile store, which it
// downloads first.
const installRetryAfter = 2 * time.Second

// Follower keeps a data directory on the newest published generation
// that installs.
type Follower struct {
	meta     Metastore
	objects  Blobs
	dataDir  string
	node     string
	started  time.Time
	rate     int64
	interval time.Duration
	keep     int
	logger   *slog.Logger
	metrics  *metrics.Registry
	// serving returns the generation the node serves ("" before Live is
	// open).
	serving func() string
	now     func() time.Time

	cancel context.CancelFunc
	// running is the follow loop and the listener Start began.
	running sync.WaitGroup
	wake    chan struct{}

	mu sync.Mutex
	// installing is the generation being downloaded and installed ("" none),
	// which heartbeats report so that retention keeps it.
	installing string
	// During a rollout: the newest generation this node does not serve
	// yet, and its profile store once downloaded and checked, which the
	// ordering gate asks (rolloutProfiles).
	pending  string
	profiles *index.ProfileStore
	// damaged are the published generations found damaged, by name: none
	// takes part in an answer of the gate, and each is fetched again only
	// after its backoff.
	damaged map[string]damage
	// shareLimits is FollowerConfig.ShareLimits.
	shareLimits func(nodes int)
}

// errNothingPublished is what a node that follows says while the
// metastore holds no live generation.
var errNothingPublished = errors.New("no generation is published yet: build one with companydocs ingest, then upload it with companydocs publish")

// Sync installs the newest live generation that installs, unless the data
// directory holds it or a newer one already, and returns the name of the
// generation installed last. A damaged generation is recorded and backed
// off (recordDamage), and the next older live one newer than the
// installed one is tried: a new node starts on the newest that installs.
func (f *Follower) Sync(ctx context.Context) (string, error) {
	pubs, err := f.meta.Publications(ctx)
	if err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowMetastore)
		return "", fmt.Errorf("read the published generations: %w", err)
	}
	current, _ := index.ReadCurrent(f.dataDir) // a generation renamed into place by a killed install is not current: Install sweeps it
	f.forgetDamage(pubs, current)
	candidates := liveNewerThan(pubs, current)
	if len(candidates) == 0 && current == "" {
		return "", errNothingPublished
	}
	var errs []error
	for _, p := range candidates {
		if wait := f.backingOff(p.Name); wait > 0 {
			errs = append(errs, fmt.Errorf("%s is damaged; fetched again in %s", p.Name, wait.Round(time.Second)))
			continue
		}
		err := f.install(ctx, &p)
		if err == nil {
			return p.Name, nil
		}
		if !IsDamage(err) {
			return "", err
		}
		f.recordDamage(p.Name, err)
		errs = append(errs, err)
	}
	if current == "" {
		return "", errors.Join(errs...)
	}
	return current, errors.Join(errs...)
}

// liveNewerThan picks the live publications of pubs (newest first) newer
// than name.
func liveNewerThan(pubs []Publication, name string) []Publication {
	var out []Publication
	for _, p := range pubs {
		if p.State == StateLive && p.Name > name {
			out = append(out, p)
		}
	}
	return out
}

// install downloads p into its download directory (continuing what a
// killed node left there), checks and installs it, reporting it in the
// heartbeats meanwhile.
func (f *Follower) install(ctx context.Context, p *Publication) error {
	var files []objectstore.File
	if err := json.Unmarshal(p.Manifest, &files); err != nil {
		return fmt.Errorf("read the manifest of %s: %w: %w", p.Name, errDamagedManifest, err)
	}
	dir, err := index.DownloadDir(f.dataDir, p.Name)
	if err != nil {
		return err
	}
	f.setInstalling(p.Name)
	defer f.setInstalling("")
	stopBeats := f.heartbeatWhile(ctx)
	defer stopBeats()
	began := time.Now()
	local := f.takeInstalled(p.Name, dir, files)
	f.logger.Info("downloading a published generation", "generation", p.Name, "bytes", p.Bytes, "files", len(files), "local_bytes", local)
	err = f.fetchAndInstall(ctx, p.Name, dir, files)
	if IsDamage(err) {
		os.RemoveAll(dir) // refused as it is published: fetched anew once the backoff ends
	}
	if err != nil {
		return err
	}
	f.metrics.ObserveInstall()
	f.logger.Info("published generation installed", "generation", p.Name, "bytes", p.Bytes, "duration", time.Since(began).Round(time.Millisecond))
	return nil
}

// takeInstalled puts into the download directory dir the files of name
// that a generation this node holds has already (hard links where the
// file system allows, else copies), and returns their bytes: an
// incremental generation shares most of its bytes with the one before.
// The download checks them as it checks what it fetches; a file that
// could not be taken is fetched.
func (f *Follower) takeInstalled(name, dir string, files []objectstore.File) int64 {
	want := make([]index.FileSum, len(files))
	for i, file := range files {
		want[i] = index.FileSum{Path: file.Path, Size: file.Size, SHA256: file.SHA256}
	}
	taken, err := index.ShareInstalled(f.dataDir, dir, want)
	if err != nil {
		f.logger.Warn("some files of a published generation could not be taken from the generations this node holds; they are downloaded",
			"generation", name, "err", err)
	}
	return taken
}

// fetchAndInstall downloads the profile store of name first and opens it
// for the gate, then the rest, and installs the generation.
func (f *Follower) fetchAndInstall(ctx context.Context, name, dir string, files []objectstore.File) error {
	if err := f.download(ctx, name, dir, profilesFirst(files)); err != nil {
		return err
	}
	if err := f.openPending(name, dir); err != nil {
		return err
	}
	if err := f.download(ctx, name, dir, files); err != nil {
		return err
	}
	if _, err := index.Install(f.dataDir, dir, f.keep); err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowInstall)
		return fmt.Errorf("install %s: %w", name, err)
	}
	return nil
}

// download fetches files of name into dir, counting the bytes.
func (f *Follower) download(ctx context.Context, name, dir string, files []objectstore.File) error {
	var counted int64
	progress := func(done, _ int64) { f.metrics.AddDownloaded(done - counted); counted = done }
	if err := f.objects.Download(ctx, name, dir, files, f.rate, progress); err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowDownload)
		return fmt.Errorf("download %s: %w", name, err)
	}
	return nil
}

// profilesFirst is the profile store of files, its base and layers, with
// the meta.json that names the layers: a node downloads them before the
// rest so that the ordering gate can read the generation's profiles early
// in a rollout.
func profilesFirst(files []objectstore.File) []objectstore.File {
	var out []objectstore.File
	for _, file := range files {
		if file.Path == index.MetaFile || index.IsProfileFile(file.Path) {
			out = append(out, file)
		}
	}
	return out
}

// openPending opens and checks the downloaded profile store of name for
// the gate. A store that does not open or check is damage: its file
// matched the manifest, so the manifest lies about it.
func (f *Follower) openPending(name, dir string) error {
	store, err := index.OpenProfileStore(dir)
	if err != nil {
		if transientOpen(err) {
			f.logger.Warn("the downloaded profile store does not open now; the gate waits for the swap", "generation", name, "err", err)
			return nil
		}
		return fmt.Errorf("%w: %w", errDamagedStore, err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closePending()
	f.pending, f.profiles = name, store
	return nil
}

// transientOpen tells a failure of the process (out of file descriptors
// or memory) from a store that does not check.
func transientOpen(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOMEM)
}

// closePending closes the pending profile store; f.mu is held.
func (f *Follower) closePending() {
	if f.profiles != nil {
		f.profiles.Close()
	}
	f.pending, f.profiles = "", nil
}

// setInstalling records the generation being installed ("" none).
func (f *Follower) setInstalling(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.installing = name
}

// WakeUp asks the follow loop to sync and report itself now.
func (f *Follower) WakeUp() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// settle closes the pending profile store once the node serves its
// generation.
func (f *Follower) settle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending != "" && f.pending <= f.serving() {
		f.closePending()
	}
}

// First installs a generation into an empty data directory, asking again
// until one is published and installs, or ctx ends.
func (f *Follower) First(ctx context.Context) error {
	for {
		name, err := f.Sync(ctx)
		if err == nil || name != "" {
			f.logger.Info("following published generations", "generation", name, "node", f.node)
			return nil
		}
		f.logger.Warn("waiting for a published generation", "node", f.node, "err", err)
		f.heartbeat(ctx)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followRetry):
		}
	}
}

// Start follows in the background until Stop: it syncs every interval,
// and at once when the metastore tells of a publication (a Listener).
func (f *Follower) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.running.Go(func() { f.follow(ctx) })
	if l, ok := f.meta.(Listener); ok {
		f.running.Go(func() { l.ListenPublications(ctx, f.heard) })
	}
}

// follow syncs and reports the node, then waits for the interval or a
// wake-up, until ctx ends.
func (f *Follower) follow(ctx context.Context) {
	for {
		if _, err := f.Sync(ctx); err != nil && ctx.Err() == nil {
			f.logger.Warn("following published generations failed; serving what this node has", "err", err)
		}
		f.heartbeat(ctx)
		f.settle()
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		case <-time.After(f.interval):
		}
	}
}

// heard wakes the follow loop for a generation the metastore says is
// live: the node need not wait for its interval.
func (f *Follower) heard(name string) {
	f.metrics.ObservePublicationHeard()
	f.logger.Debug("the metastore tells of a live generation; following now", "generation", name)
	f.WakeUp()
}

// Stop ends what Start began and closes what it holds.
func (f *Follower) Stop() {
	if f.cancel != nil {
		f.cancel()
		f.running.Wait()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closePending()
}

// heartbeat records what the node serves and installs, which published
// generations it found damaged and how many live ones are newer, in the
// metastore and the metrics.
func (f *Follower) heartbeat(ctx context.Context) {
	serving := f.serving()
	behind, err := f.meta.LiveNewerThan(ctx, serving)
	if err == nil {
		f.metrics.SetGenerationsBehind(behind)
		installing, damaged := f.report()
		err = f.meta.Heartbeat(ctx, Node{Node: f.node, Generation: serving, Installing: installing,
			Damaged: damaged, Behind: behind, StartedAt: f.started})
	}
	if err == nil {
		err = f.countLiveNodes(ctx)
	}
	if err != nil && ctx.Err() == nil {
		f.metrics.ObserveFollowFailure(metrics.FollowHeartbeat)
		f.logger.Warn("recording this node in the metastore failed", "node", f.node, "err", err)
	}
}

// liveWithin is how recent a heartbeat must be for its node to count as
// live when the rate limits are shared: three follow intervals, so that
// one late heartbeat does not make a node's neighbours grant more.
const liveWithin = 3

// countLiveNodes tells shareLimits how many nodes are live.
func (f *Follower) countLiveNodes(ctx context.Context) error {
	if f.shareLimits == nil {
		return nil
	}
	n, err := f.meta.LiveNodes(ctx, liveWithin*f.interval)
	if err == nil {
		f.shareLimits(n)
	}
	return err
}

// heartbeatWhile reports the node every interval until the returned stop
// is called: a download of a large generation takes minutes, and a node
// that says nothing meanwhile looks gone to retention and to operators.
func (f *Follower) heartbeatWhile(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(f.interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				f.heartbeat(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// FollowIdle is how long a node waits for an object store that answers
// nothing before the download fails and counts as a follow failure: one
// follow interval, so that a hung store shows in the metrics within one,
// but at least a second (a first byte over a slow link) and at most the
// store's own default.
func FollowIdle(interval time.Duration) time.Duration {
	return min(max(interval, time.Second), 2*time.Minute)
}

// DefaultFollowInterval is how often a node asks the metastore for a newer
// published generation.
const DefaultFollowInterval = 10 * time.Second

// FollowerConfig is what a Follower needs: where it reads and writes,
// who it is, and how often and fast it follows.
type FollowerConfig struct {
	Meta     Metastore
	Objects  Blobs
	DataDir  string
	Node     string        // the name it reports itself by
	Rate     int64         // bytes a second a download takes at most; 0 unbounded
	Interval time.Duration // how often it asks for a newer generation and reports itself
	Keep     int           // generations the data directory keeps
	Logger   *slog.Logger
	Metrics  *metrics.Registry
	// Serving returns the generation the node serves ("" before its
	// index is open).
	Serving func() string
	// ShareLimits is told, at every heartbeat, how many nodes are live
	// (their heartbeat within three intervals), to divide the rate limits
	// among them; optional.
	ShareLimits func(nodes int)
}

// NewFollower returns the Follower of c, started now; it does nothing
// until First or Start.
func NewFollower(c FollowerConfig) *Follower {
	return &Follower{meta: c.Meta, objects: c.Objects, dataDir: c.DataDir, node: c.Node, started: time.Now(),
		rate: c.Rate, interval: c.Interval, keep: c.Keep, logger: c.Logger, metrics: c.Metrics,
		serving: c.Serving, now: time.Now, wake: make(chan struct{}, 1), damaged: map[string]damage{}, shareLimits: c.ShareLimits}
}
