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
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64: the network's own translator
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

// discardPrefix (RFC 6666) is refused whatever the flags: traffic to it
// is thrown away, so no receiver can be there.
var discardPrefix = netip.MustParsePrefix("100::/64")

// carrier is an IPv6 form that carries IPv4 addresses: a dial to it
// reaches, through a tunnel or a translator, the IPv4 addresses it
// carries, so it is judged by them.
type carrier struct {
	prefix netip.Prefix
	name   string
	// carried returns the IPv4 addresses inside a (16 bytes).
	carried func(a [16]byte) []netip.Addr
}

// carriers are judged by the IPv4 addresses they carry. IPv4-mapped
// addresses (::ffff:0:0/96) are not among them: Unmap makes them IPv4
// before any rule is applied.
var carriers = []carrier{
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address", lastIPv4},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated address", lastIPv4},
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address", lastIPv4},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address", sixToFourIPv4},
	{netip.MustParsePrefix("2001::/32"), "a Teredo address", teredoIPv4s},
}

// lastIPv4 is the IPv4 address in the last 32 bits (RFC 4291, 6052).
func lastIPv4(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[12:16]))}
}

// sixToFourIPv4 is the IPv4 address in bits 16 to 48 (RFC 3056).
func sixToFourIPv4(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte(a[2:6]))}
}

// teredoIPv4s are the server's IPv4 address (bits 32 to 64) and the
// client's (the last 32 bits, inverted) (RFC 4380).
func teredoIPv4s(a [16]byte) []netip.Addr {
	client := [4]byte(a[12:16])
	for i := range client {
		client[i] ^= 0xff
	}
	return []netip.Addr{netip.AddrFrom4([4]byte(a[4:8])), netip.AddrFrom4(client)}
}

// refusal names why an address may not be dialled, "" when it may: the
// discard prefix always; an address by its own range; and an IPv6 form
// that carries IPv4 addresses by each of those too, so that
// [::127.0.0.1] is refused as 127.0.0.1 is.
func (p Policy) refusal(a netip.Addr) string {
	a = a.Unmap()
	if discardPrefix.Contains(a) {
		return "an address of the discard prefix " + discardPrefix.String() + ", whose traffic is dropped"
	}
	if why := p.rangeRefusal(a); why != "" {
		return why
	}
	for _, c := range carriers {
		if !c.prefix.Contains(a) {
			continue
		}
		for _, v4 := range c.carried(a.As16()) {
			if why := p.rangeRefusal(v4); why != "" {
				return fmt.Sprintf("%s carrying %s, %s", c.name, v4, why)
			}
		}
	}
	return ""
}

// rangeRefusal names why an address's own range may not be dialled.
func (p Policy) rangeRefusal(a netip.Addr) string {
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
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_url_not_url", companydocs.Args{"url": rawURL})
	}
	if u.Scheme != "https" && !(u.Scheme == "http" && p.AllowHTTP) {
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_url_not_https", companydocs.Args{"scheme": u.Scheme})
	}
	addrs, err := p.resolve(ctx, u.Hostname())
	if err != nil {
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_host_unresolved", companydocs.Args{"host": u.Hostname()})
	}
	for _, a := range addrs {
		if why := p.refusal(a); why != "" {
			return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_host_not_public", companydocs.Args{"host": u.Hostname(), "address": a, "why": why})
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
