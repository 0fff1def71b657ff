package httpapi

import (
	"companydocs"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
)

// Limits are the bounds on what a client sends that a form can check
// before it sends (GET /api/v1/limits): the page takes them from here
// rather than keeping copies of its own.
type Limits struct {
	// QueryChars caps a search query, in characters.
	QueryChars int `json:"query_chars"`
	// NoteChars caps a note or reason given with an order's transition.
	NoteChars int `json:"note_chars"`
	// DocumentBytes caps a delivered PDF.
	DocumentBytes int64 `json:"document_bytes"`
	// BatchQueries caps the queries of one search batch.
	BatchQueries int `json:"batch_queries"`
}

var serviceLimits = Limits{
	QueryChars:    resolver.MaxQueryRunes,
	NoteChars:     companydocs.MaxNote,
	DocumentBytes: MaxUploadSize,
	BatchQueries:  MaxBatchQueries,
}

// handleLimits answers the service's limits (public).
func (s *Server) handleLimits(c *fiber.Ctx) error {
	return c.JSON(serviceLimits)
}
