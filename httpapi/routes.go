package httpapi

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"time"

	"companydocs"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
)

// Searcher resolves a search request into candidates.
type Searcher interface {
	Search(ctx context.Context, req resolver.Request) (*resolver.Result, error)
}

// Profiles looks company profiles up by id, for reconciliation's preview
// and data extension.
type Profiles interface {
	// Profiles returns the profiles of ids that exist, by id.
	Profiles(ctx context.Context, ids []string) (map[string]*companydocs.Profile, error)
}

// Sessions is what the HTTP layer needs to authenticate: a session for an
// API key, the account of a session token, and the end of a session.
type Sessions interface {
	CreateSession(ctx context.Context, apiKey string) (*companydocs.Session, error)
	// Authenticate returns the account a session token belongs to.
	Authenticate(ctx context.Context, token string) (account string, err error)
	RevokeSession(ctx context.Context, token string) error
}

// Orders is what the HTTP layer needs to order: plans, previews, orders,
// their lifecycle and documents. The verified-profile gate, the roles and
// the ownership checks live behind it, not here.
type Orders interface {
	Plans() ([]companydocs.Plan, error)
	Preview(ctx context.Context, account string, req companydocs.OrderRequest) (*companydocs.Preview, error)
	CreateOrder(ctx context.Context, account string, req companydocs.OrderRequest, idempotencyKey string) (*companydocs.Order, error)
	// List lists the account's own orders, newest first.
	List(ctx context.Context, account, status, cursor string, limit int) (orders []*companydocs.Order, next string, err error)
	Order(ctx context.Context, account, id string) (*companydocs.Order, error)
	CancelOrder(ctx context.Context, account, id, note string) (*companydocs.Order, error)
	// Document opens the delivered PDF of the client's own order.
	Document(ctx context.Context, account, id string) (*companydocs.Order, io.ReadCloser, error)
	// AccountSummary shows the session's account to itself.
	AccountSummary(ctx context.Context, account string) (*companydocs.AccountSummary, error)
	// Operator side: the queue of every account, oldest first, and the
	// transitions. action is "pay", "request", "fail" (note = reason) or
	// "cancel". Each refuses a client account with forbidden.
	OperatorOrders(ctx context.Context, operator, status, cursor string, limit int) (orders []*companydocs.Order, next string, err error)
	OperatorOrder(ctx context.Context, operator, id string) (*companydocs.Order, error)
	OperatorAction(ctx context.Context, operator, id, action, note string) (*companydocs.Order, error)
	// CheckDelivery refuses, before any byte of the PDF is read, what
	// Deliver would refuse for the operator and the order (role, state).
	CheckDelivery(ctx context.Context, operator, id string) error
	// Deliver reads the PDF from pdf, at most MaxUploadSize bytes, never
	// whole into memory, and delivers the order.
	Deliver(ctx context.Context, operator, id string, pdf io.Reader) (*companydocs.Order, error)
}

// Webhooks is what the HTTP layer needs for the webhook endpoints of an
// account (clients and operators alike).
type Webhooks interface {
	CreateWebhook(ctx context.Context, account, url, description string) (*companydocs.WebhookEndpoint, error)
	Webhooks(ctx context.Context, account string) ([]companydocs.WebhookEndpoint, error)
	DeleteWebhook(ctx context.Context, account, id string) error
	WebhookDeliveries(ctx context.Context, account, id string) ([]companydocs.WebhookDelivery, error)
}

// Watches is what the HTTP layer needs for the watches of an account.
type Watches interface {
	// CreateWatch: created is false when the account watched the profile
	// already (that watch is returned).
	CreateWatch(ctx context.Context, account, profileID string) (w *companydocs.Watch, created bool, err error)
	Watches(ctx context.Context, account string) ([]companydocs.Watch, error)
	DeleteWatch(ctx context.Context, account, id string) error
}

// Payments is what the HTTP layer needs of the payment providers.
type Payments interface {
	// ApplyPaymentEvent verifies a payment provider's signed event and
	// applies it to its order; it returns what became of it.
	ApplyPaymentEvent(ctx context.Context, provider string, payload []byte, signature string) (outcome string, err error)
}

// routes registers every route of the service in one place. Paths are
// served with and without the trailing slash.
func (s *Server) routes() {
	orders := orderHandlers{s}
	webhooks := webhookHandlers{s}
	watches := watchHandlers{s}
	reconciliation := reconcileHandlers{s}
	sessions := sessionHandlers{s}
	batches := batchHandlers{s}
	s.app.Use(s.observe)
	s.app.Use(s.recoverPanics)
	s.app.Use(s.gateBody)
	s.app.Get("/healthz", s.handleHealth)
	s.app.Get("/readyz", s.handleReady)
	s.routeWeb()
	s.app.Get("/metrics", s.handleMetrics)

	api := s.app.Group("/api/v1")
	api.Get("/openapi.json", s.handleOpenAPI)
	api.Post("/documents/companies/search", s.limitSearch, s.handleSearch)
	api.Post("/documents/companies/search/batch", batches.handleSearchBatch) // charged per query
	api.Get("/documents/plans", orders.handlePlans)
	api.Get("/limits", s.handleLimits)
	api.Post("/auth/sessions", noStore, s.limitSessionAddress, sessions.handleCreateSession)
	api.Delete("/auth/sessions/current", s.requireSession, sessions.handleDeleteSession)
	api.Get("/account", s.requireSession, sessions.handleAccount)
	api.Post("/documents/orders/preview", s.requireSession, orders.handlePreview)
	api.Post("/documents/orders", s.requireSession, s.limitWrites, orders.handleCreateOrder)
	api.Get("/documents/orders", s.requireSession, orders.handleListOrders)
	api.Get("/documents/orders/:id", s.requireSession, orders.handleGetOrder)
	api.Post("/documents/orders/:id/cancel", s.requireSession, s.limitWrites, orders.handleCancelOrder)
	api.Get("/documents/orders/:id/document", s.requireSession, orders.handleDownload)
	api.Get("/operator/orders", s.requireSession, orders.handleOperatorOrders)
	api.Get("/operator/orders/:id", s.requireSession, orders.handleOperatorOrder)
	for _, action := range []string{"pay", "request", "fail", "cancel"} {
		api.Post("/operator/orders/:id/"+action, s.requireSession, orders.handleOperatorAction(action))
	}
	api.Put(routeUpload, streamBody, s.requireSession, orders.handleDeliver)
	api.Post("/webhooks", s.requireSession, s.limitWrites, webhooks.handleCreateWebhook)
	api.Get("/webhooks", s.requireSession, webhooks.handleListWebhooks)
	api.Delete("/webhooks/:id", s.requireSession, s.limitWrites, webhooks.handleDeleteWebhook)
	reconciliation.routesReconcile(api)
	api.Get("/webhooks/:id/deliveries", s.requireSession, webhooks.handleWebhookDeliveries)
	api.Post("/watches", s.requireSession, s.limitWrites, watches.handleCreateWatch)
	api.Get("/watches", s.requireSession, watches.handleListWatches)
	api.Delete("/watches/:id", s.requireSession, s.limitWrites, watches.handleDeleteWatch)
	api.Post("/payments/stripe/events", orders.handleStripeEvent) // signed by Stripe, no session
}

// recoverPanics turns a panic in a handler into an internal error instead
// of a dropped connection, and a memory fault into such a panic: the
// stores are mapped files, and a read of a page a damaged or shrunk file
// no longer holds (a SIGBUS, or a SIGSEGV past the mapping) would
// otherwise end the process. The fault setting is the goroutine's, and
// fasthttp runs the handlers behind c.Next on the goroutine that serves
// the connection, one request after the other; it is set back after
// each. Work a handler hands to another goroutine (a streamed body's
// writer) is not covered.
func (s *Server) recoverPanics(c *fiber.Ctx) (err error) {
	defer func(old bool) {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			attrs := []any{"route", c.Path(), "panic", r}
			if f, ok := r.(interface{ Addr() uintptr }); ok {
				// The runtime's message for a fault reads as a nil dereference.
				attrs = append(attrs, "fault_address", fmt.Sprintf("%#x", f.Addr()))
			}
			s.logger.Error("panic in handler", attrs...)
			err = companydocs.Refusal(companydocs.EINTERNAL, companydocs.KeyInternal, nil)
		}
	}(debug.SetPanicOnFault(true))
	return c.Next()
}

func (s *Server) handleHealth(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (s *Server) handleReady(c *fiber.Ctx) error {
	if missing := s.Ready(); len(missing) > 0 {
		return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"status": "not ready", "missing": missing,
			"version": s.config.Version, "revision": s.config.Revision})
	}
	return c.JSON(fiber.Map{"status": "ready", "time": time.Now().UTC(),
		"version": s.config.Version, "revision": s.config.Revision})
}
