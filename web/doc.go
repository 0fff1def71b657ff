// Package web holds the browser page of the service: plain HTML, CSS and
// JavaScript embedded into the binary, with no build step and nothing
// loaded from other origins. The page talks only to the public JSON API
// (search, plans, sessions, preview, orders), so everything it can do a
// client can do too, and every rule (the verified-profile gate, sessions,
// rate limits) stays enforced by the service behind the API.
//
// httpapi serves the files; this package only embeds them and says what
// they are.
package web
