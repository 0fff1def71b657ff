package httpapi

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of a lingering close: how long and how much of what a client
// still sends is read and dropped after the answer.
const (
	lingerTime  = 2 * time.Second
	lingerBytes = 32 << 20
)

// lingerListener makes closing a connection a lingering close. The HTTP
// server refuses a body over the limit as soon as it has read the headers,
// answers 413 and closes the connection; a plain close with the rest of
// the body still unread makes the kernel reset the connection, and the
// client, still writing, gets "connection reset" instead of the answer.
// Closing the writing side first and draining the reading side (bounded
// in time and bytes) lets the client read the 413.
//
// On shutdown nothing lingers, and connections that never sent a byte are
// closed at once: the HTTP server would otherwise wait seconds for them to
// count as idle, and a client's spare keep-alive dials would hold up the
// shutdown.
type lingerListener struct {
	net.Listener
	shutting atomic.Bool
	mu       sync.Mutex
	conns    map[*lingerConn]struct{}
}

func newLingerListener(ln net.Listener) *lingerListener {
	return &lingerListener{Listener: ln, conns: map[*lingerConn]struct{}{}}
}

func (l *lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	lc := &lingerConn{TCPConn: tc, parent: l}
	l.mu.Lock()
	l.conns[lc] = struct{}{}
	l.mu.Unlock()
	if l.shutting.Load() {
		lc.Close()
	}
	return lc, nil
}

// shutdown stops lingering and closes the connections that never sent a
// request.
func (l *lingerListener) shutdown() {
	l.shutting.Store(true)
	l.mu.Lock()
	var unused []*lingerConn
	for c := range l.conns {
		if !c.used.Load() {
			unused = append(unused, c)
		}
	}
	l.mu.Unlock()
	for _, c := range unused {
		c.Close()
	}
}

func (l *lingerListener) forget(c *lingerConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// lingerConn is a TCP connection whose Close lingers in the background.
type lingerConn struct {
	*net.TCPConn
	parent *lingerListener
	used   atomic.Bool
	once   sync.Once
}

func (c *lingerConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		c.used.Store(true)
	}
	return n, err
}

func (c *lingerConn) Close() error {
	var err error
	c.once.Do(func() {
		c.parent.forget(c)
		if c.parent.shutting.Load() {
			err = c.TCPConn.Close()
			return
		}
		if err = c.TCPConn.CloseWrite(); err != nil {
			err = c.TCPConn.Close()
			return
		}
		go c.drain()
	})
	return err
}

// drain reads what the client still sends until it closes its side, the
// time is up or the byte bound is reached, then closes the connection.
func (c *lingerConn) drain() {
	c.TCPConn.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, c.TCPConn, lingerBytes)
	c.TCPConn.Close()
}
