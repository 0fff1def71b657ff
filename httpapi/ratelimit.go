package httpapi

import (
	"crypto/sha256"
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
	limit rate.Limit
	burst int

	mu        sync.Mutex
	clients   map[string]*client
	lastSweep time.Time
	now       func() time.Time
}

type client struct {
	limiter *rate.Limiter
	seen    time.Time
}

func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	if perSecond <= 0 {
		return nil
	}
	return &rateLimiter{
		limit:   rate.Limit(perSecond),
		burst:   max(burst, 1),
		clients: map[string]*client{},
		now:     time.Now,
	}
}

// allowN takes n tokens for addr, one per search of a batch. The batch is
// admitted when the bucket holds min(n, burst) tokens now, and it is
// charged all n: what lies beyond the burst is borrowed from the refill,
// so the address's next search waits until the whole batch is paid for
// (a batch of n costs n/rate seconds, as n single searches do). Refused,
// it takes nothing and returns how long to wait.
func (l *rateLimiter) allowN(addr string, n int) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.sweep(now)
	c, ok := l.clients[addr]
	if !ok {
		c = &client{limiter: rate.NewLimiter(l.limit, l.burst)}
		// A copy: the caller's string may share a buffer that the next
		// request overwrites, and a map key must never change.
		l.clients[strings.Clone(addr)] = c
	}
	c.seen = now
	first := min(n, l.burst)
	r := c.limiter.ReserveN(now, first)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	for left := n - first; left > 0; left -= l.burst {
		c.limiter.ReserveN(now, min(left, l.burst)) // borrowed: delays the next search
	}
	return true, 0
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

// limitSearches charges n searches (a batch's items) to the client
// address's search budget, answering rate_limited with Retry-After when
// the budget cannot cover them (allowN). Routes that resolve several
// queries in one request (the batch, reconciliation) call it once they
// know n.
func (s *Server) limitSearches(c *fiber.Ctx, n int) error {
	if err := throttleN(c, s.limiter, s.clientIP(c), n, "refusal.too_many_searches"); err != nil {
		s.Metrics.ObserveRateLimited()
		return err
	}
	return nil
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
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(secs))
	return companydocs.Refusal(companydocs.ERATELIMITED, key, companydocs.Args{"seconds": secs})
}
