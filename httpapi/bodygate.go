package httpapi

import (
	"errors"
	"io"
	"mime"
	"strings"
	"time"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// The body gate: every request passes it before routing and
// authentication (gateBody). What a route takes as its body is said once,
// in bodyRuleOf; the gate refuses by the headers alone, before a byte of
// the body is read:
//   - a multipart body on any route (415): nothing here takes one, and the
//     HTTP server parses none (fiber.Config.DisablePreParseMultipartForm);
//   - a compressed body (415): Fiber's c.Body would inflate it without a
//     bound, so a 64 KiB body could become gigabytes;
//   - a media type the route does not take (415);
//   - a body on a route that takes none, and a Content-Length over the
//     route's cap (413).
// Then it reads the body up to the cap (a chunked one is cut as soon as it
// passes it), except the upload's, which its handler streams after the
// session and the order are checked.

// bodyRule is what a route takes as its body.
type bodyRule struct {
	// types are the media types taken; none: no body at all. A JSON
	// route takes a body without Content-Type too, so that curl
	// one-liners work.
	types []string
	// limit bounds the body in bytes.
	limit int
	// streamed bodies are read by their handler: the upload's after the
	// session and the order, the search batch's after its slots
	// (admitBatch).
	streamed bool
	// refusal is the sentence for another media type.
	refusal string
	// namesLimit: a body over limit is refused with a sentence naming
	// limit, this route's own cap; refusal.body_too_large names those of
	// the JSON routes, the search batch and the upload.
	namesLimit bool
	// answerTimeout, when set, bounds the writing of the answer in place
	// of Config.WriteTimeout (a search batch's, written as it is resolved).
	answerTimeout time.Duration
}

// Media types the routes take.
const (
	mediaJSON = "application/json"
	mediaForm = "application/x-www-form-urlencoded"
	mediaPDF  = "application/pdf"
)

// bodyRuleOf says what the route of method and path takes. Paths that are
// no route get a JSON route's cap and any media type but multipart, so
// that they are answered 404 or 405, not 415.
func (s *Server) bodyRuleOf(method, path string) bodyRule {
	path = strings.ToLower(strings.TrimSuffix(path, "/"))
	json := bodyRule{types: []string{mediaJSON}, limit: s.config.BodyLimit, refusal: "refusal.body_not_json_type"}
	switch {
	case method == fiber.MethodGet || method == fiber.MethodHead || method == fiber.MethodDelete || method == fiber.MethodOptions:
		return bodyRule{}
	case method == fiber.MethodPut && uploadPath.MatchString(path):
		return bodyRule{types: []string{mediaPDF}, limit: MaxUploadSize, streamed: true, refusal: "refusal.upload_content_type"}
	case method == fiber.MethodPost && path == routeSearchBatch:
		json.limit, json.streamed, json.answerTimeout = max(json.limit, BatchBodyLimit), true, s.batchAnswerTimeout()
		return json
	case method == fiber.MethodPost && path == routePaymentEvents:
		json.limit, json.namesLimit = PaymentEventBodyLimit, true
		return json
	case method == fiber.MethodPost && path == routeReconcile:
		return bodyRule{types: []string{mediaForm}, limit: s.config.BodyLimit, refusal: "refusal.body_not_form_type"}
	case method == fiber.MethodPost && strings.HasPrefix(path, "/api/v1/"):
		return json
	}
	return bodyRule{types: nil, limit: s.config.BodyLimit}
}

// takesAny reports whether a rule takes a body of any media type (a path
// that is no route).
func (r bodyRule) takesAny() bool { return r.types == nil && r.limit > 0 }

// gateBody holds every request to its route's bodyRule and reads the body
// (see the package's body gate above).
func (s *Server) gateBody(c *fiber.Ctx) error {
	rule := s.bodyRuleOf(c.Method(), c.Path())
	if err := rule.check(&c.Request().Header); err != nil {
		c.Context().SetConnectionClose() // the body, unread, is no next request
		return err
	}
	if rule.streamed {
		return c.Next()
	}
	if err := rule.read(c); err != nil {
		return err
	}
	return c.Next()
}

// readBody reads c's streamed body, at most limit bytes, into the request
// (c.Body), refusing a longer one; then the connection is closed.
func readBody(c *fiber.Ctx, limit int) error {
	return bodyRule{limit: limit}.read(c)
}

// read reads c's streamed body, at most r.limit bytes, into the request
// (c.Body), refusing a longer one (r.errTooLarge); then the connection is
// closed.
func (r bodyRule) read(c *fiber.Ctx) error {
	stream := c.Context().RequestBodyStream()
	if stream == nil {
		return nil
	}
	body, err := readBounded(&requestBody{r: stream}, c.Request().Header.ContentLength(), r.limit)
	if errors.Is(err, errOverLimit) {
		err = r.errTooLarge()
	}
	if err != nil {
		c.Context().SetConnectionClose()
		return err
	}
	c.Request().SetBodyRaw(body)
	return nil
}

// check judges a request's headers by the rule.
func (r bodyRule) check(h *fasthttp.RequestHeader) error {
	if enc := strings.TrimSpace(string(h.Peek(fiber.HeaderContentEncoding))); enc != "" && !strings.EqualFold(enc, "identity") {
		return companydocs.Refusal(companydocs.EUNSUPPORTEDMEDIA, "refusal.body_encoded", companydocs.Args{"encoding": companydocs.Shorten(enc, 40)})
	}
	ct := string(h.ContentType())
	media, _, err := mime.ParseMediaType(ct)
	if ct != "" && err == nil && strings.HasPrefix(media, "multipart/") {
		return companydocs.Refusal(companydocs.EUNSUPPORTEDMEDIA, "refusal.body_multipart", nil)
	}
	n := h.ContentLength() // -1: chunked, its length unknown; -2: none (a GET)
	switch {
	case n == 0 || n == -2:
		return nil
	case r.limit == 0:
		return companydocs.Refusal(companydocs.ETOOLARGE, "refusal.body_not_taken", nil)
	case n > r.limit:
		return r.tooLarge(n)
	case r.takesAny() || (ct == "" && r.types[0] == mediaJSON):
		return nil
	case err != nil || !r.takes(media):
		return companydocs.Refusal(companydocs.EUNSUPPORTEDMEDIA, r.refusal, companydocs.Args{"content_type": companydocs.Shorten(ct, 60)})
	}
	return nil
}

// takes reports whether the rule takes media; JSON routes take every
// +json type too.
func (r bodyRule) takes(media string) bool {
	for _, t := range r.types {
		if media == t || (t == mediaJSON && strings.HasSuffix(media, "+json")) {
			return true
		}
	}
	return false
}

func (r bodyRule) tooLarge(n int) error {
	if r.streamed {
		return companydocs.Refusal(companydocs.ETOOLARGE, "refusal.upload_too_large", companydocs.Args{"size": n, "max_bytes": r.limit})
	}
	return r.errTooLarge()
}

// errTooLarge is the refusal of a body over the rule's limit.
func (r bodyRule) errTooLarge() error {
	if r.namesLimit {
		return companydocs.Refusal(companydocs.ETOOLARGE, "refusal.body_over_route_limit", companydocs.Args{"max": companydocs.SizeText(r.limit)})
	}
	return errBodyTooLarge()
}

// errOverLimit: readBounded met a body over its limit; its reader says
// which refusal that is.
var errOverLimit = errors.New("the body is over its limit")

// readBounded reads a body of length n (-1: chunked, length unknown) of
// at most limit bytes; a longer one is errOverLimit.
func readBounded(r io.Reader, n, limit int) ([]byte, error) {
	if n > limit {
		return nil, errOverLimit
	}
	if n >= 0 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, companydocs.Refusal(companydocs.EVALIDATION, "refusal.body_short", nil)
		} else if err != nil {
			return nil, err
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err == nil && len(body) > limit {
		err = errOverLimit
	}
	return body, err
}

func errBodyTooLarge() error {
	return companydocs.Refusal(companydocs.ETOOLARGE, "refusal.body_too_large", nil)
}
