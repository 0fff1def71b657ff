package httpapi

import (
	"bytes"
	"strconv"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// orderFields names the fields an order request may hold, for messages.
const orderFields = `"company_profile_id", "discovery_candidate_id", "document_type" and "plan_id"`

// listOrdersResponse is the body of GET /api/v1/documents/orders/.
type listOrdersResponse struct {
	Orders     []*companydocs.Order `json:"orders"`
	NextCursor *string              `json:"next_cursor"`
}

// handlePlans lists the deployment's plans (public).
func (h orderHandlers) handlePlans(c *fiber.Ctx) error {
	s := h.s
	plans, err := s.Orders.Plans()
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"plans": companydocs.PlansIn(sayingIn(c), plans)})
}

// handlePreview answers whether an order could be made (lenient: a
// non-orderable company is a 200 with blockers, not an error).
func (h orderHandlers) handlePreview(c *fiber.Ctx) error {
	s := h.s
	var req companydocs.OrderRequest
	if err := decodeJSON(c, &req, orderFields); err != nil {
		return err
	}
	p, err := s.Orders.Preview(c.UserContext(), currentSession(c).account, req)
	if err != nil {
		return err
	}
	return c.JSON(companydocs.PreviewIn(sayingIn(c), p))
}

// handleCreateOrder creates an order (201); duplicate_order carries the
// existing order in the error body.
func (h orderHandlers) handleCreateOrder(c *fiber.Ctx) error {
	s := h.s
	var req companydocs.OrderRequest
	if err := decodeJSON(c, &req, orderFields); err != nil {
		return err
	}
	idemKey := utils.CopyString(c.Get("Idempotency-Key"))
	o, err := s.Orders.CreateOrder(c.UserContext(), currentSession(c).account, req, idemKey)
	if err != nil {
		return err
	}
	c.Location("/api/v1/documents/orders/" + o.ID + "/")
	return c.Status(fiber.StatusCreated).JSON(companydocs.OrderIn(sayingIn(c), o))
}

// handleListOrders lists the account's own orders, newest first, with
// ?limit=1..100 (default 20) and ?cursor=<next_cursor>.
func (h orderHandlers) handleListOrders(c *fiber.Ctx) error {
	s := h.s
	limit, err := limitParam(c.Query("limit"))
	if err != nil {
		return err
	}
	cursor := utils.CopyString(c.Query("cursor"))
	status := utils.CopyString(c.Query("status"))
	orders, next, err := s.Orders.List(c.UserContext(), currentSession(c).account, status, cursor, limit)
	if err != nil {
		return err
	}
	resp := listOrdersResponse{Orders: companydocs.OrdersIn(sayingIn(c), orders)}
	if len(resp.Orders) == 0 {
		resp.Orders = []*companydocs.Order{}
	}
	if next != "" {
		resp.NextCursor = &next
	}
	return c.JSON(resp)
}

func limitParam(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > companydocs.MaxOrdersPage {
		return 0, companydocs.Refusal(companydocs.EVALIDATION, "refusal.orders_limit", companydocs.Args{"max": companydocs.MaxOrdersPage})
	}
	return n, nil
}

// handleGetOrder shows one of the account's orders; another account's
// order is not_found.
func (h orderHandlers) handleGetOrder(c *fiber.Ctx) error {
	s := h.s
	id := utils.CopyString(c.Params("id"))
	o, err := s.Orders.Order(c.UserContext(), currentSession(c).account, id)
	if err != nil {
		return err
	}
	return c.JSON(companydocs.OrderIn(sayingIn(c), o))
}

// decodeJSON reads the request body as exactly one JSON object into dst
// (see decodeObject); its media type passed the body gate (gateBody).
// fields lists the known fields for the messages. Every failure is
// validation_error (422).
func decodeJSON(c *fiber.Ctx, dst any, fields string) error {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.body_empty", companydocs.Args{"fields": fields})
	}
	if r := decodeObject(body, dst, fields); r != nil {
		return r.as(companydocs.EVALIDATION)
	}
	return nil
}
