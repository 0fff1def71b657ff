package httpapi

import (
	"crypto/sha256"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"
)

// Bounds of the rate limiter's memory: at most maxClients addresses are
// tracked, and an address idle for clientIdle is forgotten.
const (
	maxClients = 100_000
	clientIdle = 10 * time.Minute
)

// rateLimiter keeps one token bucket per client address.
type rateLimiter struct {
	// limit and burst are this node's share (NodeShare) of full and
	// fullBurst, recomputed when the number of live nodes changes.
	full      rate.Limit
	fullBurst int
	share     *NodeShare // nil: alone
	nodes     int
	limit     rate.Limit
	burst     int

	mu        sync.Mutex
	clients   map[string]*client
	lastSweep time.Time
	now       func() time.Time
}

type client struct {
	limiter *rate.Limiter
	seen    time.Time
	nodes   int // the node count its limiter's rate was set for
}

func newRateLimiter(perSecond float64, burst int, share *NodeShare) *rateLimiter {
	if perSecond <= 0 {
		return nil
	}
	l := &rateLimiter{
		full:      rate.Limit(perSecond),
		fullBurst: max(burst, 1),
		share:     share,
		clients:   map[string]*client{},
		now:       time.Now,
	}
	l.nodes = share.Nodes()
	l.limit, l.burst = shareOf(l.full, l.fullBurst, l.nodes)
	return l
}

// allowN takes n tokens for addr as admitN admits and chargeN charges
// them. Refused, it takes nothing and returns how long to wait.
func (l *rateLimiter) allowN(addr string, n int) (bool, time.Duration) {
	return l.admit(addr, n, true)
}

// admitN reports whether addr's bucket holds min(n, burst) tokens now,
// taking none, or how long until it does: a batch of n searches is
// admitted so, and charged for what was answered (chargeN).
func (l *rateLimiter) admitN(addr string, n int) (bool, time.Duration) {
	return l.admit(addr, n, false)
}

func (l *rateLimiter) admit(addr string, n int, charge bool) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, now := l.client(addr)
	if wait := l.shortOf(c, now, n); wait > 0 {
		return false, wait
	}
	if charge {
		l.take(c, now, n)
	}
	return true, 0
}

// chargeN takes n tokens of addr's bucket, however many it holds: what
// lies beyond the burst is borrowed from the refill, so the address's
// next search waits until all n are paid for (n searches of a batch cost
// n/rate seconds, as n single searches do).
func (l *rateLimiter) chargeN(addr string, n int) {
	if n <= 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c, now := l.client(addr)
	l.take(c, now, n)
}

// client returns addr's bucket, made when it is new, and the time now.
// A bucket made when another number of nodes was live is set to this
// node's share now, keeping the tokens it holds up to the new burst.
func (l *rateLimiter) client(addr string) (*client, time.Time) {
	now := l.now()
	l.sweep(now)
	if n := l.share.Nodes(); n != l.nodes {
		l.nodes = n
		l.limit, l.burst = shareOf(l.full, l.fullBurst, n)
	}
	c, ok := l.clients[addr]
	if !ok {
		c = &client{limiter: rate.NewLimiter(l.limit, l.burst), nodes: l.nodes}
		// A copy: the caller's string may share a buffer that the next
		// request overwrites, and a map key must never change.
		l.clients[strings.Clone(addr)] = c
	}
	if c.nodes != l.nodes {
		c.limiter.SetLimitAt(now, l.limit)
		c.limiter.SetBurstAt(now, l.burst)
		c.nodes = l.nodes
	}
	c.seen = now
	return c, now
}

// shortOf is how long until c holds min(n, burst) tokens; 0 if it does.
func (l *rateLimiter) shortOf(c *client, now time.Time, n int) time.Duration {
	missing := float64(min(n, l.burst)) - c.limiter.TokensAt(now)
	if missing <= 0 {
		return 0
	}
	return time.Duration(missing / float64(l.limit) * float64(time.Second))
}

// take takes n tokens of c, borrowing beyond the burst.
func (l *rateLimiter) take(c *client, now time.Time, n int) {
	for left := n; left > 0; left -= l.burst {
		c.limiter.ReserveN(now, min(left, l.burst))
	}
}

// sweep forgets idle clients; when the table is full even after that, it is
// reset, which only ever errs on the side of answering.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute && len(l.clients) < maxClients {
		return
	}
	l.lastSweep = now
	for addr, c := range l.clients {
		if now.Sub(c.seen) > clientIdle {
			delete(l.clients, addr)
		}
	}
	if len(l.clients) >= maxClients {
		l.clients = map[string]*client{}
	}
}

// limitSearch answers rate_limited with Retry-After once a client address
// has used its search budget. The address is clientIP's.
func (s *Server) limitSearch(c *fiber.Ctx) error {
	if err := throttle(c, s.limiter, s.clientIP(c), "refusal.too_many_searches"); err != nil {
		s.Metrics.ObserveRateLimited()
		return err
	}
	return c.Next()
}

// accountSearchLimiter keeps the signed-in accounts' search budgets, at
// the highest search_rate of the configured plans (a client may use every
// plan, as for watch_limit) in bursts of two seconds' worth; nil when no
// plan sets one, and accounts then search at their address's rate.
func accountSearchLimiter(plans interface {
	Plans() ([]companydocs.Plan, error)
}, share *NodeShare, logger *slog.Logger) *rateLimiter {
	list, err := plans.Plans()
	if err != nil {
		if companydocs.ErrorCode(err) != companydocs.EPLANMISSING { // no plans file: no account rates
			logger.Error("reading the plans' search rate; accounts search at their address's rate", "error", err)
		}
		return nil
	}
	rate := 0.0
	for _, p := range list {
		rate = max(rate, p.SearchRate)
	}
	return newRateLimiter(rate, int(math.Ceil(2*rate)), share)
}

// searchBudget is the search budget a batch or reconciliation request
// spends: the signed-in account's, when it sends a session token and a
// plan sets a search_rate, or else the client address's.
type searchBudget struct {
	limiter *rateLimiter // nil: no limit
	id      string       // the address, or "account " and the account
	key     string       // the catalog's sentence of a refusal
}

// searchBudgetOf finds the budget of a request. A request with an
// Authorization header is the account's, at the highest search_rate of
// its plans, so that a signed-in list does not crawl at an address's
// anonymous rate; a token that authenticates no session is refused
// (unauthorized), not spent at the address's rate without a word.
func (s *Server) searchBudgetOf(c *fiber.Ctx) (searchBudget, error) {
	header := c.Get(fiber.HeaderAuthorization)
	if header == "" {
		return searchBudget{s.limiter, strings.Clone(s.clientIP(c)), "refusal.too_many_searches"}, nil
	}
	token, err := bearerToken(header)
	if err == nil {
		var account string
		if account, err = s.Sessions.Authenticate(c.UserContext(), token); err == nil {
			limiter := s.accountSearches()
			if limiter == nil {
				return searchBudget{s.limiter, strings.Clone(s.clientIP(c)), "refusal.too_many_searches"}, nil
			}
			return searchBudget{limiter, "account " + account, "refusal.too_many_account_searches"}, nil
		}
	}
	if code := companydocs.ErrorCode(err); code == companydocs.EUNAUTHORIZED {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="companydocs", error="invalid_token"`)
	}
	return searchBudget{}, err
}

// limitSearches charges n searches (the entities of a data extension)
// to the request's search budget, answering rate_limited with
// Retry-After when the budget cannot cover them (allowN).
func (s *Server) limitSearches(c *fiber.Ctx, n int) error {
	b, err := s.searchBudgetOf(c)
	if err != nil {
		return err
	}
	if err := throttleN(c, b.limiter, b.id, n, b.key); err != nil {
		s.Metrics.ObserveRateLimited()
		return err
	}
	return nil
}

// limitReconcileSearch is limitSearch for the reconciliation's
// suggestions and previews: one search of the request's budget.
func (s *Server) limitReconcileSearch(c *fiber.Ctx) error {
	if err := s.limitSearches(c, 1); err != nil {
		return err
	}
	return c.Next()
}

// admitSearches admits n searches of a batch when budget b can cover them
// (admitN), taking nothing yet: b.charge takes what was answered.
// Refused, it answers rate_limited with Retry-After.
func (s *Server) admitSearches(c *fiber.Ctx, b searchBudget, n int) error {
	if b.limiter == nil {
		return nil
	}
	if ok, wait := b.limiter.admitN(b.id, n); !ok {
		s.Metrics.ObserveRateLimited()
		return retryAfter(c, wait, b.key)
	}
	return nil
}

// charge takes n searches of the budget.
func (b searchBudget) charge(n int) {
	if b.limiter != nil {
		b.limiter.chargeN(b.id, n)
	}
}

// limitSessionAddress charges every session request, whatever its key, to
// the client address, so that guessing keys is as slow as using one.
func (s *Server) limitSessionAddress(c *fiber.Ctx) error {
	if err := throttle(c, s.sessionAddrs, s.clientIP(c), "refusal.too_many_session_requests"); err != nil {
		return err
	}
	return c.Next()
}

// limitSessionKey charges a session request to its API key (by hash: the
// limiter's table holds no secret), so that one key used from many
// addresses is bounded too.
func (s *Server) limitSessionKey(c *fiber.Ctx, apiKey string) error {
	if apiKey == "" {
		return nil // validation_error follows
	}
	sum := sha256.Sum256([]byte(apiKey))
	return throttle(c, s.sessionKeys, string(sum[:]), "refusal.too_many_sessions_per_key")
}

// limitWrites charges a change to the session's account (after
// requireSession): order creations, cancels and webhook endpoint changes
// share one budget, so that no account fills the store at the speed of
// its commits.
func (s *Server) limitWrites(c *fiber.Ctx) error {
	if err := throttle(c, s.writes, currentSession(c).account, "refusal.too_many_writes"); err != nil {
		return err
	}
	return c.Next()
}

// throttle takes a token of id's bucket in l (nil: no limit). Without one
// it sets Retry-After and returns rate_limited, said by the catalog's
// sentence key.
func throttle(c *fiber.Ctx, l *rateLimiter, id, key string) error {
	return throttleN(c, l, id, 1, key)
}

// throttleN is throttle for n tokens (allowN).
func throttleN(c *fiber.Ctx, l *rateLimiter, id string, n int, key string) error {
	if l == nil {
		return nil
	}
	ok, wait := l.allowN(id, n)
	if ok {
		return nil
	}
	return retryAfter(c, wait, key)
}

// retryAfter sets Retry-After to wait, in whole seconds (at least 1), and
// returns rate_limited, said by the catalog's sentence key.
func retryAfter(c *fiber.Ctx, wait time.Duration, key string) error {
	secs := setRetryAfter(c, wait)
	return companydocs.Refusal(companydocs.ERATELIMITED, key, companydocs.Args{"seconds": secs})
}

// setRetryAfter sets Retry-After to wait in whole seconds, at least 1,
// and returns them.
func setRetryAfter(c *fiber.Ctx, wait time.Duration) int {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return secs
}
