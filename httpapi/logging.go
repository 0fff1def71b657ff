package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"companydocs"

	"github.com/gofiber/fiber/v2"
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
	s.Metrics.observeRequest(route, method, status, code, elapsed)
	s.logRequest(c, route, method, status, code, elapsed)
	return nil
}

// handleServerError is Fiber's error handler. observe answers every error
// of the routes itself, so what reaches this comes from the HTTP server
// before any route ran (body too large, malformed request): it is
// answered, logged and counted here, under the unmatched route.
func (s *Server) handleServerError(c *fiber.Ctx, err error) error {
	setNoSniff(c)
	code := companydocs.ErrorCode(translateFiberError(err))
	herr := s.handleError(c, err)
	method, status := methodOf(c), c.Response().StatusCode()
	s.Metrics.observeRequest(unmatchedRoute, method, status, code, 0)
	s.logRequest(c, unmatchedRoute, method, status, code, 0)
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
		slog.String("method", method),
		slog.String("path", truncate(c.Path(), maxLoggedPath)),
		slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.Int("bytes", len(c.Response().Body())),
		slog.String("client", s.clientIP(c)),
	}
	if code != "" {
		attrs = append(attrs, slog.String("error_code", code))
	}
	s.logger.LogAttrs(context.Background(), level, "request", attrs...)
}

// maxLoggedPath bounds the path in a log line: a client chooses it.
const maxLoggedPath = 200

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// methodOf returns the request method as a string that outlives the
// request: Fiber's c.Method() shares a buffer that the next request on the
// connection overwrites, and metric labels are kept.
func methodOf(c *fiber.Ctx) string {
	m := c.Method()
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
