package ordering

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"companydocs"
)

// DefaultSessionTTL is how long a session lives unless Options say otherwise.
const DefaultSessionTTL = 12 * time.Hour

// Profiles looks up company profiles by id. It returns (nil, nil) when no
// profile has the id. Registry-cache ids start "dp_", discovery ids "dc_".
type Profiles interface {
	Profile(id string) (*companydocs.Profile, error)
}

// Options tunes a Service. The zero value is usable but for DocumentsDir.
type Options struct {
	// SessionTTL is how long a session token is valid (default 12h).
	SessionTTL time.Duration
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// SweepInterval is how often expired sessions are deleted in the
	// background (default DefaultSweepInterval; negative: never).
	SweepInterval time.Duration
	// DocumentsDir holds delivered PDFs (required; "documents" in the data
	// directory, see DocumentsDir).
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
	// Logger receives the failures of the background sweep (default
	// slog.Default()).
	Logger *slog.Logger
}

// Service enforces the rules over a Store: the verified-profile gate,
// ownership of orders, credits, the lifecycle, sessions and webhooks.
type Service struct {
	store    Store
	profiles Profiles
	plans    *Plans
	ttl      time.Duration
	now      func() time.Time
	ids      idGenerator
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

// New makes the service over store, which it closes on Close. It
// prepares the documents directory (see documentStore.prepare).
// profiles and plans may be nil for account administration, which needs
// neither.
func New(store Store, profiles Profiles, plans *Plans, opts Options) (*Service, error) {
	if opts.DocumentsDir == "" {
		return nil, errors.New("ordering: Options.DocumentsDir is required")
	}
	opts = opts.withDefaults()
	docs := documentStore{dir: opts.DocumentsDir, url: opts.DocumentURL}
	if err := docs.prepare(store); err != nil {
		return nil, err
	}
	s := &Service{
		store: store, profiles: profiles, plans: plans,
		ttl: opts.SessionTTL, now: opts.Now,
		ids:       idGenerator{now: opts.Now},
		eventIDs:  idGenerator{now: opts.Now},
		docs:      docs,
		onChange:  opts.OnTransition,
		checkURL:  opts.CheckWebhookURL,
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

func (o Options) withDefaults() Options {
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = DefaultSweepInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Close stops the session sweep, then closes the store (which commits the
// writes under way). Calls after the first only close the store again.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.sweepDone
	})
	return s.store.Close()
}

// Plans lists the configured plans, or plan_configuration_missing.
func (s *Service) Plans() ([]companydocs.Plan, error) {
	return s.plans.Plans()
}

// CheckDocuments fails, with an error wrapping ErrDamaged, when an order
// refers to a document file that is missing.
func (s *Service) CheckDocuments(ctx context.Context) error {
	return s.store.View(ctx, func(tx Tx) error { return checkDocumentFiles(tx, s.docs.dir) })
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
