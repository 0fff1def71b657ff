package webhook

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"

	"companydocs"
)

// Resolver looks up the addresses of a host name (net.Resolver does).
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy says which receivers may be reached. The zero value is the
// strict default: https only, public addresses only.
type Policy struct {
	// AllowHTTP accepts http:// URLs (the body and signature then travel
	// in clear): for tests and closed networks.
	AllowHTTP bool
	// AllowPrivate accepts loopback, private, link-local and other
	// non-public addresses, which lets any account make the server send
	// requests into its own network: for tests and closed networks.
	AllowPrivate bool
	// Resolver resolves host names at registration (default
	// net.DefaultResolver); tests inject their own.
	Resolver Resolver
}

// nonGlobal lists ranges that netip's predicates do not call private but
// that are not the public internet.
var nonGlobal = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may map to a private IPv4
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

// refusal names why an address may not be dialled, "" when it may.
func (p Policy) refusal(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "an invalid address"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast():
		return "a multicast address"
	case p.AllowPrivate:
		return ""
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case !a.IsGlobalUnicast():
		return "a non-global address"
	}
	for _, p := range nonGlobal {
		if p.Contains(a) {
			return "a reserved, non-public address"
		}
	}
	return ""
}

// CheckURL applies the policy to a URL at registration: the scheme, and
// every address the host resolves to. The error is a validation_error
// that names the rule.
func (p Policy) CheckURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return companydocs.Errorf(companydocs.EVALIDATION, "The url %q is not an absolute URL.", rawURL)
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && p.AllowHTTP) {
		return companydocs.Errorf(companydocs.EVALIDATION, "Webhook URLs must use https (the url uses %q).", u.Scheme)
	}
	addrs, err := p.resolve(ctx, u.Hostname())
	if err != nil {
		return companydocs.Errorf(companydocs.EVALIDATION, "The url's host %q could not be resolved; use a host name with public DNS.", u.Hostname())
	}
	for _, a := range addrs {
		if why := p.refusal(a); why != "" {
			return companydocs.Errorf(companydocs.EVALIDATION, "The url's host %q resolves to %s, %s; webhooks are sent only to public internet addresses.", u.Hostname(), a, why)
		}
	}
	return nil
}

func (p Policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	r := p.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no address")
	}
	return addrs, err
}

// control is the net.Dialer.Control hook: it runs on the address about
// to be dialled, after any DNS lookup, so a name that resolved to a
// public address at registration and to a private one now is refused.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to dial %s: not an IP address", address)
	}
	if why := p.refusal(ap.Addr()); why != "" {
		return fmt.Errorf("refused to dial %s: %s", ap.Addr(), why)
	}
	return nil
}
