// Package webhook delivers order events to the endpoints accounts
// register, following Standard Webhooks 1.0: a POST of
// {"type","timestamp","data"} with the headers webhook-id (the event id,
// the same on every retry), webhook-timestamp (unix seconds of the
// attempt) and webhook-signature ("v1," and the base64 HMAC-SHA256 of
// id.timestamp.body, keyed with the base64 part of the endpoint's
// "whsec_" secret), signed with the Standard Webhooks library.
//
// It is the only package that sends webhooks: the endpoints, the outbox and
// the deliveries are ordering's (its Webhooks service: endpoints.go and
// fanout.go), their types the root package's (webhookdelivery.go).
//
// The Dispatcher owns no storage: its Store (the ordering service, wired
// by cmd/companydocs) fans outbox events out into per-endpoint deliveries
// in one transaction, hands out due deliveries and records each attempt.
// Delivery is at least once: an attempt that was made but not recorded
// (a kill in between) is made again after the restart.
//
// Isolation: at most one attempt per endpoint is in flight, a bounded
// pool of workers makes them, each within Options.Timeout, and the due
// deliveries of idle endpoints are picked first by due time, so a slow or
// dead receiver holds one worker at a time and never the API or another
// endpoint. Redirects are not followed (a 3xx is a failure).
//
// Bounds: a receiver is a stranger, so what an attempt reads from it is
// capped. One deadline, Options.Timeout (--webhook-timeout, 10 s),
// covers the whole attempt: dialling, the TLS handshake, sending, the
// headers and the body, so a receiver trickling a byte a second is cut
// off there. The client speaks HTTP/1.1 only and reads at most
// maxResponseHeader (4 KiB) of status line and headers, 1xx answers
// included (an answer with more is a failed attempt saying so, retried
// like any other), and at most maxResponseRead (4 KiB) of the body
// (thrown away; a longer body closes the connection). At most
// Options.Workers (--webhook-workers, 64) attempts are in flight, and at
// most that many idle connections are kept. An attempt holds its
// signed body (the order, a few KiB), 8 KiB of connection buffers, the
// 4 KiB of headers, a TLS connection (records of up to 16 KiB, and a
// server certificate message that crypto/tls caps at 256 KiB, the
// largest share, and parses) and three goroutines: well under 1 MiB at
// worst, so the attempts in flight hold at most 64 x 1 MiB = 64 MiB
// whatever the receivers send (a plain-http attempt, about 32 KiB).
//
// SSRF: Policy refuses non-https URLs and hosts that resolve to
// loopback, private, link-local, multicast, unspecified or other
// non-global addresses, at registration (CheckURL) and again on the
// address actually dialled (net.Dialer.Control), so a name that resolves
// differently later (DNS rebinding) cannot reach the inside. IPv6 forms
// that carry an IPv4 address are judged by the IPv4 address they carry,
// by the same rules: IPv4-mapped (::ffff:0:0/96), IPv4-compatible
// (::/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96) and
// 6to4 (2002::/16, bits 16 to 48); Teredo (2001::/32) by both the
// server's address (bits 32 to 64) and the client's (the last 32 bits,
// inverted). So [::127.0.0.1] and [2002:7f00:1::] are loopback, and
// without --webhook-allow-private such an address is accepted only when
// the IPv4 address it carries is public. The local-use NAT64 prefix
// 64:ff9b:1::/48 is non-public, and the discard prefix 100::/64 is
// refused even with --webhook-allow-private. No proxy from the
// environment is used, since it would dial in our place.
package webhook
