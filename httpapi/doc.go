// Package httpapi serves the HTTP API with Fiber. It is the only importer of
// Fiber: the routes table, the handlers, the mapping of error codes to HTTP
// statuses, authentication of sessions and the search rate limit live here.
//
// # Bodies and documents
//
// Request bodies are streamed (fasthttp's StreamRequestBody) and pass one
// gate (bodygate.go) before routing and authentication: from the headers
// alone, a multipart body (parsed nowhere: DisablePreParseMultipartForm),
// a compressed one, or a media type the route does not take is refused
// 415, a body on a GET or DELETE or a Content-Length over the route's cap
// 413, before a byte of the body is read (the HeaderReceived hook gives
// such a body a few milliseconds to arrive, then answers the refusal).
// The gate then reads every body but the upload's into memory up to its
// cap (Config.BodyLimit, 64 KiB; BatchBodyLimit for the search batch),
// cutting a chunked body as soon as it passes it, so that no handler's
// c.Body reads an unbounded stream. The upload route (PUT
// /api/v1/operator/orders/{id}/document) authenticates, checks the role
// and the order's state (Orders.CheckDelivery) and takes a slot of
// Config.UploadsInFlight (503 beyond) before its body is read; the body
// is handed to Orders.Deliver as a reader, and the connection is closed
// after the answer, since a refused body was never read. Worst cases:
// before authentication, 8 KiB of body and the connection's buffers per
// connection; uploads in flight, their copy buffers (32 KiB each) and
// UploadsInFlight temporary files of at most 20 MiB on disk.
//
// Downloads are streamed from the reader Orders.Document returns, and
// bounded: Config.DownloadsPerAccount (429 beyond) and
// Config.DownloadsInFlight (503 beyond), both with Retry-After. A slot is
// given back when the HTTP server closes the reader: after the last
// byte, when the client went away, or when the write timeout cut a slow
// reader off. Deps.OnTransfer and OnTransferRefused feed the metrics.
//
// The access log and the metrics name the real method and path of a
// request that the HTTP server failed before any handler ran (a body
// that stopped arriving within the read timeout), which the server resets
// before its error handler sees it: requestLines keeps them from
// HeaderReceived until the request was handled.
package httpapi
