package httpapi

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// ParsePublicURL checks a configured public base URL (Config.PublicURL)
// and returns it without a trailing slash: an absolute http or https URL
// with a host, and without user, query or fragment. The error says what
// is wrong, for the usage error of the flag that set it.
func ParsePublicURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("must be an absolute http or https URL: %w", errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("must be an absolute http or https URL, got %q", raw)
	case u.Host == "" || u.Opaque != "" || !validHost(u.Host):
		return "", fmt.Errorf("must name a host (https://host/...), got %q", raw)
	case u.User != nil:
		return "", fmt.Errorf("must not carry a user or password, got %q", u.Redacted())
	case u.RawQuery != "" || u.ForceQuery:
		return "", fmt.Errorf("must have no query (?...), got %q", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", fmt.Errorf("must have no fragment (#...), got %q", raw)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// publicBase is the absolute URL the service is reached at, without a
// trailing slash, for the URLs an answer hands out (the reconciliation
// manifest): Config.PublicURL when it is set. Otherwise it is built from
// the request (fromRequest): the socket's scheme and the request's Host,
// or the server's own address when Host is no host name; X-Forwarded-Proto
// and X-Forwarded-Host replace them only when the peer is a trusted
// proxy, each its right-most value (the one the proxy wrote; a proxy that
// appends keeps what the client sent on the left) and only when it reads
// as a scheme or a host. Nothing else in this package reads a request's
// scheme or host: Fiber's Protocol, Hostname and BaseURL are not used.
func (s *Server) publicBase(c *fiber.Ctx) (base string, fromRequest bool) {
	if s.publicURL != "" {
		return s.publicURL, false
	}
	scheme := "http"
	if c.Context().IsTLS() {
		scheme = "https"
	}
	host := string(c.Request().Header.Host())
	if !validHost(host) {
		host = c.Context().LocalAddr().String()
	}
	if s.peerIsTrustedProxy(c) {
		if p := strings.ToLower(lastValue(c, fiber.HeaderXForwardedProto)); p == "http" || p == "https" {
			scheme = p
		}
		if h := lastValue(c, fiber.HeaderXForwardedHost); validHost(h) {
			host = h
		}
	}
	return scheme + "://" + host, true
}

// varyFromRequest names the headers publicBase reads: an answer with URLs
// built from the request carries them in Vary.
var varyFromRequest = []string{fiber.HeaderHost, fiber.HeaderXForwardedHost, fiber.HeaderXForwardedProto}

// lastValue is the right-most value of a comma-separated request header,
// over all its lines, trimmed.
func lastValue(c *fiber.Ctx, name string) string {
	lines := c.Request().Header.PeekAll(name)
	if len(lines) == 0 {
		return ""
	}
	last := string(lines[len(lines)-1])
	return strings.TrimSpace(last[strings.LastIndexByte(last, ',')+1:])
}

// validHost accepts a host name, an IPv4 address or a bracketed IPv6
// address, each with an optional port: what may stand between "//" and
// the path of a URL handed out. Anything else (a path, a user, spaces,
// percent escapes, quotes) is not a host.
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		b := h[i]
		if !('a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || strings.IndexByte("-._:[]", b) >= 0) {
			return false
		}
	}
	u, err := url.Parse("http://" + h)
	return err == nil && u.Host == h && u.Path == "" && u.User == nil && !u.ForceQuery
}
