package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"companydocs"
	"companydocs/messages"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// Config holds the HTTP settings.
type Config struct {
	// BodyLimit bounds request bodies; larger ones get 413.
	BodyLimit int
	// ReadTimeout and WriteTimeout bound a connection's reads and writes.
	ReadTimeout, WriteTimeout time.Duration
	// SearchTimeout is the deadline of one search.
	SearchTimeout time.Duration
	// BatchTimeout is the deadline of a batch of searches (its queries
	// not answered by then get service_unavailable, the others stand).
	BatchTimeout time.Duration
	// SearchRate is the number of searches per second allowed per client
	// address; 0 turns the limit off. SearchBurst is the bucket size.
	SearchRate  float64
	SearchBurst int
	// SessionRate is the number of session creations per second allowed
	// per client address and, separately, per API key; 0 turns both limits
	// off. SessionBurst is the bucket size.
	SessionRate  float64
	SessionBurst int
	// WriteRate is the number of changes per second allowed per account
	// (order creations, a client's cancels, webhook endpoints created or
	// deleted); 0 turns the limit off. WriteBurst is the bucket size. It
	// bounds the disk one account can fill per hour (RELIABILITY.md).
	WriteRate  float64
	WriteBurst int
	// Nodes divides every rate and burst above among the live nodes of a
	// service of several (NodeShare); nil: the node is alone.
	Nodes *NodeShare
	// TrustedProxies lists the proxy addresses and ranges whose
	// X-Forwarded-For, X-Forwarded-Host and X-Forwarded-Proto are
	// believed; from any other peer they are ignored.
	TrustedProxies []string
	// PublicURL is the absolute URL the service is reached at (see
	// ParsePublicURL), for the URLs answers hand out; empty builds them
	// from each request (publicBase).
	PublicURL string
	// MaxConnections bounds the connections held at once, and
	// MaxConnectionsPerAddr those from one client address (trusted proxies
	// exempt); a connection over either is answered 503 and closed. 0
	// turns a cap off.
	MaxConnections, MaxConnectionsPerAddr int
	// BatchesInFlight bounds the batches of searches (the search batch,
	// reconciliation's queries) this node resolves at once (503 beyond);
	// a client address has one at a time (429 beyond).
	BatchesInFlight int
	// UploadsInFlight bounds the document uploads this node reads at once
	// (503 beyond). DownloadsInFlight bounds the downloads it sends at
	// once (503 beyond), DownloadsPerAccount those of one account (429
	// beyond).
	UploadsInFlight     int
	DownloadsInFlight   int
	DownloadsPerAccount int
	// Version and Revision name the build (module version, VCS commit);
	// /readyz reports them.
	Version, Revision string
}

// DefaultConfig returns the settings used when nothing is configured.
func DefaultConfig() Config {
	return Config{
		BodyLimit:     64 << 10,
		ReadTimeout:   10 * time.Second,
		WriteTimeout:  10 * time.Second,
		SearchTimeout: 5 * time.Second,
		BatchTimeout:  30 * time.Second,
		SearchRate:    20,
		SearchBurst:   40,
		SessionRate:   1,
		SessionBurst:  20,
		WriteRate:     1,
		WriteBurst:    30,

		MaxConnections:        DefaultMaxConnections,
		MaxConnectionsPerAddr: DefaultMaxConnectionsPerAddr,
		BatchesInFlight:       4,
		UploadsInFlight:       4,
		DownloadsInFlight:     32,
		DownloadsPerAccount:   4,
	}
}

// Server is the HTTP front end of the service.
type Server struct {
	app    *fiber.App
	config Config
	logger *slog.Logger

	Deps

	limiter *rateLimiter
	// accountSearches are the signed-in accounts' search budgets in
	// batches and reconciliation, at the plans' search_rate; nil when no
	// plan sets one. Made at the first signed-in search (the plans are
	// read once, at start).
	accountSearches func() *rateLimiter
	sessionAddrs    *rateLimiter
	sessionKeys     *rateLimiter
	writes          *rateLimiter
	ln              atomic.Pointer[lingerListener]
	proxies         []netip.Prefix
	publicURL       string // Config.PublicURL without its trailing slash
	uploads         *transfers
	downloads       *transfers
	// batchSlots holds one token per batch query being resolved, at most
	// batchCores (SearchAll); batches one per batch being resolved
	// (admitBatch); charged the keyed batches' charges (batchcharge.go).
	batchSlots   chan struct{}
	batches      *slots[string]
	charged      *chargedBatches
	requestLines requestLines
	// metricsPage serves Deps.Metrics at /metrics.
	metricsPage fiber.Handler
}

// Deps are what a Server serves. Every one is required but OnSearch, so
// that no handler checks for a missing one while it runs.
type Deps struct {
	// Searcher resolves search queries.
	Searcher Searcher
	// Profiles looks profiles up by id (reconciliation).
	Profiles Profiles
	// Sessions authenticates (sessions for API keys, session tokens).
	Sessions Sessions
	// Orders orders (plans, preview, orders, the lifecycle, documents).
	Orders Orders
	// Payments applies the payment providers' events.
	Payments Payments
	// Webhooks keeps the accounts' webhook endpoints.
	Webhooks Webhooks
	// Watches keeps the accounts' watches.
	Watches Watches
	// Ready reports what is missing before the service can serve; empty
	// means ready.
	Ready func() []string
	// Metrics records requests and is served at /metrics, with the
	// service's other metrics.
	Metrics Metrics
	// Logger receives request and failure logs.
	Logger *slog.Logger
	// OnSearch observes answered searches (for metrics); optional.
	OnSearch func(*resolver.Result)
	// OnTransfer observes the uploads or downloads (kind TransferUpload,
	// TransferDownload) in flight each time their number changes, and
	// OnTransferRefused each one refused for want of a slot (reason
	// RefusedNode, RefusedAccount); both optional (for metrics).
	OnTransfer        func(kind string, inFlight int)
	OnTransferRefused func(kind, reason string)
}

// missing names the required dependencies that are nil.
func (d Deps) missing() []string {
	var out []string
	for name, absent := range map[string]bool{"Searcher": d.Searcher == nil, "Profiles": d.Profiles == nil, "Sessions": d.Sessions == nil, "Orders": d.Orders == nil,
		"Payments": d.Payments == nil, "Webhooks": d.Webhooks == nil, "Watches": d.Watches == nil,
		"Ready": d.Ready == nil, "Metrics": d.Metrics == nil, "Logger": d.Logger == nil} {
		if absent {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// NewServer returns a server with its routes registered, or an error when
// a required dependency is missing.
func NewServer(config Config, deps Deps) (*Server, error) {
	if missing := deps.missing(); len(missing) > 0 {
		return nil, fmt.Errorf("http server: missing %s", strings.Join(missing, ", "))
	}
	if config.UploadsInFlight < 1 || config.DownloadsInFlight < 1 || config.DownloadsPerAccount < 1 || config.BatchesInFlight < 1 {
		return nil, fmt.Errorf("http server: UploadsInFlight (%d), DownloadsInFlight (%d), DownloadsPerAccount (%d) and BatchesInFlight (%d) must be 1 or more",
			config.UploadsInFlight, config.DownloadsInFlight, config.DownloadsPerAccount, config.BatchesInFlight)
	}
	s := &Server{Deps: deps, config: config, logger: deps.Logger, proxies: trustedProxies(config.TrustedProxies)}
	if config.PublicURL != "" {
		var err error
		if s.publicURL, err = ParsePublicURL(config.PublicURL); err != nil {
			return nil, fmt.Errorf("http server: PublicURL %w", err)
		}
	}
	s.metricsPage = adaptor.HTTPHandler(deps.Metrics)
	s.limiter = newRateLimiter(config.SearchRate, config.SearchBurst, config.Nodes)
	s.accountSearches = sync.OnceValue(func() *rateLimiter { return accountSearchLimiter(deps.Orders, config.Nodes, deps.Logger) })
	s.sessionAddrs = newRateLimiter(config.SessionRate, config.SessionBurst, config.Nodes)
	s.sessionKeys = newRateLimiter(config.SessionRate, config.SessionBurst, config.Nodes)
	s.writes = newRateLimiter(config.WriteRate, config.WriteBurst, config.Nodes)
	s.batchSlots = make(chan struct{}, batchCores())
	s.batches = newSlots[string](config.BatchesInFlight, 1, nil)
	s.charged = newChargedBatches()
	s.uploads = newTransfers(TransferUpload, config.UploadsInFlight, 0, deps)
	s.downloads = newTransfers(TransferDownload, config.DownloadsInFlight, config.DownloadsPerAccount, deps)
	s.app = fiber.New(fiber.Config{
		AppName: "companydocs",
		// Bodies are streamed: the HTTP server reads at most 8 KiB of one
		// before a handler runs, gateBody reads the rest of every body but
		// the upload's up to BodyLimit, and the upload route streams its
		// own after authentication (see fasthttp's ContinueReadBodyStream).
		StreamRequestBody: true,
		// Nothing here takes a multipart body: the body gate refuses it
		// (bodygate.go), and the HTTP server must not parse one first into
		// memory and temporary files, before any route or session.
		DisablePreParseMultipartForm: true,
		BodyLimit:                    config.BodyLimit,
		ReadTimeout:                  config.ReadTimeout,
		WriteTimeout:                 config.WriteTimeout,
		IdleTimeout:                  60 * time.Second,
		ErrorHandler:                 s.handleServerError,
		DisableStartupMessage:        true,
		StrictRouting:                false,
		// Fiber believes X-Forwarded-Host and -Proto (Protocol, Hostname,
		// BaseURL, Secure) from every peer unless the check is on: it is
		// on, with no proxy trusted when none is configured. No ProxyHeader:
		// c.IP() is the socket's peer, and clientIP the one reader of
		// X-Forwarded-For.
		EnableTrustedProxyCheck: true,
		TrustedProxies:          config.TrustedProxies,
	})
	s.routes()
	s.app.Server().HeaderReceived = s.headerReceived
	s.app.Server().Handler = s.requestLines.forgetAfter(s.answerUnknownMethods(s.app.Server().Handler))
	return s, nil
}

// Serve accepts connections on ln until Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	l := newLingerListener(ln)
	s.ln.Store(l)
	return s.app.Listener(newConnLimiter(l, s.config.MaxConnections, s.config.MaxConnectionsPerAddr, s.isTrustedProxy, s.Metrics.ObserveConnRefused))
}

// Shutdown stops accepting connections and waits for in-flight requests
// until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if l := s.ln.Load(); l != nil {
		l.shutdown()
	}
	return s.app.ShutdownWithContext(ctx)
}

// statusOf is the one table mapping error codes to HTTP statuses.
var statusOf = map[string]int{
	companydocs.EINVALIDQUERY:      fiber.StatusBadRequest,
	companydocs.EINVALIDSIGNATURE:  fiber.StatusBadRequest,
	companydocs.EINVALIDEVENT:      fiber.StatusBadRequest,
	companydocs.EVALIDATION:        fiber.StatusUnprocessableEntity,
	companydocs.EUNAUTHORIZED:      fiber.StatusUnauthorized,
	companydocs.EINSUFFICIENTFUNDS: fiber.StatusPaymentRequired,
	companydocs.ENOTFOUND:          fiber.StatusNotFound,
	companydocs.EMETHODNOTALLOWED:  fiber.StatusMethodNotAllowed,
	companydocs.EDUPLICATEORDER:    fiber.StatusConflict,
	companydocs.EVERIFIEDREQUIRED:  fiber.StatusUnprocessableEntity,
	companydocs.ETOOLARGE:          fiber.StatusRequestEntityTooLarge,
	companydocs.EUNSUPPORTEDMEDIA:  fiber.StatusUnsupportedMediaType,
	companydocs.ERATELIMITED:       fiber.StatusTooManyRequests,
	companydocs.EPLANMISSING:       fiber.StatusServiceUnavailable,
	companydocs.EUNAVAILABLE:       fiber.StatusServiceUnavailable,
	companydocs.ETIMEOUT:           fiber.StatusRequestTimeout,
	companydocs.EINTERNAL:          fiber.StatusInternalServerError,
	companydocs.EFORBIDDEN:         fiber.StatusForbidden,
	companydocs.EINVALIDTRANSITION: fiber.StatusConflict,
	companydocs.EWATCHLIMIT:        fiber.StatusConflict,
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Order *companydocs.Order `json:"order,omitempty"`
}

// handleError turns any error returned by a handler into the error body.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	err = translateFiberError(err)
	code := companydocs.ErrorCode(err)
	status, ok := statusOf[code]
	if !ok {
		status = fiber.StatusInternalServerError
	}
	if code == companydocs.EINTERNAL {
		s.logger.Error("request failed", "route", c.Route().Path, "error", err)
	}
	if code == companydocs.EMETHODNOTALLOWED {
		c.Set(fiber.HeaderAllow, strings.Join(s.allowedMethods(c.Path()), ", "))
	}
	var body errorBody
	body.Error.Code = code
	message, said := companydocs.ErrorMessageIn(err, messages.Pick(c.Get(fiber.HeaderAcceptLanguage)))
	body.Error.Message = message
	var e *companydocs.Error
	if errors.As(err, &e) {
		body.Order = companydocs.OrderIn(said, e.Order)
		if e.RetryAfter > 0 {
			setRetryAfter(c, e.RetryAfter)
		}
		if e.Hint != "" {
			body.Error.Message += " " + messages.Say(said, "hint."+e.Hint, nil)
		}
	}
	c.Set(fiber.HeaderContentLanguage, said)
	c.Vary(fiber.HeaderAcceptLanguage)
	return c.Status(status).JSON(body)
}

// translateFiberError maps Fiber's own errors (unknown route, body too
// large, method not allowed) onto our codes.
func translateFiberError(err error) error {
	var fe *fiber.Error
	if !errors.As(err, &fe) {
		return err
	}
	switch fe.Code {
	case fiber.StatusNotFound:
		return errNoEndpoint()
	case fiber.StatusMethodNotAllowed:
		return errMethodNotAllowed()
	case fiber.StatusRequestEntityTooLarge:
		return errBodyTooLarge()
	case fiber.StatusRequestTimeout:
		return companydocs.Refusal(companydocs.ETIMEOUT, "refusal.request_timeout", nil)
	case fiber.StatusRequestHeaderFieldsTooLarge:
		return companydocs.Refusal(companydocs.ETOOLARGE, "refusal.headers_too_large", nil)
	case fiber.StatusBadRequest:
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.request_unreadable", nil)
	}
	return err
}
