// Package httpapi serves the HTTP API with Fiber. It is the only importer of
// Fiber: the routes table, the handlers, the mapping of error codes to HTTP
// statuses, authentication of sessions and the search rate limit live here.
//
// # Bodies and documents
//
// Request bodies are streamed (fasthttp's StreamRequestBody): the HTTP
// server reads at most 8 KiB of a body before any handler runs (2 bytes
// of an upload's, see uploadPrefetch). boundBody then reads every body
// but the upload's into memory up to Config.BodyLimit (64 KiB), refusing
// a larger Content-Length before reading it and a chunked body as soon
// as it passes the limit, so that no handler's c.Body reads an unbounded
// stream. The upload route (PUT /api/v1/operator/orders/{id}/document)
// authenticates, checks the role and the order's state
// (Ordering.CheckDelivery), the Content-Length (MaxUploadSize, 20 MiB)
// and takes a slot of Config.UploadsInFlight (503 beyond) before its body
// is read; the body is handed to Ordering.Deliver as a reader, and the
// connection is closed after the answer, since a refused body was never
// read. Worst cases: before authentication, 8 KiB of body and the
// connection's buffers per connection; uploads in flight, their copy
// buffers (32 KiB each) and UploadsInFlight temporary files of at most
// 20 MiB on disk.
//
// Downloads are streamed from the reader Ordering.Document returns, and
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
