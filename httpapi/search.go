package httpapi

import (
	"companydocs"

	"github.com/gofiber/fiber/v2"
)

// SearchRequest is the body of a search.
type SearchRequest struct {
	Query    string `json:"query"`
	Mode     string `json:"mode"`
	Discover bool   `json:"discover"`
	Limit    int    `json:"limit"`
}

// SearchResponse is the answer to a search.
type SearchResponse struct {
	Candidates         []companydocs.Candidate `json:"candidates"`
	QueryUnderstanding any                     `json:"query_understanding,omitempty"`
}

func (s *Server) handleSearch(c *fiber.Ctx) error {
	return companydocs.Errorf(companydocs.EUNAVAILABLE, "Search is not available yet.")
}

func (s *Server) limitSearch(c *fiber.Ctx) error { return c.Next() }

type rateLimiter struct{}

func newRateLimiter(rate float64, burst int) *rateLimiter { return &rateLimiter{} }
