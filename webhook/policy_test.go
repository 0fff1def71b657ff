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
		{"https://nat64.example/", strict, "non-public"},
		{"https://unknown.example/", strict, "resolved"},
		{"https://localhost/", Policy{}, "loopback"}, // the system resolver
	} {
		err := c.policy.CheckURL(context.Background(), c.url)
		switch {
		case c.rule == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.url, err)
		case c.rule != "" && (companydocs.ErrorCode(err) != companydocs.EVALIDATION || !strings.Contains(companydocs.ErrorMessage(err), c.rule)):
			t.Errorf("%s: %v, want validation_error naming %q", c.url, err, c.rule)
		}
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
