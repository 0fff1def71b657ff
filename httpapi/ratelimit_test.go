package httpapi

import (
	"fmt"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestLimiter(perSecond float64, burst int) (*rateLimiter, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newRateLimiter(perSecond, burst, nil)
	l.now = clock.now
	return l, clock
}

func TestRateLimiterBurstThenRate(t *testing.T) {
	l, clock := newTestLimiter(2, 3)
	for i := range 3 {
		if ok, _ := l.allowN("192.0.2.1", 1); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := l.allowN("192.0.2.1", 1)
	if ok || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("fourth request: allowed %v, wait %v; want refused with a wait of at most 1/rate", ok, wait)
	}
	if ok, _ := l.allowN("192.0.2.2", 1); !ok {
		t.Fatal("another address is refused: the budget is per address")
	}
	clock.advance(wait)
	if ok, _ := l.allowN("192.0.2.1", 1); !ok {
		t.Fatal("refused after waiting the announced time")
	}
	if ok, _ := l.allowN("192.0.2.1", 1); ok {
		t.Fatal("a refused request must not have used a token: only one had refilled")
	}
}

func TestRateLimiterForgetsIdleAddresses(t *testing.T) {
	l, clock := newTestLimiter(1, 1)
	for i := range 1000 {
		l.allowN(fmt.Sprintf("198.51.100.%d:%d", i%256, i), 1)
	}
	if n := l.size(); n != 1000 {
		t.Fatalf("%d addresses tracked, want 1000", n)
	}
	clock.advance(clientIdle / 2)
	l.allowN("203.0.113.1", 1) // seen recently from here on
	clock.advance(clientIdle/2 + time.Minute + time.Second)
	l.allowN("203.0.113.2", 1) // triggers a sweep
	if n := l.size(); n != 2 {
		t.Fatalf("%d addresses tracked after the idle time, want the 2 recent ones", n)
	}
	// A forgotten address starts again with a full burst.
	if ok, _ := l.allowN("198.51.100.1:1", 1); !ok {
		t.Fatal("a forgotten address is refused")
	}
}

func TestRateLimiterTableIsBounded(t *testing.T) {
	l, clock := newTestLimiter(1, 1)
	for i := range maxClients + 10 {
		l.allowN(fmt.Sprintf("a%d", i), 1)
		if i%1000 == 0 {
			clock.advance(time.Millisecond)
		}
	}
	if n := l.size(); n > maxClients {
		t.Fatalf("%d addresses tracked, bound is %d", n, maxClients)
	}
}

func TestRateLimiterOff(t *testing.T) {
	if l := newRateLimiter(0, 10, nil); l != nil {
		t.Fatal("a rate of 0 must turn the limiter off")
	}
}

// size is the number of client addresses the limiter remembers.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// TestRateLimitSharedByNodes: two nodes, each with its own limiter and
// the metastore's count of two live nodes, grant an address its rate
// once, not twice, when a load balancer spreads its requests over both;
// alone again, a node grants the whole rate to the addresses it already
// knows.
func TestRateLimitSharedByNodes(t *testing.T) {
	const rate, burst, seconds = 10, 20, 30
	share := new(NodeShare)
	share.SetNodes(2)
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	nodes := []*rateLimiter{newRateLimiter(rate, burst, share), newRateLimiter(rate, burst, share)}
	for _, l := range nodes {
		l.now = clock.now
	}
	granted := 0
	for i := range seconds * 100 { // 100 requests a second, taking turns
		if ok, _ := nodes[i%2].allowN("192.0.2.7", 1); ok {
			granted++
		}
		clock.advance(10 * time.Millisecond)
	}
	if most := rate*seconds + burst; granted > most || granted < most-2*burst {
		t.Fatalf("two nodes granted %d searches in %d s; want at most the rate's %d plus the burst %d, and about that", granted, seconds, rate*seconds, burst)
	}

	t.Logf("two nodes granted %d searches in %d s", granted, seconds)
	share.SetNodes(1)
	clock.advance(time.Minute) // both buckets full again
	granted = 0
	for range seconds * 100 {
		if ok, _ := nodes[0].allowN("192.0.2.7", 1); ok {
			granted++
		}
		clock.advance(10 * time.Millisecond)
	}
	t.Logf("a node alone granted %d searches in %d s", granted, seconds)
	// The bucket kept the tokens it held, the half burst of a node of two.
	if want := rate*seconds + burst/2; granted < want-2 || granted > want {
		t.Fatalf("a node alone granted %d searches in %d s; want its whole rate, %d with the tokens it held", granted, seconds, want)
	}
}
