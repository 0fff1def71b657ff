package httpapi

import (
	"bytes"
	"context"
	"strconv"
	"strings"

	"companydocs"
	"companydocs/messages"
	"companydocs/reconcile"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
)

// routeReconcile is the reconciliation endpoint (package reconcile).
const routeReconcile = "/api/v1/reconcile"

// routesReconcile registers the W3C Reconciliation Service API 0.2 under
// /api/v1/reconcile. Its routes are public and open to every origin
// (CORS; the 0.2 specification requires it of every endpoint of a
// service, and OpenRefine's page calls some of them from the browser),
// which no other route is. Queries, suggestions, previews and extended
// entities are charged to the request's search budget (searchBudgetOf:
// the signed-in account's or the address's), one per query or entity.
func (h reconcileHandlers) routesReconcile(api fiber.Router) {
	s := h.s
	r := api.Group("/reconcile", cors.New(cors.Config{AllowOrigins: "*", AllowMethods: "GET,POST", MaxAge: 3600}), openToEveryOrigin)
	r.Get("/", h.handleReconcile)
	r.Post("/", h.handleReconcile)
	r.Get(reconcile.PathSuggestEntity, s.limitReconcileSearch, h.handleSuggestEntity)
	r.Get(reconcile.PathSuggestProperty, h.handleSuggestProperty)
	r.Get(reconcile.PathPreview, s.limitReconcileSearch, h.handleReconcilePreview)
	r.Get(reconcile.PathProperties, h.handleProposeProperties)
}

// handleReconcile answers the endpoint: a query batch (queries=), a data
// extension query (extend=), or on a GET without either the manifest.
func (h reconcileHandlers) handleReconcile(c *fiber.Ctx) error {
	s := h.s
	queries, extend := c.FormValue("queries"), c.FormValue("extend")
	switch {
	case queries != "":
		return h.reconcileQueries(c, queries)
	case extend != "":
		return h.reconcileExtend(c, extend)
	case c.Method() == fiber.MethodGet:
		s.Metrics.ObserveReconcile("manifest", 1)
		base, fromRequest := s.publicBase(c)
		if fromRequest {
			c.Vary(varyFromRequest...)
		}
		c.Set(fiber.HeaderCacheControl, manifestCacheControl)
		return c.JSON(reconcile.NewManifest(base+routeReconcile, base+reconcileViewPath, base+"/api/v1/openapi.json", s.config.Version))
	}
	return invalidQuery("refusal.reconcile_nothing", nil)
}

// manifestCacheControl lets caches keep the manifest for five minutes,
// as the OpenAPI document: it changes with a new binary or a new
// --public-url only. Built from the request, it carries Vary for the
// headers it was built from, so that a shared cache keeps one per host.
const manifestCacheControl = "public, max-age=300"

// openToEveryOrigin says Access-Control-Allow-Origin: * on every answer
// of the group, with Origin or without: the CORS middleware says it only
// when the request has an Origin and sends no Vary: Origin when every
// origin is allowed, so a shared cache could otherwise hand an answer
// without it, kept from a request without Origin, to a browser's page.
func openToEveryOrigin(c *fiber.Ctx) error {
	c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	return c.Next()
}

// reconcileViewPath is the page's view of one profile, with {{id}}: the
// page searches its register number and shows its card (web/static
// web/static/js/search.js, showProfile).
const reconcileViewPath = "/#profile={{id}}"

// reconcileQueries answers a reconciliation query batch: each query is
// a search (package reconcile maps it), resolved as a batch is, and
// charged only when all were answered (a query the service failed fails
// the whole answer, which is then charged nothing).
func (h reconcileHandlers) reconcileQueries(c *fiber.Ctx, raw string) error {
	s := h.s
	items, err := reconcile.DecodeQueries(raw)
	if err != nil {
		s.Metrics.ObserveReconcile(companydocs.EINVALIDQUERY, 1)
		return err
	}
	release, err := s.admitBatch(c)
	if err != nil {
		return err
	}
	defer release()
	budget, err := s.searchBudgetOf(c)
	if err != nil {
		return err
	}
	if err := s.admitSearches(c, budget, len(items)); err != nil {
		return err
	}
	reqs := make([]resolver.Request, len(items))
	for i, it := range items {
		reqs[i] = it.Request
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.config.BatchTimeout)
	defer cancel()
	answers := s.SearchAll(ctx, reqs, make([]error, len(reqs)))
	out := make(map[string]reconcile.Result, len(items))
	lang := messages.Pick(c.Get(fiber.HeaderAcceptLanguage))
	for i, it := range items {
		a := answers.Results[i]
		if a.Error != nil && a.Error.Code != companydocs.EINVALIDQUERY {
			// the index is gone or too slow: say so, rather than answer
			// "no candidate" for a company that exists
			return a.Error.err
		}
		answer := reconcile.Answer(a.Result, lang)
		out[it.Key] = answer
		s.Metrics.ObserveReconcile(reconcileOutcome(a, answer.Result), 1)
	}
	budget.charge(len(items)) // every query answered: none failed by the service
	return c.JSON(out)
}

// reconcileOutcome names what a query got: a match, candidates without
// one, none, or invalid_query (its text was empty or unreadable; it is
// answered with no candidates).
func reconcileOutcome(a BatchItem, cands []reconcile.Candidate) string {
	switch {
	case a.Error != nil:
		return a.Error.Code
	case len(cands) > 0 && cands[0].Match:
		return "match"
	case len(cands) > 0:
		return "candidates"
	}
	return "none"
}

// reconcileExtend answers a data extension query from the profiles.
func (h reconcileHandlers) reconcileExtend(c *fiber.Ctx, raw string) error {
	s := h.s
	q, err := reconcile.DecodeExtend(raw)
	if err != nil {
		return err
	}
	if err := s.limitSearches(c, len(q.IDs)); err != nil {
		return err
	}
	profiles, err := s.Profiles.Profiles(c.UserContext(), q.IDs)
	if err != nil {
		return err
	}
	s.Metrics.ObserveReconcile("extend", len(q.IDs))
	return c.JSON(reconcile.Extend(q, profiles))
}

func (h reconcileHandlers) handleSuggestEntity(c *fiber.Ctx) error {
	s := h.s
	prefix := c.Query("prefix")
	cursor, err := strconv.Atoi(c.Query("cursor", "0"))
	if err != nil || cursor < 0 || cursor >= resolver.MaxLimit {
		return invalidQuery("refusal.reconcile_cursor", companydocs.Args{"max": resolver.MaxLimit - 1})
	}
	if strings.TrimSpace(prefix) == "" {
		return invalidQuery("refusal.reconcile_prefix_missing", nil)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.config.SearchTimeout)
	defer cancel()
	res, err := s.Searcher.Search(ctx, resolver.Request{Query: prefix, Completes: true, Limit: min(cursor+resolver.DefaultLimit, resolver.MaxLimit)})
	if err != nil {
		return err
	}
	s.Metrics.ObserveReconcile("suggest", 1)
	return c.JSON(reconcile.SuggestEntities(res, cursor))
}

func (h reconcileHandlers) handleSuggestProperty(c *fiber.Ctx) error {
	return c.JSON(reconcile.SuggestProperties(c.Query("prefix")))
}

func (h reconcileHandlers) handleReconcilePreview(c *fiber.Ctx) error {
	s := h.s
	id := c.Query("id")
	if id == "" {
		return invalidQuery("refusal.reconcile_id_missing", nil)
	}
	profiles, err := s.Profiles.Profiles(c.UserContext(), []string{id})
	if err != nil {
		return err
	}
	p := profiles[id]
	if p == nil {
		return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_such_profile", companydocs.Args{"profile": companydocs.Shorten(id, 60)})
	}
	var page bytes.Buffer
	if err := reconcile.Preview(&page, p); err != nil {
		return err
	}
	s.Metrics.ObserveReconcile("preview", 1)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	// the card is made to be framed by the client's page (OpenRefine)
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'; style-src 'unsafe-inline'")
	return c.Send(page.Bytes())
}

func (h reconcileHandlers) handleProposeProperties(c *fiber.Ctx) error {
	limit, err := strconv.Atoi(c.Query("limit", "0"))
	if err != nil || limit < 0 {
		return invalidQuery("refusal.reconcile_limit_value", nil)
	}
	return c.JSON(reconcile.ProposeProperties(c.Query("type"), limit))
}
