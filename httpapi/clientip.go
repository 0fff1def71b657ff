package httpapi

import (
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// trustedProxies parses the configured proxy addresses and ranges
// ("10.0.0.1", "10.0.0.0/8"); entries that are neither are ignored, as
// Fiber ignores them.
func trustedProxies(list []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

// peerIsTrustedProxy says whether the socket's peer is a trusted proxy,
// whose X-Forwarded-* headers are believed.
func (s *Server) peerIsTrustedProxy(c *fiber.Ctx) bool {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	return ok && s.isTrustedProxy(peer)
}

func (s *Server) isTrustedProxy(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the address the rate limiter and the request log know a
// client by: the socket's peer, unless that peer is a trusted proxy. Then
// it is the right-most address of X-Forwarded-For that is not a trusted
// proxy itself: a proxy appends the address it saw, while everything to
// the left of that is whatever the client chose to send, and taking it
// would let a client pick a fresh rate-limit budget per request.
func (s *Server) clientIP(c *fiber.Ctx) string {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	if !ok {
		return c.Context().RemoteIP().String()
	}
	peer = peer.Unmap()
	if !s.isTrustedProxy(peer) {
		return peer.String()
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // not an address: nothing left of it can be believed
		}
		if !s.isTrustedProxy(a) {
			return a.Unmap().String()
		}
	}
	return peer.String()
}
