package httpapi

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// webhookRequest is the body of POST /api/v1/webhooks/.
type webhookRequest struct {
	URL         string `json:"url"`
	Description string `json:"description"`
}

// handleCreateWebhook registers an endpoint; the answer is the only one
// that shows its secret.
func (h webhookHandlers) handleCreateWebhook(c *fiber.Ctx) error {
	s := h.s
	var req webhookRequest
	if err := decodeJSON(c, &req, `"url" and "description"`); err != nil {
		return err
	}
	ep, err := s.Webhooks.CreateWebhook(c.UserContext(), currentSession(c).account, req.URL, req.Description)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(ep)
}

func (h webhookHandlers) handleListWebhooks(c *fiber.Ctx) error {
	s := h.s
	eps, err := s.Webhooks.Webhooks(c.UserContext(), currentSession(c).account)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"webhooks": eps})
}

func (h webhookHandlers) handleDeleteWebhook(c *fiber.Ctx) error {
	s := h.s
	if err := s.Webhooks.DeleteWebhook(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id"))); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h webhookHandlers) handleWebhookDeliveries(c *fiber.Ctx) error {
	s := h.s
	ds, err := s.Webhooks.WebhookDeliveries(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id")))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deliveries": ds})
}
