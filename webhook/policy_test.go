package webhook

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"companydocs"
)

// fakeDNS resolves names from a table, as a hostile DNS server would.
type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

func TestCheckURL(t *testing.T) {
	dns := fakeDNS{
		"hooks.example":   addrs("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"),
		"inside.example":  addrs("10.0.0.5"),
		"mixed.example":   addrs("93.184.216.34", "127.0.0.1"),
		"metadata.google": addrs("169.254.169.254"),
		"v6local.example": addrs("fe80::1"),
		"nat64.example":   addrs("64:ff9b::a00:1"),
	}
	strict := Policy{Resolver: dns}
	open := Policy{Resolver: dns, AllowHTTP: true, AllowPrivate: true}
	for _, c := range []struct {
		url    string
		policy Policy
		rule   string // "" when accepted
	}{
		{"https://hooks.example/in", strict, ""},
		{"https://93.184.216.34:8443/in", strict, ""},
		{"http://hooks.example/in", strict, "https"},
		{"http://hooks.example/in", open, ""},
		{"https://127.0.0.1/", strict, "loopback"},
		{"https://127.0.0.1/", open, ""},
		{"https://10.0.0.1/", strict, "private"},
		{"https://172.16.5.4/", strict, "private"},
		{"https://192.168.1.1/", strict, "private"},
		{"https://169.254.169.254/latest/meta-data", strict, "link-local"},
		{"https://[::1]/", strict, "loopback"},
		{"https://[fd00::1]/", strict, "private"},
		{"https://[::ffff:10.0.0.1]/", strict, "private"},
		{"https://0.0.0.0/", strict, "unspecified"},
		{"https://0.0.0.0/", open, "unspecified"},
		{"https://[ff02::1]/", strict, "multicast"},
		{"https://100.64.1.1/", strict, "non-public"},
		{"https://192.0.2.10/", strict, "non-public"},
		{"https://inside.example/", strict, "private"},
		{"https://mixed.example/", strict, "loopback"},
		{"https://metadata.google/", strict, "link-local"},
		{"https://v6local.example/", strict, "link-local"},
		{"https://nat64.example/", strict, "NAT64 address carrying 10.0.0.1, a private"},
		{"https://unknown.example/", strict, "resolved"},
		{"https://localhost/", Policy{}, "loopback"}, // the system resolver
	} {
		err := c.policy.CheckURL(context.Background(), c.url)
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.url, err)
		case c.rule != "" && (companydocs.ErrorCode(err) != companydocs.EVALIDATION || !strings.Contains(err.Error(), c.rule)):
			t.Errorf("%s: %v, want validation_error naming %q", c.url, err, c.rule)
		}
	}
}

// TestIPv6CarryingIPv4: the IPv6 forms that carry an IPv4 address are
// judged by it (each form with a private or loopback and a public one),
// and the discard prefix is refused whatever the flags.
func TestIPv6CarryingIPv4(t *testing.T) {
	strict := Policy{}
	open := Policy{AllowHTTP: true, AllowPrivate: true}
	for _, c := range []struct {
		name, host string
		policy     Policy
		rule       string // "" when accepted
	}{
		{"IPv4-mapped, loopback", "::ffff:127.0.0.1", strict, "loopback"},
		{"IPv4-mapped, public", "::ffff:93.184.216.34", strict, ""},
		{"IPv4-compatible, loopback", "::127.0.0.1", strict, "IPv4-compatible address carrying 127.0.0.1, a loopback address"},
		{"IPv4-compatible, private", "::10.1.2.3", strict, "carrying 10.1.2.3, a private address"},
		{"IPv4-compatible, public", "::93.184.216.34", strict, ""},
		{"IPv4-compatible, loopback, allow-private", "::127.0.0.1", open, ""},
		{"IPv4-translated, loopback", "::ffff:0:127.0.0.1", strict, "IPv4-translated address carrying 127.0.0.1, a loopback address"},
		{"IPv4-translated, link-local", "::ffff:0:169.254.169.254", strict, "carrying 169.254.169.254, a link-local address"},
		{"IPv4-translated, public", "::ffff:0:93.184.216.34", strict, ""},
		{"NAT64, private", "64:ff9b::192.168.1.1", strict, "NAT64 address carrying 192.168.1.1, a private address"},
		{"NAT64, public", "64:ff9b::93.184.216.34", strict, ""},
		{"local-use NAT64", "64:ff9b:1::5db8:d822", strict, "non-public"},
		{"local-use NAT64, allow-private", "64:ff9b:1::5db8:d822", open, ""},
		{"6to4, loopback", "2002:7f00:1::", strict, "6to4 address carrying 127.0.0.1, a loopback address"},
		{"6to4, CGNAT", "2002:6440:1::1", strict, "carrying 100.64.0.1, a reserved, non-public address"},
		{"6to4, public", "2002:5db8:d822::1", strict, ""},
		{"6to4, multicast, allow-private", "2002:e000:1::", open, "carrying 224.0.0.1, a multicast address"},
		{"Teredo, loopback client", "2001:0:4136:e378:8000:63bf:80ff:fffe", strict, "Teredo address carrying 127.0.0.1, a loopback address"},
		{"Teredo, private server", "2001:0:a00:1:8000:63bf:a247:27dd", strict, "Teredo address carrying 10.0.0.1, a private address"},
		{"Teredo, public server and client", "2001:0:4136:e378:8000:63bf:a247:27dd", strict, ""},
		{"discard prefix", "100::1", strict, "discard prefix 100::/64"},
		{"discard prefix, allow-private", "100::1", open, "discard prefix 100::/64"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.policy.CheckURL(context.Background(), "https://["+c.host+"]/hook")
			switch {
			case c.rule == "" && err != nil:
				t.Errorf("%s: %v, want accepted", c.host, err)
			case c.rule != "" && (companydocs.ErrorCode(err) != companydocs.EVALIDATION || !strings.Contains(err.Error(), c.rule)):
				t.Errorf("%s: %v, want validation_error naming %q", c.host, err, c.rule)
			}
			err = c.policy.control("tcp", "["+c.host+"]:443", nil)
			if (c.rule == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.rule) {
				t.Errorf("dialling %s: %v, want %q", c.host, err, c.rule)
			}
		})
	}
}

// TestControlChecksTheDialledAddress: the dial hook sees the resolved
// address, whatever name led there.
func TestControlChecksTheDialledAddress(t *testing.T) {
	strict := Policy{}
	for addr, want := range map[string]string{
		"127.0.0.1:443":           "loopback",
		"10.9.8.7:443":            "private",
		"169.254.169.254:80":      "link-local",
		"[::1]:443":               "loopback",
		"[::ffff:192.168.0.1]:80": "private",
		"93.184.216.34:443":       "",
	} {
		err := strict.control("tcp", addr, nil)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", addr, err, want)
		}
	}
	if err := (Policy{AllowPrivate: true}).control("tcp", "127.0.0.1:443", nil); err != nil {
		t.Errorf("--webhook-allow-private: %v", err)
	}
}

// TestRetrySchedule: delays double from the base with jitter in the
// upper half, are capped, and the delivery fails after RetryFor.
func TestRetrySchedule(t *testing.T) {
	d := New(nil, Options{})
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at, attempts := created, 0
	for {
		attempts++
		state, next, outcome := d.retry(companydocs.WebhookTask{Attempt: attempts, CreatedAt: created}, at)
		if state == companydocs.DeliveryFailed {
			if outcome != OutcomeFailed || at.Sub(created) < RetryFor-RetryMaxDelay {
				t.Errorf("failed after %d attempts at %s", attempts, at.Sub(created))
			}
			break
		}
		full := min(RetryBase<<(attempts-1), RetryMaxDelay)
		if delay := next.Sub(at); delay < full/2 || delay > full {
			t.Errorf("attempt %d: delay %s, want within [%s, %s]", attempts, delay, full/2, full)
		}
		at = next
	}
	if attempts < 10 || attempts > 25 {
		t.Errorf("%d attempts in %s", attempts, RetryFor)
	}
	t.Logf("%d attempts over %s", attempts, at.Sub(created))
}
