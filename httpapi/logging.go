package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// observe is the outermost middleware: it turns a handler's error into the
// error response right away (so that the status is known here), then logs
// one line and records the metrics of the request.
//
// The log line holds the route pattern, method, path, status, duration,
// response size, client address and error code. It never holds request
// headers (Authorization carries session tokens), the query string or the
// body (POST /api/v1/auth/sessions/ carries an API key).
func (s *Server) observe(c *fiber.Ctx) error {
	start := time.Now()
	setNoSniff(c)
	err := c.Next()
	code := ""
	if err != nil {
		code = companydocs.ErrorCode(translateFiberError(err))
		if herr := s.handleError(c, err); herr != nil {
			s.logger.Error("writing the error response failed", "error", herr)
			c.Status(fiber.StatusInternalServerError)
		}
	}
	elapsed := time.Since(start)
	route, method := routeOf(c, err), methodOf(c)
	status := c.Response().StatusCode()
	observeRequest(s.Metrics, route, method, status, code, elapsed)
	s.logRequest(c, route, method, status, code, elapsed)
	return nil
}

// handleServerError is Fiber's error handler. observe answers every error
// of the routes itself, so what reaches this comes from the HTTP server
// before any route ran (body too large, malformed request): it is
// answered, logged and counted here, under the unmatched route.
func (s *Server) handleServerError(c *fiber.Ctx, err error) error {
	setNoSniff(c)
	line, ok := s.requestLines.take(c)
	if !ok {
		line = requestLine{method: methodOf(c), path: companydocs.Shorten(c.Path(), maxLoggedPath)}
	}
	if line.refused != nil {
		err = line.refused // the body did not come in refusedBodyWait: say why it was refused
	}
	code := companydocs.ErrorCode(translateFiberError(err))
	herr := s.handleError(c, err)
	status := c.Response().StatusCode()
	observeRequest(s.Metrics, unmatchedRoute, line.method, status, code, 0)
	s.logLine(c, unmatchedRoute, line, status, code, 0)
	return herr
}

// setNoSniff tells browsers to take every answer as the Content-Type it
// declares: a JSON body that echoes a client's text is never run as HTML
// or script.
func setNoSniff(c *fiber.Ctx) {
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
}

// logRequest writes the request's log line; probes and scrapes go to the
// debug level so that they do not drown the real traffic.
func (s *Server) logRequest(c *fiber.Ctx, route, method string, status int, code string, elapsed time.Duration) {
	s.logLine(c, route, requestLine{method: method, path: companydocs.Shorten(c.Path(), maxLoggedPath)}, status, code, elapsed)
}

func (s *Server) logLine(c *fiber.Ctx, route string, line requestLine, status int, code string, elapsed time.Duration) {
	level := slog.LevelInfo
	switch {
	case status >= fiber.StatusInternalServerError:
		level = slog.LevelError
	case isProbe(route):
		level = slog.LevelDebug
	}
	if !s.logger.Enabled(context.Background(), level) {
		return
	}
	attrs := []slog.Attr{
		slog.String("route", route),
		slog.String("method", line.method),
		slog.String("path", line.path),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int("bytes", bodySize(c)),
		slog.String("client", s.clientIP(c)),
	}
	if code != "" {
		attrs = append(attrs, slog.String("error_code", code))
	}
	s.logger.LogAttrs(context.Background(), level, "request", attrs...)
}

// bodySize is the size of the answer's body for the log: of a streamed
// body (a download) the Content-Length it declares, which is all that is
// known before the stream is sent. It must never ask a streamed answer
// for its Body(): fasthttp then reads the whole stream into a buffer of
// its response body pool and closes it, so a download would be held in
// memory whole (20 MiB) while a slow client reads it, its slot would be
// given back before a byte was sent, and the buffer would stay in the
// pool after the connection closed (RELIABILITY.md, "Document
// downloads").
func bodySize(c *fiber.Ctx) int {
	if resp := c.Response(); resp.IsBodyStream() {
		return resp.Header.ContentLength()
	}
	return len(c.Response().Body())
}

// maxLoggedPath bounds the path in a log line: a client chooses it.
const maxLoggedPath = 200

// methodOf returns the request method as a string that outlives the
// request: Fiber's c.Method() shares a buffer that the next request on the
// connection overwrites, and metric labels are kept.
func methodOf(c *fiber.Ctx) string {
	return knownMethod(c.Method())
}

// knownMethod returns m as a constant string, or "other".
func knownMethod(m string) string {
	for _, known := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodDelete, fiber.MethodHead,
		fiber.MethodPut, fiber.MethodPatch, fiber.MethodOptions} {
		if m == known {
			return known
		}
	}
	return "other"
}

func isProbe(route string) bool {
	return route == "/healthz" || route == "/readyz" || route == "/metrics"
}

// routeOf returns the pattern of the route that answered ("/api/v1/
// documents/orders/:id"), or unmatchedRoute when no route took the request:
// Fiber then answers 404 or 405 from behind the last middleware, whose
// route is all c.Route() knows.
func routeOf(c *fiber.Ctx, err error) string {
	var fe *fiber.Error
	if errors.As(err, &fe) && (fe.Code == fiber.StatusNotFound || fe.Code == fiber.StatusMethodNotAllowed) {
		return unmatchedRoute
	}
	r := c.Route()
	if r == nil || len(r.Handlers) == 0 || r.Path == "" {
		return unmatchedRoute
	}
	return r.Path
}

// requestLines keeps the method and path of each request whose headers
// arrived until its handler has run. When the HTTP server fails a request
// before any handler runs (a body that stops arriving within the read
// timeout while the server reads its first bytes), it resets the request
// before it calls the error handler, which would then log and count
// "GET /"; handleServerError takes the real ones from here. The key is
// the request's header, which the HTTP server hands to HeaderReceived and
// keeps in the context the error handler gets.
type requestLines struct{ m sync.Map }

// requestLine is what the log and the metrics need of a request line,
// and the body gate's refusal of the request's headers, if any.
type requestLine struct {
	method, path string
	refused      error
}

// headerReceived is the HTTP server's HeaderReceived hook: it remembers
// the request line and judges the body by its headers (bodyRule.check)
// before the HTTP server reads a byte of it. It also sets how much of a
// body the HTTP server reads before the handler runs (see uploadPrefetch):
// a body the gate refuses is given refusedBodyWait to arrive, so that a
// Content-Length over the route's cap is answered 413 at once, not after
// the read timeout; every other request keeps the server's settings.
func (s *Server) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	path := routedPath(h)
	method := knownMethod(string(h.Method()))
	rule := s.bodyRuleOf(method, path)
	line := requestLine{method: method, path: companydocs.Shorten(path, maxLoggedPath), refused: rule.check(h)}
	s.requestLines.m.Store(h, line)
	switch {
	case line.refused != nil:
		return fasthttp.RequestConfig{MaxRequestBodySize: uploadPrefetch, ReadTimeout: refusedBodyWait}
	case rule.streamed:
		return fasthttp.RequestConfig{MaxRequestBodySize: uploadPrefetch, WriteTimeout: rule.answerTimeout}
	}
	return fasthttp.RequestConfig{}
}

// routedPath is the path the router will see (Fiber routes on the URI's
// original path): of an absolute-form request line ("PUT http://host/...")
// too, which the request URI alone would not give.
func routedPath(h *fasthttp.RequestHeader) string {
	var u fasthttp.URI
	if err := u.Parse(nil, h.RequestURI()); err != nil {
		path, _, _ := strings.Cut(string(h.RequestURI()), "?")
		return path
	}
	return string(u.PathOriginal())
}

// refusedBodyWait is how long the HTTP server waits for the first bytes of
// a body the gate refuses before it gives up (handleServerError then
// answers the gate's refusal): bytes already sent are read, and the
// handler refuses them with the same words (gateBody).
const refusedBodyWait = 5 * time.Millisecond

// uploadPrefetch is the MaxRequestBodySize of an upload. With streamed
// bodies the HTTP server reads min(MaxRequestBodySize, Content-Length,
// 8 KiB) of a body before the handler runs, and waits for them; for an
// upload it waits only for its first 2 bytes (fasthttp's readBodyIdentity
// reads until it has more than this), so that a client without a session
// is answered 401 at once instead of after 8 KiB or the read timeout.
// Such a prefetch may read up to 1 KiB past a short body, which is why an
// upload's body is cut at its Content-Length and its connection closed
// after the answer (streamBody).
const uploadPrefetch = 1

// forgetAfter wraps the HTTP server's handler: once a request was
// handled, its line is not needed.
func (l *requestLines) forgetAfter(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		defer l.m.Delete(&ctx.Request.Header)
		next(ctx)
	}
}

// take returns and forgets the line of the request in c, if it is known.
func (l *requestLines) take(c *fiber.Ctx) (requestLine, bool) {
	v, ok := l.m.LoadAndDelete(&c.Context().Request.Header)
	if !ok {
		return requestLine{}, false
	}
	return v.(requestLine), true
}
