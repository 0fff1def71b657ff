package httpapi

import (
	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// watchRequest is the body of POST /api/v1/watches/.
type watchRequest struct {
	CompanyProfileID string `json:"company_profile_id"`
}

// handleCreateWatch watches a verified profile: 201 with the new watch,
// or 200 with the account's existing watch of the profile.
func (h watchHandlers) handleCreateWatch(c *fiber.Ctx) error {
	s := h.s
	var req watchRequest
	if err := decodeJSON(c, &req, `"company_profile_id"`); err != nil {
		return err
	}
	w, created, err := s.Watches.CreateWatch(c.UserContext(), currentSession(c).account, req.CompanyProfileID)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(companydocs.WatchIn(sayingIn(c), *w))
}

func (h watchHandlers) handleListWatches(c *fiber.Ctx) error {
	s := h.s
	ws, err := s.Watches.Watches(c.UserContext(), currentSession(c).account)
	if err != nil {
		return err
	}
	lang := sayingIn(c)
	for i, w := range ws {
		ws[i] = companydocs.WatchIn(lang, w)
	}
	return c.JSON(fiber.Map{"watches": ws})
}

func (h watchHandlers) handleDeleteWatch(c *fiber.Ctx) error {
	s := h.s
	if err := s.Watches.DeleteWatch(c.UserContext(), currentSession(c).account, utils.CopyString(c.Params("id"))); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
