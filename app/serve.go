package app

import (
	"companydocs/internal/cli"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/data"
	"companydocs/httpapi"
	"companydocs/index"
	"companydocs/metrics"
	"companydocs/objectstore"
	"companydocs/ordering"
	"companydocs/plansfile"
	"companydocs/postgres"
	"companydocs/publication"
	"companydocs/resolver"
	"companydocs/webhook"
)

// Config is the configuration of the serve command.
type Config struct {
	DataDir        string
	Addr           string
	Plans          string
	Demo           bool
	DemoCredits    int
	SessionTTL     time.Duration
	SearchRate     float64
	SearchBurst    int
	SessionRate    float64
	SessionBurst   int
	WriteRate      float64
	WriteBurst     int
	SearchTimeout  time.Duration
	ShutdownGrace  time.Duration
	PollInterval   time.Duration
	Keep           int
	TrustedProxies string
	// PublicURL is the absolute URL clients reach the service at
	// (httpapi.Config.PublicURL); empty builds the URLs the
	// reconciliation manifest hands out from each request.
	PublicURL string
	// MaxConnections and MaxConnectionsPerAddr cap the connections held
	// at once, in all and per client address (httpapi.Config).
	MaxConnections        int
	MaxConnectionsPerAddr int
	// Transfers in flight at most: uploads per node, downloads per node
	// and per account (see httpapi.Config).
	BatchesInFlight     int
	UploadsInFlight     int
	DownloadsInFlight   int
	DownloadsPerAccount int
	LogFormat           string
	LogLevel            string
	// StoreCheckTimeout bounds the check of orders.db at start;
	// SkipStoreCheck skips it (see ordering.Options).
	StoreCheckTimeout time.Duration
	SkipStoreCheck    bool
	// Store is a postgres:// URL: the order store on PostgreSQL, shared by
	// several nodes; empty keeps orders.db in the data directory.
	// StorePoolSize (0: pgxpool's default) and StoreStatementTimeout
	// configure it.
	Store                 string
	StorePoolSize         int
	StoreStatementTimeout time.Duration
	// IndexSource is the object store the node follows published
	// generations from (a gocloud.dev blob URL: s3://... or file:///...);
	// it needs Store on PostgreSQL, the metastore. DownloadRate bounds
	// its downloads in bytes a second (0: unbounded), FollowInterval is
	// how often it asks the metastore, NodeName how it reports itself.
	IndexSource    string
	DownloadRate   int64
	FollowInterval time.Duration
	NodeName       string
	// Webhook delivery (see package webhook): the SSRF relaxations for
	// tests and closed networks, and the timing.
	WebhookAllowHTTP    bool
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	WebhookWorkers      int
	WebhookRetryBase    time.Duration
	WebhookRetryFor     time.Duration
	// Stripe is how plans paid through Stripe reach it.
	Stripe StripeConfig
}

// Main is the serve command: it owns the index, the order store and the
// HTTP server, and closes them in reverse order.
type Main struct {
	Config Config
	Stdout io.Writer
	Stderr io.Writer

	Logger *slog.Logger
	Live   *index.Live
	// Accounts authenticates and Ordering orders, both over the order
	// store: OrderStore (bbolt) or Database (PostgreSQL, --store).
	Accounts *ordering.Accounts
	Ordering *ordering.Services
	// OrderStore is the bbolt file; nil when Database is the store.
	OrderStore *bbolt.DB
	// Database is the PostgreSQL store (--store); nil when OrderStore is
	// the store.
	Database *postgres.DB
	Server   *httpapi.Server
	// Metrics are the service's collectors beyond HTTP (the generation
	// being served, the embedded ingest, searches, orders, webhooks, the Go
	// runtime); the server adds its request collectors and serves them all
	// at /metrics.
	Metrics *metrics.Registry
	// Webhooks delivers order events to registered endpoints.
	Webhooks *webhook.Dispatcher
	// DemoKey is the API key of the demo account when --demo created it.
	DemoKey string

	build   BuildInfo // read once by NewMain
	ln      net.Listener
	serveCh chan error
	store   *bbolt.Socket
	lock    *os.File // the data directory's lock, held until Close
	// watcher compares the watches with each swapped-in generation; the
	// swap hook, which may run before it exists, reads it.
	watcher atomic.Pointer[ordering.Watcher]
	// dispatcher is read by the transition hook, which may run before
	// the dispatcher exists (the demo account) and from any goroutine.
	dispatcher atomic.Pointer[webhook.Dispatcher]
	// refunds is the refunder, when a plan is paid through a provider;
	// stripeKeys are Stripe's secrets (never in Config).
	refunds    *refunder
	stripeKeys stripeKeys
	// Follower keeps the data directory on the newest published
	// generation (--index-source); nil otherwise. Its WakeUp makes it sync
	// and report itself now, as a rollout's gate does.
	Follower *publication.Follower
	// followObjects is the object store the follower downloads from.
	followObjects *objectstore.Store
	// nodeShare divides the rate limits among the live nodes (set by the
	// follower; a node that follows nothing is alone).
	nodeShare httpapi.NodeShare
}

// NewMain returns a Main with the default configuration.
func NewMain() *Main {
	return &Main{Stdout: os.Stdout, Stderr: os.Stderr, build: ReadBuildInfo(), Config: Config{
		DataDir: defaultDataDir, Addr: "127.0.0.1:8080",
	}}
}

// ParseFlags reads the serve flags and COMPANYDOCS_* variables and
// validates the result.
func (m *Main) ParseFlags(args []string) error {
	c := &m.Config
	def := httpapi.DefaultConfig()
	fs := newFlagSet("serve", m.Stdout, m.Stderr)
	fs.String(&c.DataDir, "data-dir", defaultDataDir, "data directory: index generations and orders.db")
	fs.String(&c.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.String(&c.Plans, "plans", "", "plans file (JSON); empty uses the embedded example plans")
	fs.Bool(&c.Demo, "demo", false, "create a demo account on first start and print a fresh API key for it")
	fs.Int(&c.DemoCredits, "demo-credits", ordering.DemoCredits, "credits of the demo account when it is created")
	fs.Duration(&c.SessionTTL, "session-ttl", ordering.DefaultSessionTTL, "lifetime of a session token")
	fs.Float(&c.SearchRate, "search-rate", def.SearchRate, "searches per second allowed per client address; 0 turns the limit off")
	fs.Int(&c.SearchBurst, "search-burst", def.SearchBurst, "burst of searches allowed per client address")
	fs.Float(&c.SessionRate, "session-rate", def.SessionRate, "session creations per second allowed per client address and per API key; 0 turns the limits off")
	fs.Int(&c.SessionBurst, "session-burst", def.SessionBurst, "burst of session creations allowed per client address and per API key")
	fs.Float(&c.WriteRate, "write-rate", def.WriteRate, "order creations, cancellations and webhook endpoint changes per second allowed per account; 0 turns the limit off")
	fs.Int(&c.WriteBurst, "write-burst", def.WriteBurst, "burst of order creations, cancellations and webhook endpoint changes allowed per account")
	fs.Duration(&c.SearchTimeout, "search-timeout", def.SearchTimeout, "deadline of one search")
	fs.Duration(&c.ShutdownGrace, "shutdown-grace", 10*time.Second, "how long in-flight requests may finish on shutdown")
	fs.Duration(&c.PollInterval, "poll-interval", index.DefaultPollInterval, "how often the server looks for a newly published index generation")
	fs.Int(&c.Keep, "keep", index.DefaultKeep, "index generations kept when the embedded sample is ingested")
	fs.Int(&c.BatchesInFlight, "batches-in-flight", def.BatchesInFlight, "search batches and reconciliation query batches this node resolves at once (a client address has one at a time); one more is answered 503 with Retry-After before its body is read")
	fs.Int(&c.UploadsInFlight, "uploads-in-flight", def.UploadsInFlight, "document uploads this node reads at once; one more is answered 503 with Retry-After")
	fs.Int(&c.DownloadsInFlight, "downloads-in-flight", def.DownloadsInFlight, "document downloads this node sends at once; one more is answered 503 with Retry-After")
	fs.Int(&c.DownloadsPerAccount, "downloads-per-account", def.DownloadsPerAccount, "document downloads one account may have in flight on this node; one more is answered 429 with Retry-After")
	fs.String(&c.TrustedProxies, "trusted-proxies", "", "comma-separated proxy addresses or CIDR ranges whose X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto are believed; from any other peer they are ignored")
	fs.String(&c.PublicURL, "public-url", "", "absolute http(s) URL clients reach the service at (https://docs.example.com/ or with a path prefix); the reconciliation manifest's URLs start with it; empty takes them from each request's Host (set it behind a shared cache)")
	fs.Int(&c.MaxConnections, "max-connections", def.MaxConnections, "connections held at once; one more is answered 503 and closed; 0 turns the cap off")
	fs.Int(&c.MaxConnectionsPerAddr, "max-connections-per-addr", def.MaxConnectionsPerAddr, "connections held at once from one client address (trusted proxies exempt); 0 turns the cap off")
	fs.String(&c.LogFormat, "log-format", "auto", "log format: auto (text on a terminal, JSON otherwise), text or json")
	fs.String(&c.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.Duration(&c.StoreCheckTimeout, "store-check-timeout", bbolt.DefaultCheckTimeout, "how long the check of orders.db at start may take before the start is refused")
	fs.Bool(&c.SkipStoreCheck, "skip-store-check", false, "skip the page-by-page check of orders.db at start (for very large files; its size and meta pages are still checked)")
	storeFlags(fs, c)
	followFlags(fs, c)
	stripeFlags(fs, c)
	fs.Bool(&c.WebhookAllowHTTP, "webhook-allow-http", false, "accept http:// webhook URLs (bodies and signatures travel in clear); for tests and closed networks")
	fs.Bool(&c.WebhookAllowPrivate, "webhook-allow-private", false, "accept webhook hosts on loopback, private, link-local and other non-public addresses, so that accounts can make the server call into its own network; for tests and closed networks")
	fs.Duration(&c.WebhookTimeout, "webhook-timeout", webhook.DefaultTimeout, "time limit of one webhook delivery attempt")
	fs.Int(&c.WebhookWorkers, "webhook-workers", webhook.DefaultWorkers, "webhook attempts in flight at most (one per endpoint)")
	fs.Duration(&c.WebhookRetryBase, "webhook-retry-base", webhook.RetryBase, "wait after the first failed webhook attempt; it doubles per attempt (for tests)")
	fs.Duration(&c.WebhookRetryFor, "webhook-retry-for", webhook.RetryFor, "how long after the event a webhook delivery is retried before it is failed (for tests)")
	if err := fs.parse(args); err != nil {
		return err
	}
	storeFromEnv(fs, c)
	if err := stripeFromEnv(c, &m.stripeKeys); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q: %w", fs.Args(), errUsage)
	}
	return c.Validate()
}

// Run opens everything and starts serving; it returns once the server
// listens. Close stops it.
func (m *Main) Run(ctx context.Context) error {
	m.Logger = newLogger(m.Stderr, m.Config.LogFormat, m.Config.LogLevel)
	m.Metrics = metrics.New()
	m.Metrics.SetBuildInfo(m.build.Version, m.build.Revision, m.build.GoVersion)
	// The plans and their providers first: a start they refuse touches
	// nothing in the data directory, not even LOCK.
	plans, err := loadPlans(m.Config.Plans)
	if err != nil {
		return err
	}
	providers, err := m.paymentProviders(plans)
	if err != nil {
		return err
	}
	if err := m.lockDataDir(); err != nil {
		return err
	}
	store, err := m.openIndexAndStore(ctx)
	if err != nil {
		return err
	}
	if err = m.startOrdering(store, plans, providers); err != nil {
		return err
	}
	if m.OrderStore != nil {
		if m.store, err = bbolt.ListenSocket(m.Config.DataDir, m.OrderStore, m.Accounts, m.Logger); err != nil {
			m.Logger.Error("online backup, check and accounts are off: stop the server to run store backup, store check or accounts", "err", err)
		}
	}
	if m.Config.Demo {
		if err := m.createDemo(); err != nil {
			return err
		}
	}
	return m.listen()
}

// openIndexAndStore opens the live index (first following the published
// generations, or ingesting the embedded sample, where that is the way to
// one) and the order store.
func (m *Main) openIndexAndStore(ctx context.Context) (ordering.Store, error) {
	var store ordering.Store
	var err error
	if m.Config.IndexSource != "" {
		if store, err = m.openOrderStore(ctx); err != nil {
			return nil, err
		}
		if err := m.startFollowing(ctx); err != nil {
			return nil, err
		}
	} else if err := m.ensureGeneration(ctx); err != nil {
		return nil, err
	}
	m.Live, err = index.OpenLive(m.Config.DataDir, index.LiveOptions{PollInterval: m.Config.PollInterval, Logger: m.Logger,
		OnSwap: m.observeSwap, OnReject: m.Metrics.ObserveRejectedGeneration})
	if err != nil {
		return nil, fmt.Errorf("open index: %w", err)
	}
	m.Metrics.SetGeneration(m.Live.Current())
	m.observeChanges(m.Live.Meta())
	if m.Follower != nil {
		m.Follower.Start()
	} else if store, err = m.openOrderStore(ctx); err != nil {
		return nil, err
	}
	return store, nil
}

// startOrdering starts the ordering service over store, its webhooks, its
// refunds and the watcher.
func (m *Main) startOrdering(store ordering.Store, plans *ordering.Plans, providers map[string]ordering.PaymentProvider) error {
	docs, err := m.openDocuments(store)
	if err != nil {
		return m.explainOrderStoreError(err) // Close closes the store
	}
	opts := ordering.Options{SessionTTL: m.Config.SessionTTL, Logger: m.Logger,
		Documents: docs, DocumentURL: httpapi.DocumentURL, OnTransition: m.observeTransition, CheckWebhookURL: m.webhookPolicy().CheckURL,
		DeliveryLease: webhookLease(m.Config.WebhookTimeout), Generation: m.currentGeneration, OnWatches: m.Metrics.AddWatches,
		OnWatchBehind: m.wakeWatcher,
		Payments:      providers, OnRefundDue: m.wakeRefunds, OnRefund: m.observeRefund, OnPaymentEvent: m.Metrics.ObservePaymentEvent,
		RefundRetryBase: m.Config.Stripe.RefundRetryBase, RefundLease: m.Config.Stripe.RefundLease}
	var profiles ordering.Profiles = m.Live
	if m.Follower != nil {
		profiles = publication.RolloutProfiles{Live: m.Live, Follower: m.Follower}
	}
	if m.Ordering, err = ordering.New(store, profiles, plans, opts); err != nil {
		return m.explainOrderStoreError(err) // Close closes the store
	}
	m.Accounts = ordering.NewAccounts(store, opts)
	m.startWebhooks()
	if providers != nil {
		m.startRefunds()
	}
	m.watcher.Store(m.startWatcher())
	if counts, err := m.Ordering.Orders.CountByStatus(); err == nil {
		m.Metrics.SetOrderCounts(counts)
	}
	return nil
}

func (m *Main) listen() error {
	cfg := httpapi.DefaultConfig()
	cfg.SearchRate, cfg.SearchBurst = m.Config.SearchRate, m.Config.SearchBurst
	cfg.SessionRate, cfg.SessionBurst = m.Config.SessionRate, m.Config.SessionBurst
	cfg.WriteRate, cfg.WriteBurst = m.Config.WriteRate, m.Config.WriteBurst
	cfg.SearchTimeout = m.Config.SearchTimeout
	cfg.TrustedProxies = splitList(m.Config.TrustedProxies)
	cfg.PublicURL = m.Config.PublicURL
	cfg.MaxConnections, cfg.MaxConnectionsPerAddr = m.Config.MaxConnections, m.Config.MaxConnectionsPerAddr
	cfg.UploadsInFlight, cfg.DownloadsInFlight, cfg.DownloadsPerAccount = m.Config.UploadsInFlight, m.Config.DownloadsInFlight, m.Config.DownloadsPerAccount
	cfg.BatchesInFlight = m.Config.BatchesInFlight
	cfg.Nodes = &m.nodeShare
	cfg.Version, cfg.Revision = m.build.Version, m.build.Revision
	var err error
	m.Server, err = httpapi.NewServer(cfg, httpapi.Deps{
		Searcher: LiveSearcher{m.Live}, Profiles: LiveSearcher{m.Live}, Sessions: m.Accounts, Ready: m.ready,
		Orders: m.Ordering.Orders, Payments: m.Ordering.Payments, Webhooks: m.Ordering.Webhooks, Watches: m.Ordering.Watches,
		Metrics: m.Metrics.HTTP, Logger: m.Logger, OnSearch: m.observeSearch,
		OnTransfer: m.Metrics.SetTransfersInFlight, OnTransferRefused: m.Metrics.ObserveTransferRefused,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	m.ln = ln
	m.serveCh = make(chan error, 1)
	go func() { m.serveCh <- m.Server.Serve(ln) }()
	id, count, _ := m.Live.Current()
	m.Logger.Info("serving", "url", "http://"+m.Addr()+"/", "generation", id, "profiles", count,
		"version", m.build.Version, "revision", m.build.Revision)
	fmt.Fprintf(m.Stdout, "companydocs is serving %d company profiles on http://%s/\n", count, m.Addr())
	return nil
}

// Addr is the address the server listens on (useful with :0).
func (m *Main) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// RunUntil runs the server until ctx ends, then shuts it down.
func (m *Main) RunUntil(ctx context.Context) error {
	if err := m.Run(ctx); err != nil {
		m.Close()
		return err
	}
	select {
	case <-ctx.Done():
		m.Logger.Info("shutting down")
	case err := <-m.serveCh:
		m.Close()
		return fmt.Errorf("serve: %w", err)
	}
	return m.Close()
}

// Close shuts down in reverse order: HTTP first (finishing in-flight
// requests within the grace period), then the watcher (a comparison cut
// short is finished at the next start), then the webhook dispatcher (its
// attempts in flight are cancelled and made again after the next start),
// then the index, then the order store;
// last it releases the data directory.
func (m *Main) Close() error {
	var errs []error
	if m.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownGrace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
	}
	if w := m.watcher.Load(); w != nil {
		w.Close()
	}
	if m.Follower != nil {
		m.Follower.Stop()
		errs = append(errs, m.followObjects.Close())
	}
	if m.Webhooks != nil {
		errs = append(errs, m.Webhooks.Close())
	}
	m.stopRefunds()
	errs = append(errs, m.store.Close())
	if m.Live != nil {
		errs = append(errs, m.Live.Close())
	}
	if m.Accounts != nil {
		m.Accounts.Close() // the session sweep
	}
	if m.OrderStore != nil {
		errs = append(errs, m.OrderStore.Close())
	}
	if m.Database != nil {
		errs = append(errs, m.Database.Close())
	}
	errs = append(errs, m.unlockDataDir())
	return errors.Join(errs...)
}

// observeSearch counts an answered search by its reading and its top label.
func (m *Main) observeSearch(res *resolver.Result) {
	label := "none"
	if len(res.Candidates) > 0 {
		label = res.Candidates[0].ConfidenceLabel
	}
	kind := res.Understanding.Kind
	if len(res.Understanding.LineDetails) > 0 {
		kind = "pasted_" + kind // a pasted block, read by its register line, its LEI or as text
	}
	m.Metrics.ObserveSearch(kind, label)
}

// observeSwap records a newly swapped-in generation in the metrics.
func (m *Main) observeSwap(meta index.Meta) {
	m.Metrics.ObserveSwap(meta.ID, meta.Profiles, meta.CreatedAt)
	m.observeChanges(meta)
	m.wakeWatcher()
	if m.Follower != nil {
		// The follow loop installed it, but its heartbeat went out before
		// the swap: said again now, the metastore and the behind gauge
		// stop saying "behind 1" for the rest of the follow interval.
		m.Follower.WakeUp()
	}
}

// wakeWatcher asks the watcher to compare the watches with the current
// generation.
func (m *Main) wakeWatcher() {
	if w := m.watcher.Load(); w != nil {
		w.Wake()
	}
}

// observeChanges records the change counts of the generation being served.
func (m *Main) observeChanges(meta index.Meta) {
	if c := meta.Changes; c != nil {
		m.Metrics.SetGenerationChanges(true, c.Profiles, c.ByField)
	} else {
		m.Metrics.SetGenerationChanges(false, 0, nil)
	}
}

// currentGeneration acquires the generation being served, for a new
// watch (ordering.Options.Generation).
func (m *Main) currentGeneration() (ordering.WatchGeneration, func()) {
	gen, release := m.Live.Acquire()
	if gen == nil {
		return nil, release
	}
	return gen, release
}

// ready names what is missing before the service can serve.
func (m *Main) ready() []string {
	var missing []string
	if m.Live == nil {
		missing = append(missing, "no index generation is open")
	} else if id, _, _ := m.Live.Current(); id == "" {
		missing = append(missing, "no index generation is open")
	}
	if m.Ordering == nil {
		missing = append(missing, "the order store is not open")
	} else if _, err := m.Ordering.Orders.Plans(); err != nil {
		missing = append(missing, "no plan is configured")
	}
	if m.Database != nil && !m.databaseAnswers() {
		missing = append(missing, "the order database does not answer")
	}
	return missing
}

// DemoKeyName is the file of the data directory that keeps the demo
// account's API key, so that a restart of the same data directory keeps
// the key that was printed (only its hash is in the order store).
const DemoKeyName = "demo-api-key"

// createDemo creates the demo account on first start and prints its key:
// the key kept in the data directory while it is still the demo
// account's, else a new one (the old one then stops working), kept for
// the next start.
func (m *Main) createDemo() error {
	path, err := filepath.Abs(filepath.Join(m.Config.DataDir, DemoKeyName))
	if err != nil {
		return err
	}
	if kept, err := os.ReadFile(path); err == nil && m.Accounts.IsDemoKey(strings.TrimSpace(string(kept))) {
		m.DemoKey = strings.TrimSpace(string(kept))
		fmt.Fprintf(m.Stdout, "Demo API key (the one of the last start, kept in %s): %s\n", path, m.DemoKey)
		return nil
	}
	key, created, err := m.Accounts.EnsureDemoAccount(int64(m.Config.DemoCredits))
	if err != nil {
		return fmt.Errorf("create demo account: %w", err)
	}
	m.DemoKey = key
	if created {
		fmt.Fprintf(m.Stdout, "Created the demo account with %d credits.\n", m.Config.DemoCredits)
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		fmt.Fprintf(m.Stdout, "Demo API key (new; not kept, %v: the next --demo start issues another): %s\n", err, key)
		return nil
	}
	fmt.Fprintf(m.Stdout, "Demo API key (new, kept in %s for the next starts of this data directory): %s\n", path, key)
	return nil
}

// loadPlans reads the plans file, or the embedded example plans.
func loadPlans(path string) (*ordering.Plans, error) {
	if path == "" {
		return ordering.ParsePlans(data.PlansName, data.Plans)
	}
	return plansfile.Load(path)
}

// LiveSearcher resolves each search on the generation current at its start.
type LiveSearcher struct{ Live *index.Live }

func (s LiveSearcher) Search(ctx context.Context, req resolver.Request) (*resolver.Result, error) {
	gen, release := s.Live.Acquire()
	defer release()
	if gen == nil {
		return nil, errNoGeneration
	}
	return resolver.Resolve(ctx, gen, req)
}

// Profiles returns the profiles of ids on the current generation.
func (s LiveSearcher) Profiles(_ context.Context, ids []string) (map[string]*companydocs.Profile, error) {
	gen, release := s.Live.Acquire()
	defer release()
	if gen == nil {
		return nil, errNoGeneration
	}
	out := make(map[string]*companydocs.Profile, len(ids))
	for _, id := range ids {
		p, err := gen.Profile(id)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out[id] = p
		}
	}
	return out, nil
}

// errNoGeneration answers a search that finds the index closed: the
// server is shutting down and the grace period has ended.
var errNoGeneration = companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.shutting_down", nil)

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// newLogger returns a text logger on a terminal and a JSON logger
// otherwise; format and level have been validated (Config.Validate).
func newLogger(w io.Writer, format, level string) *slog.Logger {
	lvl, _ := parseLogLevel(level)
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationInMilliseconds}
	if format == "text" || (format == "auto" && cli.IsTerminal(w)) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// durationInMilliseconds logs a time.Duration as milliseconds under a key
// that says so ("duration" -> "duration_ms": 8600), instead of the JSON
// handler's raw nanoseconds.
func durationInMilliseconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	ms := float64(a.Value.Duration().Microseconds()) / 1000
	key := a.Key
	if !strings.HasSuffix(key, "_ms") {
		key += "_ms"
	}
	return slog.Float64(key, ms)
}

// observeTransition feeds the order metrics and wakes the webhook
// dispatcher, which finds the new event in the outbox.
func (m *Main) observeTransition(t ordering.Transition) {
	if t.From != t.To { // a refund keeps the status: an event, no transition
		m.Metrics.ObserveTransition(t.From, t.To, t.Actor)
	}
	m.wakeDispatcher()
}

// wakeDispatcher makes the webhook dispatcher look at the outbox now.
func (m *Main) wakeDispatcher() {
	if d := m.dispatcher.Load(); d != nil {
		d.Wake()
	}
}

func (m *Main) webhookPolicy() webhook.Policy {
	return webhook.Policy{AllowHTTP: m.Config.WebhookAllowHTTP, AllowPrivate: m.Config.WebhookAllowPrivate}
}

// startWebhooks starts the dispatcher on the open order store; it picks
// up what the outbox and the pending deliveries hold from before.
func (m *Main) startWebhooks() {
	m.Webhooks = webhook.New(m.Ordering.Webhooks, webhook.Options{Workers: m.Config.WebhookWorkers, Timeout: m.Config.WebhookTimeout,
		RetryBase: m.Config.WebhookRetryBase, RetryFor: m.Config.WebhookRetryFor, Policy: m.webhookPolicy(),
		Logger: m.Logger, OnOutcome: m.Metrics.ObserveWebhookDelivery, OnStats: m.Metrics.SetWebhookStats})
	m.dispatcher.Store(m.Webhooks)
	m.Webhooks.Start()
}

// webhookLease is the lease of a claimed webhook delivery over a shared
// store: twice the attempt's time limit and five seconds for the record
// of its outcome, so that a lease outlives every attempt.
func webhookLease(timeout time.Duration) time.Duration {
	return 2*timeout + 5*time.Second
}
