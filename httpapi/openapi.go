package httpapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// OpenAPI is the OpenAPI 3.1 description of the HTTP API, served at
// GET /api/v1/openapi.json. httpapi/openapi.json is the canonical file;
// its tests check it against the handlers' live responses.
//
//go:embed openapi.json
var OpenAPI []byte

// handleOpenAPI serves the OpenAPI document (public, cacheable).
func (s *Server) handleOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/json")
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.Send(OpenAPI)
}
