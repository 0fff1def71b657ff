package ordering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"companydocs"

	bolt "go.etcd.io/bbolt"
)

// DatabaseFile is the name of the order database inside the data directory.
const DatabaseFile = "orders.db"

// Defaults of Options.
const (
	DefaultSessionTTL  = 12 * time.Hour
	DefaultOpenTimeout = time.Second
)

// ErrInUse is returned by Open when another process holds the database.
var ErrInUse = errors.New("the order database is in use by a running server; stop it, or use the server's HTTP API instead")

// Bucket names. Keys built from several parts join them with a zero byte,
// which account names, profile ids and plan ids cannot contain.
var (
	bucketAccounts      = []byte("accounts")       // account name -> AccountRecord JSON
	bucketKeys          = []byte("keys")           // sha256(api key) -> account name
	bucketSessions      = []byte("sessions")       // sha256(token) -> SessionRecord JSON
	bucketOrders        = []byte("orders")         // order id -> OrderRecord JSON
	bucketAccountOrders = []byte("account_orders") // account 0 order id -> order id (ids sort by time)
	bucketIdempotency   = []byte("idempotency")    // account 0 Idempotency-Key -> order id
	bucketOpenOrders    = []byte("open_orders")    // account 0 profile 0 document 0 plan -> order id
	bucketOrderStatus   = []byte("order_status")   // status 0 order id -> account (the operator queue, oldest first)
	bucketDocuments     = []byte("documents")      // sha256 hex 0 order id -> "" (documents on disk that orders reference)
	bucketOutbox        = []byte("outbox")         // event id -> Event JSON, until the dispatcher has it

	bucketWebhooks          = []byte("webhooks")           // endpoint id -> EndpointRecord JSON (with the secret)
	bucketWebhookDeliveries = []byte("webhook_deliveries") // endpoint id 0 event id -> DeliveryRecord JSON
	bucketWebhookPending    = []byte("webhook_pending")    // endpoint id 0 event id -> next attempt (unix ns, 8 bytes)
	bucketWebhookDue        = []byte("webhook_due")        // endpoint id 0 next attempt (8 bytes) event id -> nothing: each endpoint's pending deliveries in due order
)

// bucketAccountSessions indexes sessions by account, oldest first: key
// account 0 created (8 bytes) sha256(token), no value. Open builds it for
// a database written before it existed.
var bucketAccountSessions = []byte("account_sessions")

var allBuckets = [][]byte{bucketAccounts, bucketKeys, bucketSessions, bucketAccountSessions, bucketOrders, bucketAccountOrders, bucketIdempotency, bucketOpenOrders, bucketOrderStatus, bucketDocuments, bucketOutbox, bucketWebhooks, bucketWebhookDeliveries, bucketWebhookPending, bucketWebhookDue}

// Profiles looks up company profiles by id. It returns (nil, nil) when no
// profile has the id. Registry-cache ids start "dp_", discovery ids "dc_".
type Profiles interface {
	Profile(id string) (*companydocs.Profile, error)
}

// Options tunes a Service. The zero value is usable.
type Options struct {
	// SessionTTL is how long a session token is valid (default 12h).
	SessionTTL time.Duration
	// OpenTimeout is how long Open waits for the file lock (default 1s).
	OpenTimeout time.Duration
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// CheckTimeout bounds the check of an existing file at Open (default
	// DefaultCheckTimeout); past it, Open fails with ErrCheckTimeout.
	CheckTimeout time.Duration
	// SkipCheck skips the walk of every page at Open, for files too large
	// to check at each start. The meta pages and the file size are still
	// checked, so that bbolt can map the file safely.
	SkipCheck bool
	// ReadOnly opens the file without writing to it and without taking
	// the exclusive lock; a missing file is an error.
	ReadOnly bool
	// SweepInterval is how often expired sessions are deleted in the
	// background (default DefaultSweepInterval; negative: never).
	SweepInterval time.Duration
	// DocumentsDir holds delivered PDFs (default: "documents" beside the
	// database file).
	DocumentsDir string
	// DocumentURL makes the download_url of a delivered order's document
	// from its id; the front end supplies it, since the domain knows no
	// routes. Without it download_url is empty.
	DocumentURL func(orderID string) string
	// OnTransition is called after each committed creation and transition
	// (for metrics, and to wake an event dispatcher).
	OnTransition func(Transition)
	// CheckWebhookURL applies the network rules to a webhook URL at
	// registration (scheme, addresses it resolves to); the front end
	// supplies it. Without it only the URL's shape is checked.
	CheckWebhookURL func(ctx context.Context, rawURL string) error
	// Logger receives the failures of the background sweep and warnings
	// about damage bbolt tolerates, such as one invalid meta page (default
	// slog.Default()).
	Logger *slog.Logger
}

// Service stores accounts, sessions and orders in one bbolt file and
// enforces the verified-profile gate and ownership of orders.
type Service struct {
	db       *bolt.DB
	profiles Profiles
	plans    *Plans
	ttl      time.Duration
	now      func() time.Time
	ids      idGenerator
	creates  *groupCommit
	sessions sessionCache
	logger   *slog.Logger
	roles    sync.Map // account name -> role
	eventIDs idGenerator
	docs     documentStore
	onChange func(Transition)
	checkURL func(ctx context.Context, rawURL string) error
	// failDelivery, set by tests, fails the delivery transaction after the
	// document is on disk, as a crash before the commit would.
	failDelivery func() error

	stop      chan struct{} // closed by Close
	sweepDone chan struct{} // closed when the sweeper has returned
	closeOnce sync.Once
}

// Open opens the order database at path, creating it only when no file
// is there. An existing file is checked first (see Options.SkipCheck and
// CheckTimeout); a damaged one is refused with an error wrapping
// ErrDamaged and left untouched. profiles and plans may be nil for
// account administration, which needs neither.
func Open(path string, profiles Profiles, plans *Plans, opts Options) (*Service, error) {
	opts = opts.withDefaults(path)
	db, err := openDB(path, opts)
	if err != nil {
		return nil, err
	}
	if opts.ReadOnly {
		return &Service{db: db, profiles: profiles, plans: plans, ttl: opts.SessionTTL, now: opts.Now, ids: idGenerator{now: opts.Now}, docs: documentStore{dir: opts.DocumentsDir, url: opts.DocumentURL}}, nil
	}
	if err := db.Update(createBuckets); err != nil {
		db.Close()
		return nil, fmt.Errorf("create buckets in %q: %w", path, err)
	}
	docs := documentStore{dir: opts.DocumentsDir}
	if err := docs.prepare(db); err != nil {
		db.Close()
		return nil, err
	}
	s := &Service{
		db: db, profiles: profiles, plans: plans,
		ttl: opts.SessionTTL, now: opts.Now,
		ids:       idGenerator{now: opts.Now},
		eventIDs:  idGenerator{now: opts.Now},
		docs:      documentStore{dir: opts.DocumentsDir, url: opts.DocumentURL},
		onChange:  opts.OnTransition,
		checkURL:  opts.CheckWebhookURL,
		creates:   newGroupCommit(db),
		logger:    opts.Logger,
		stop:      make(chan struct{}),
		sweepDone: make(chan struct{}),
	}
	if opts.SweepInterval > 0 {
		go s.sweepEvery(opts.SweepInterval)
	} else {
		close(s.sweepDone)
	}
	return s, nil
}

func (o Options) withDefaults(path string) Options {
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.OpenTimeout <= 0 {
		o.OpenTimeout = DefaultOpenTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CheckTimeout <= 0 {
		o.CheckTimeout = DefaultCheckTimeout
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.DocumentsDir == "" {
		o.DocumentsDir = filepath.Join(filepath.Dir(path), DocumentsDir)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func createBuckets(tx *bolt.Tx) error {
	indexed := tx.Bucket(bucketAccountSessions) != nil
	statusIndexed := tx.Bucket(bucketOrderStatus) != nil
	dueIndexed := tx.Bucket(bucketWebhookDue) != nil
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
	}
	if !statusIndexed {
		if err := indexStatuses(tx); err != nil {
			return err
		}
	}
	if !dueIndexed {
		if err := indexDueWebhooks(tx); err != nil {
			return err
		}
	}
	if !indexed {
		return indexSessions(tx)
	}
	return nil
}

// Close stops the session sweep, commits the creates under way, then
// closes the database. Calls after the first do nothing.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
			<-s.sweepDone
		}
		if s.creates != nil {
			s.creates.close()
		}
	})
	return s.db.Close()
}

// Path returns the file the service stores its data in.
func (s *Service) Path() string { return s.db.Path() }

// Plans lists the configured plans, or plan_configuration_missing.
func (s *Service) Plans() ([]companydocs.Plan, error) {
	return s.plans.Plans()
}

// Check verifies the consistency of the database (bbolt's own check, and
// that the records are where and what this package wrote). A failure
// wraps ErrDamaged.
func (s *Service) Check() error {
	if err := checkDB(s.db); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error { return checkDocumentFiles(tx, s.docs.dir) })
}

// key joins parts with a zero byte.
func key(parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// idGenerator issues order ids that sort by creation time: 48 bits of
// milliseconds and 80 random bits, in lower-case Crockford base32 (whose
// alphabet is in ASCII order). Within one millisecond the random part is
// incremented so that ids stay strictly increasing in one process.
type idGenerator struct {
	mu   sync.Mutex
	now  func() time.Time
	last [16]byte
}
