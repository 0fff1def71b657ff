// Package httpapi serves the HTTP API with Fiber. It is the only importer of
// Fiber: the routes table, the handlers, the mapping of error codes to HTTP
// statuses, authentication of sessions and the search rate limit live here.
package httpapi
