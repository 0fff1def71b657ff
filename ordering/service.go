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

// GenerationProfiles is Profiles on a node that may answer from a newer
// generation than the one it serves (a node that follows published
// generations, during a rollout): ProfileOf also names the generation the
// profile comes from, "" for the one served. Watch creation asks it where
// the served generation says no, so that a watch and an order get the
// same answer.
type GenerationProfiles interface {
	Profiles
	ProfileOf(id string) (p *companydocs.Profile, generation string, err error)
}

// Options tunes Accounts and Orders; each reads the fields its comment
// names. The zero value is usable but for Orders' DocumentsDir.
type Options struct {
	// Now is the clock of both (default time.Now); tests inject their own.
	Now func() time.Time
	// Logger receives what goes wrong in the background (default
	// slog.Default()).
	Logger *slog.Logger

	// SessionTTL is how long a session token is valid (Accounts; default
	// 12h).
	SessionTTL time.Duration
	// SweepInterval is how often Accounts deletes expired sessions in the
	// background (default DefaultSweepInterval; negative: never).
	SweepInterval time.Duration

	// Documents keeps the delivered PDFs (Orders; required): the store
	// package's own, bbolt.OpenDocuments or postgres.OpenDocuments.
	Documents Documents
	// DocumentURL makes the download_url of a delivered order's document
	// from its id (Orders); the front end supplies it, since the domain
	// knows no routes. Without it download_url is empty.
	DocumentURL func(orderID string) string
	// OnTransition is called after each committed creation and transition
	// (Orders; for metrics, and to wake an event dispatcher).
	OnTransition func(Transition)
	// CheckWebhookURL applies the network rules to a webhook URL at
	// registration (Orders; scheme, addresses it resolves to); the front
	// end supplies it. Without it only the URL's shape is checked.
	CheckWebhookURL func(ctx context.Context, rawURL string) error
	// DeliveryLease is how long a webhook delivery claimed by one process
	// of a shared store stays with it (Orders; default
	// DefaultDeliveryLease): longer than one attempt may take, so that no
	// two run at once, and as short as that allows, since it is how long
	// a process that died mid-attempt holds its endpoint's deliveries.
	DeliveryLease time.Duration

	// Generation acquires the current index generation and returns it
	// with its release (Orders; a nil generation when none is open). A
	// watch records the generation its profile was read from; without
	// it a watch starts from Profiles and no generation, and the first
	// comparison takes it from there.
	Generation func() (WatchGeneration, func())
	// OnWatches is called when a watch is created (+1) or stopped (-1)
	// (Orders; for the gauge).
	OnWatches func(delta int)
	// OnWatchBehind is called when a new watch was read from a generation
	// that is no longer current when it commits (a swap came in between):
	// the comparison with the new generation may have passed it by, so
	// the caller runs one again (Orders).
	OnWatchBehind func()

	// Payments are the payment providers by the name plans give them in
	// "payment" (Orders; "stripe"). A plan paid through a provider not
	// here cannot be ordered: serve refuses to start with one.
	Payments map[string]PaymentProvider
	// OnRefundDue is called after a commit that scheduled a refund
	// (Orders; to wake the refunder, RunRefunds).
	OnRefundDue func()
	// OnPaymentEvent is called with the outcome of each event a provider
	// sent (Orders; PaymentEvent* or "invalid_signature", for the
	// metrics).
	OnPaymentEvent func(provider, outcome string)
	// OnRefund is called after each refund attempt is recorded, with
	// its outcome, RefundOutcome* (Orders; for the metrics).
	OnRefund func(outcome string)
	// RefundRetryBase is the wait after a refund's first failed attempt;
	// it doubles per attempt (Orders; default DefaultRefundRetryBase).
	// RefundLease is how long a claimed refund stays with the process
	// asking for it (default DefaultRefundLease).
	RefundRetryBase time.Duration
	RefundLease     time.Duration
}

// DefaultDeliveryLease is the delivery lease when Options name none.
const DefaultDeliveryLease = time.Minute

func (o Options) withDefaults() Options {
	if o.DeliveryLease <= 0 {
		o.DeliveryLease = DefaultDeliveryLease
	}
	if o.RefundRetryBase <= 0 {
		o.RefundRetryBase = DefaultRefundRetryBase
	}
	if o.RefundLease <= 0 {
		o.RefundLease = DefaultRefundLease
	}
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

// Accounts is what authenticates: accounts, their API keys and credits,
// and sessions. Its Close stops the session sweep; the store stays open.
type Accounts struct {
	store    Store
	ttl      time.Duration
	now      func() time.Time
	sessions sessionCache
	logger   *slog.Logger

	stop      chan struct{} // closed by Close
	sweepDone chan struct{} // closed when the sweeper has returned
	closeOnce sync.Once
}

// NewAccounts makes Accounts over store and starts its session sweep. Over
// a SharedStore it trusts a cached session for SharedSessionCacheTTL only.
func NewAccounts(store Store, opts Options) *Accounts {
	opts = opts.withDefaults()
	a := &Accounts{store: store, ttl: opts.SessionTTL, now: opts.Now, logger: opts.Logger,
		stop: make(chan struct{}), sweepDone: make(chan struct{})}
	if _, shared := store.(SharedStore); shared {
		a.sessions.ttl = SharedSessionCacheTTL
	}
	if opts.SweepInterval > 0 {
		go a.sweepEvery(opts.SweepInterval)
	} else {
		close(a.sweepDone)
	}
	return a
}

// Close stops the session sweep and waits for it. Calls after the first
// do nothing. It does not close the store, which the caller opened.
func (s *Accounts) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.sweepDone
	})
}

// core is what the ordering services share over the one store: the
// store, the plans and profiles the gate reads, the clock, the ids, the
// roles of accounts, and the lifecycle every service moves orders by
// (move, the refund it makes, the outbox event it writes, the hook that
// observes it). Each service embeds the same core, so that one process
// issues event ids from one generator.
type core struct {
	store    Store
	profiles Profiles
	plans    *Plans
	now      func() time.Time
	ids      idGenerator
	roles    sync.Map // account name -> role
	eventIDs idGenerator
	onChange func(Transition)
	logger   *slog.Logger
	// payments are the payment providers by name: a creation opens a
	// checkout, a cancel closes it, a refund is scheduled for the
	// refunder; onRefundDue wakes the refunder (see Options).
	payments    map[string]PaymentProvider
	onRefundDue func()
}

// Orders is what orders: plans, previews, orders, their lifecycle and
// documents, with the verified-profile gate and the roles and ownership
// of every operation.
type Orders struct {
	*core
	docs    Documents
	docURL  func(orderID string) string
	watches *Watches // the account summary counts an account's watches
	// failDelivery, set by tests, fails the delivery transaction after the
	// document is stored, as a crash before the commit would.
	failDelivery func() error
}

// Services are the ordering services over one store, each doing one job
// over the same core: Orders (preview, create, lifecycle, documents),
// Payments (provider events and refunds), Webhooks (endpoints, the
// outbox's fan-out and deliveries) and Watches (watches and their
// comparison with each new generation). Accounts, which authenticates,
// stands beside them (NewAccounts).
type Services struct {
	Orders   *Orders
	Payments *Payments
	Webhooks *Webhooks
	Watches  *Watches
}

// New makes the ordering services over store, keeping the delivered PDFs
// in opts.Documents. plans may be nil: every order operation then answers
// plan_configuration_missing.
func New(store Store, profiles Profiles, plans *Plans, opts Options) (*Services, error) {
	if opts.Documents == nil {
		return nil, errors.New("ordering: Options.Documents is required")
	}
	opts = opts.withDefaults()
	c := &core{store: store, profiles: profiles, plans: plans, now: opts.Now,
		ids: idGenerator{now: opts.Now}, eventIDs: idGenerator{now: opts.Now},
		onChange: opts.OnTransition, logger: opts.Logger,
		payments: opts.Payments, onRefundDue: opts.OnRefundDue}
	watches := &Watches{core: c, generation: opts.Generation, onWatches: opts.OnWatches, onBehind: opts.OnWatchBehind}
	return &Services{
		Orders:   &Orders{core: c, docs: opts.Documents, docURL: opts.DocumentURL, watches: watches},
		Payments: &Payments{core: c, onRefund: opts.OnRefund, onEvent: opts.OnPaymentEvent, refundBase: opts.RefundRetryBase, refundLease: opts.RefundLease},
		Webhooks: &Webhooks{core: c, checkURL: opts.CheckWebhookURL, lease: opts.DeliveryLease},
		Watches:  watches,
	}, nil
}

// Plans lists the configured plans, or plan_configuration_missing.
func (s *Orders) Plans() ([]companydocs.Plan, error) {
	return s.plans.Plans()
}

// CheckDocuments fails, with an error wrapping ErrDamaged, when an order
// refers to a document that is not kept (Documents.Check).
func (s *Orders) CheckDocuments(ctx context.Context) error {
	return s.store.View(ctx, s.docs.Check)
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
