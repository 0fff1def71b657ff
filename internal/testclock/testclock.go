// Package testclock is the adjustable clock the order store tests inject
// as Options.Now. It is test support only.
package testclock

import (
	"sync"
	"time"
)

// Clock is an adjustable clock, safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock at a fixed moment (14 March 2025, 09:30 UTC).
func New() *Clock { return &Clock{t: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
