package httpapi

import (
	"io"
	"net"
	"sync"
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
type lingerListener struct{ net.Listener }

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &lingerConn{TCPConn: tc}, nil
	}
	return c, nil
}

// lingerConn is a TCP connection whose Close lingers in the background.
type lingerConn struct {
	*net.TCPConn
	once sync.Once
}

func (c *lingerConn) Close() error {
	var err error
	c.once.Do(func() {
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
