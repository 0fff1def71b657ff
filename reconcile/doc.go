// Package reconcile speaks the W3C Reconciliation Service API, version
// 0.2 (https://reconciliation-api.github.io/specs/0.2/), the version
// OpenRefine 3.x speaks: the service manifest, reconciliation query and
// result batches, entity and property suggest, the HTML preview card and
// data extension with property proposals. It owns those shapes and their
// mapping onto the resolver (a reconciliation query is a resolver.Request
// with Properties) and onto company profiles; the HTTP routes, CORS and
// the rate limit live in httpapi.
//
// A candidate's match is true only where the resolver labels it exact and
// it is ordering eligible: a client that accepts matches automatically
// accepts only what could be ordered as it is.
package reconcile
