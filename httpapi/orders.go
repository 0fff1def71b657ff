package httpapi

import (
	"companydocs"

	"github.com/gofiber/fiber/v2"
)

func notImplemented(c *fiber.Ctx) error {
	return companydocs.Errorf(companydocs.EUNAVAILABLE, "Ordering is not available yet.")
}

func (s *Server) requireSession(c *fiber.Ctx) error      { return notImplemented(c) }
func (s *Server) handlePlans(c *fiber.Ctx) error         { return notImplemented(c) }
func (s *Server) handleCreateSession(c *fiber.Ctx) error { return notImplemented(c) }
func (s *Server) handleDeleteSession(c *fiber.Ctx) error { return notImplemented(c) }
func (s *Server) handlePreview(c *fiber.Ctx) error       { return notImplemented(c) }
func (s *Server) handleCreateOrder(c *fiber.Ctx) error   { return notImplemented(c) }
func (s *Server) handleListOrders(c *fiber.Ctx) error    { return notImplemented(c) }
func (s *Server) handleGetOrder(c *fiber.Ctx) error      { return notImplemented(c) }
