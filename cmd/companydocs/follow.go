package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"companydocs"
	"companydocs/index"
	"companydocs/metrics"
	"companydocs/objectstore"
	"companydocs/postgres"
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

// follower keeps a data directory on the newest published generation.
type follower struct {
	meta     *postgres.DB
	objects  *objectstore.Store
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

	cancel context.CancelFunc
	done   chan struct{}
	wake   chan struct{}

	// During a rollout: the newest live generation this node does not
	// serve yet, and its profile store once downloaded (newerProfile).
	mu       sync.Mutex
	pending  string
	profiles *index.ProfileStore
}

// errNothingPublished is what a node that follows says while the
// metastore holds no live generation.
var errNothingPublished = errors.New("no generation is published yet: publish one with companydocs publish, or ingest --publish")

// sync installs the newest live generation unless the data directory
// holds it already, and returns its name.
func (f *follower) sync(ctx context.Context) (string, error) {
	p, err := f.meta.NewestLive(ctx)
	if err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowMetastore)
		return "", fmt.Errorf("read the published generations: %w", err)
	}
	if p == nil {
		return "", errNothingPublished
	}
	if cur, _ := index.ReadCurrent(f.dataDir); cur == p.Name {
		return p.Name, nil // installed (a generation renamed into place by a killed install is not: Install sweeps it)
	}
	return p.Name, f.install(ctx, p)
}

// install downloads p into its download directory (continuing what a
// killed node left there), checks and installs it.
func (f *follower) install(ctx context.Context, p *postgres.Publication) error {
	var files []objectstore.File
	if err := json.Unmarshal(p.Manifest, &files); err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowMetastore)
		return fmt.Errorf("read the manifest of %s: %w", p.Name, err)
	}
	dir, err := index.DownloadDir(f.dataDir, p.Name)
	if err != nil {
		return err
	}
	began := time.Now()
	f.logger.Info("downloading a published generation", "generation", p.Name, "bytes", p.Bytes, "files", len(files))
	if err := f.download(ctx, p.Name, dir, profilesFirst(files)); err != nil {
		return err
	}
	f.openPending(p.Name, dir)
	if err := f.download(ctx, p.Name, dir, files); err != nil {
		return err
	}
	meta, err := index.Install(f.dataDir, dir, f.keep)
	if err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowInstall)
		if index.RejectReason(err) != index.RejectOpen {
			os.RemoveAll(dir) // checked against its manifest and still refused: fetch it anew
		}
		return fmt.Errorf("install %s: %w", p.Name, err)
	}
	f.metrics.ObserveInstall()
	f.logger.Info("published generation installed", "generation", meta.ID, "profiles", meta.Profiles,
		"bytes", p.Bytes, "duration", time.Since(began).Round(time.Millisecond))
	return nil
}

// download fetches files of name into dir, counting the bytes.
func (f *follower) download(ctx context.Context, name, dir string, files []objectstore.File) error {
	var counted int64
	progress := func(done, _ int64) { f.metrics.AddDownloaded(done - counted); counted = done }
	if err := f.objects.Download(ctx, name, dir, files, f.rate, progress); err != nil {
		f.metrics.ObserveFollowFailure(metrics.FollowDownload)
		return fmt.Errorf("download %s: %w", name, err)
	}
	return nil
}

// profilesFirst is the profile store of files, which a node downloads
// before the rest so that the ordering gate can read the generation's
// profiles early in a rollout.
func profilesFirst(files []objectstore.File) []objectstore.File {
	for _, file := range files {
		if file.Path == index.ProfilesFile {
			return []objectstore.File{file}
		}
	}
	return nil
}

// openPending opens the downloaded profile store of name for the gate.
func (f *follower) openPending(name, dir string) {
	store, err := index.OpenProfileStore(dir)
	if err != nil {
		f.logger.Warn("the downloaded profile store does not open; the gate waits for the swap", "generation", name, "err", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closePending()
	f.pending, f.profiles = name, store
}

// closePending closes the pending profile store; f.mu is held.
func (f *follower) closePending() {
	if f.profiles != nil {
		f.profiles.Close()
	}
	f.pending, f.profiles = "", nil
}

// newerProfile looks id up in the newest live generation when this node
// does not serve it yet (the ordering gate asks when the served
// generation lacks id): in its profile store once downloaded; before
// that the order is answered service_unavailable, to be retried, never
// refused as an unknown company. With nothing newer published id is
// unknown (nil, nil).
func (f *follower) newerProfile(id string) (*companydocs.Profile, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	newest, err := f.meta.NewestLive(ctx)
	if err != nil || newest == nil || newest.Name <= f.serving() {
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == newest.Name && f.profiles != nil {
		return f.profiles.Profile(id)
	}
	f.wakeUp()
	return nil, companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.generation_installing", companydocs.Args{"generation": newest.Name})
}

// wakeUp asks the follow loop to sync now.
func (f *follower) wakeUp() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// settle closes the pending profile store once the node serves its
// generation.
func (f *follower) settle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending != "" && f.pending <= f.serving() {
		f.closePending()
	}
}

// first installs a generation into an empty data directory, asking again
// until one is published and installed or ctx ends.
func (f *follower) first(ctx context.Context) error {
	for {
		name, err := f.sync(ctx)
		if err == nil {
			f.logger.Info("following published generations", "generation", name, "node", f.node)
			return nil
		}
		f.logger.Warn("waiting for a published generation", "node", f.node, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followRetry):
		}
	}
}

// start follows in the background until stop.
func (f *follower) start() {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel, f.done = cancel, make(chan struct{})
	go func() {
		defer close(f.done)
		for {
			if _, err := f.sync(ctx); err != nil && ctx.Err() == nil {
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
	}()
}

func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
		<-f.done
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closePending()
}

// rolloutProfiles is the ordering gate's profile lookup on a node that
// follows: the generation it serves, then the newest published one it
// has not swapped in yet (follower.newerProfile).
type rolloutProfiles struct {
	live *index.Live
	f    *follower
}

func (r rolloutProfiles) Profile(id string) (*companydocs.Profile, error) {
	p, err := r.live.Profile(id)
	if err != nil || p != nil {
		return p, err
	}
	return r.f.newerProfile(id)
}

// heartbeat records what the node serves and how many live generations
// are newer, in the metastore and the metrics.
func (f *follower) heartbeat(ctx context.Context) {
	serving := f.serving()
	behind, err := f.meta.LiveNewerThan(ctx, serving)
	if err == nil {
		f.metrics.SetGenerationsBehind(behind)
		err = f.meta.Heartbeat(ctx, postgres.IndexNode{Node: f.node, Generation: serving, Behind: behind, StartedAt: f.started})
	}
	if err != nil && ctx.Err() == nil {
		f.metrics.ObserveFollowFailure(metrics.FollowHeartbeat)
		f.logger.Warn("recording this node in the metastore failed", "node", f.node, "err", err)
	}
}

// DefaultFollowInterval is how often a node asks the metastore for a newer
// published generation.
const DefaultFollowInterval = 10 * time.Second

// followFlags declares the flags of a node that follows published
// generations.
func followFlags(fs *flagSet, c *Config) {
	fs.String(&c.IndexSource, "index-source", "", "object store to follow published index generations from (s3://bucket?endpoint=...&region=...&use_path_style=true, or file:///shared/dir); needs --store postgres://..., the metastore; the node then starts on an empty data directory and never ingests")
	fs.Int64(&c.DownloadRate, "download-rate", 0, "bytes a second a following node downloads at most; 0 is unbounded")
	fs.Duration(&c.FollowInterval, "follow-interval", DefaultFollowInterval, "how often a following node asks the metastore for a newer published generation")
	fs.String(&c.NodeName, "node-name", "", "the name a following node reports itself by in the metastore (companydocs nodes); empty is the host name and the data directory")
}

// validateFollow checks the follow flags (bad reports a usage error).
func (c *Config) validateFollow(bad badValue) {
	if c.IndexSource != "" && !postgresURL(c.Store) {
		bad("index-source", "needs --store postgres://..., the metastore of published generations")
	}
	if c.DownloadRate < 0 {
		bad("download-rate", "must be 0 (unbounded) or more, got %d", c.DownloadRate)
	}
	if c.FollowInterval <= 0 {
		bad("follow-interval", "must be longer than 0, got %s", c.FollowInterval)
	}
}

// startFollowing opens the object store and, on a data directory without
// a generation, waits until the newest published one is installed.
func (m *Main) startFollowing(ctx context.Context) error {
	objects, err := objectstore.Open(ctx, m.Config.IndexSource)
	if err != nil {
		return fmt.Errorf("open the index source (--index-source): %w", err)
	}
	m.follower = &follower{meta: m.Database, objects: objects, dataDir: m.Config.DataDir, node: m.nodeName(), started: time.Now(),
		rate: m.Config.DownloadRate, interval: m.Config.FollowInterval, keep: m.Config.Keep, logger: m.Logger, metrics: m.Metrics,
		serving: m.servingGeneration, wake: make(chan struct{}, 1)}
	if _, err := index.ReadCurrent(m.Config.DataDir); errors.Is(err, index.ErrNoGeneration) {
		return m.follower.first(ctx)
	} else if err != nil {
		return err
	}
	return nil
}

// servingGeneration names the generation Live serves, "" before it opens.
func (m *Main) servingGeneration() string {
	if m.Live == nil {
		return ""
	}
	id, _, _ := m.Live.Current()
	return id
}

// nodeName is --node-name, or the host name and the data directory.
func (m *Main) nodeName() string {
	if m.Config.NodeName != "" {
		return m.Config.NodeName
	}
	host, _ := os.Hostname()
	dir, err := filepath.Abs(m.Config.DataDir)
	if err != nil {
		dir = m.Config.DataDir
	}
	return host + ":" + dir
}
