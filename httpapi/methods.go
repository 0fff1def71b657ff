package httpapi

import (
	"slices"
	"strings"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// answerUnknownMethods wraps the HTTP server's handler: Fiber answers a
// method outside fiber.DefaultMethods (PROPFIND, FOO) itself, with a
// plain-text 400 that no middleware sees, so it would be neither in the
// error shape nor logged nor counted. Such a request is answered here,
// through the error handler, as 405 method_not_allowed on a path that
// exists and 404 not_found on one that does not.
func (s *Server) answerUnknownMethods(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	known := make(map[string]bool, len(fiber.DefaultMethods))
	for _, m := range fiber.DefaultMethods {
		known[m] = true
	}
	return func(rctx *fasthttp.RequestCtx) {
		if known[string(rctx.Method())] {
			next(rctx)
			return
		}
		c := s.app.AcquireCtx(rctx)
		defer s.app.ReleaseCtx(c)
		err := errMethodNotAllowed()
		if len(s.allowedMethods(c.Path())) == 0 {
			err = errNoEndpoint()
		}
		if herr := s.handleServerError(c, err); herr != nil {
			s.logger.Error("writing the error response failed", "error", herr)
		}
	}
}

func errMethodNotAllowed() error {
	return companydocs.Refusal(companydocs.EMETHODNOTALLOWED, "refusal.method_not_allowed", nil)
}

func errNoEndpoint() error {
	return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_endpoint", nil)
}

// allowedMethods lists the methods that have a route for path, for the
// Allow header of a 405. Routes match as Fiber matches them here: case
// does not matter, a trailing slash is optional, ":name" takes one
// segment and "*" the rest.
func (s *Server) allowedMethods(path string) []string {
	var out []string
	for _, r := range s.app.GetRoutes(true) {
		if routeMatches(r.Path, path) && !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	return out
}

func routeMatches(pattern, path string) bool {
	want := strings.Split(strings.TrimSuffix(pattern, "/"), "/")
	got := strings.Split(strings.TrimSuffix(path, "/"), "/")
	for i, w := range want {
		switch {
		case w == "*":
			return true
		case i >= len(got):
			return false
		case strings.HasPrefix(w, ":"):
			if got[i] == "" {
				return false
			}
		case !strings.EqualFold(w, got[i]):
			return false
		}
	}
	return len(want) == len(got)
}
