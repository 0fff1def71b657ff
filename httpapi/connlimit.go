package httpapi

import (
	"encoding/json"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"companydocs"
	"companydocs/messages"
)

// Default connection caps. A connection that sent nothing costs the
// server about 8 KiB of resident memory (RELIABILITY.md, "Resources"),
// one in a request more, for at most the read timeout, after which a
// connection that sent nothing is closed. One address may hold 64, so
// that 16 addresses are needed to fill the server.
const (
	DefaultMaxConnections        = 1024
	DefaultMaxConnectionsPerAddr = 64
)

// connRefusalWrite bounds the time spent writing the refusal to a
// connection over a cap.
const connRefusalWrite = time.Second

// connLimiter refuses connections over a cap in all or per client
// address, answering 503 service_unavailable with Retry-After in the
// error shape before it reads anything, and closes them. It counts a
// connection from Accept to Close. Trusted proxies are exempt from the
// per-address cap: their connections carry many clients.
type connLimiter struct {
	net.Listener
	conns    *slots[netip.Addr]
	exempt   func(netip.Addr) bool
	onRefuse func()
}

func newConnLimiter(ln net.Listener, total, perAddr int, exempt func(netip.Addr) bool, onRefuse func()) *connLimiter {
	return &connLimiter{Listener: ln, conns: newSlots[netip.Addr](total, perAddr, nil), exempt: exempt, onRefuse: onRefuse}
}

// Accept returns the next connection within the caps; those over a cap
// are answered and closed in the background.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteAddr(c)
		if addrFull, allFull := l.conns.take(addr, !l.exempt(addr)); !addrFull && !allFull {
			return &limitedConn{Conn: c, parent: l, addr: addr}, nil
		}
		if l.onRefuse != nil {
			l.onRefuse()
		}
		go refuseConn(c)
	}
}

func remoteAddr(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// limitedConn is a connection within the caps; Close gives its place back.
type limitedConn struct {
	net.Conn
	parent *connLimiter
	addr   netip.Addr
	once   sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.parent.conns.release(c.addr) })
	return c.Conn.Close()
}

// connRefusal is the whole answer to a connection over a cap, in English:
// it is written before the request, and its Accept-Language, is read.
var connRefusal = func() []byte {
	var e errorBody
	e.Error.Code, e.Error.Message = companydocs.EUNAVAILABLE, messages.Say(messages.English, "refusal.too_many_connections", nil)
	body, err := json.Marshal(e)
	if err != nil {
		panic(err) // two strings always marshal
	}
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Language: en\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}()

// refuseConn answers a connection over a cap without reading its request,
// then closes it (lingering, when c is a lingerConn, so that the client
// reads the answer instead of a reset).
func refuseConn(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(connRefusalWrite))
	c.Write(connRefusal)
	c.Close()
}
