// Package webhook delivers order events to the endpoints accounts
// register, following Standard Webhooks 1.0: a POST of
// {"type","timestamp","data"} with the headers webhook-id (the event id,
// the same on every retry), webhook-timestamp (unix seconds of the
// attempt) and webhook-signature ("v1," and the base64 HMAC-SHA256 of
// id.timestamp.body, keyed with the base64 part of the endpoint's
// "whsec_" secret), signed with the Standard Webhooks library.
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
// SSRF: Policy refuses non-https URLs and hosts that resolve to
// loopback, private, link-local, multicast, unspecified or other
// non-global addresses, at registration (CheckURL) and again on the
// address actually dialled (net.Dialer.Control), so a name that resolves
// differently later (DNS rebinding) cannot reach the inside. No proxy
// from the environment is used, since it would dial in our place.
package webhook
