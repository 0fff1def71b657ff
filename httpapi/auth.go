package httpapi

import (
	"strings"

	"companydocs"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
)

// sessionKey is the c.Locals key of the authenticated session.
type sessionKey struct{}

// session is what requireSession hands to the handlers after it. Both
// strings are copies: Fiber's header values do not outlive the request.
type session struct {
	account string
	token   string
}

// createSessionRequest is the body of POST /api/v1/auth/sessions/.
type createSessionRequest struct {
	APIKey string `json:"api_key"`
}

// requireSession authenticates "Authorization: Bearer <token>". Any failure
// is unauthorized (401) with a WWW-Authenticate challenge (RFC 6750).
// Every answer behind it is one account's and is marked no-store.
func (s *Server) requireSession(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store") // errors too
	token, err := bearerToken(c.Get(fiber.HeaderAuthorization))
	if err != nil {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="companydocs"`)
		return err
	}
	account, err := s.Sessions.Authenticate(c.UserContext(), token)
	if err != nil {
		if companydocs.ErrorCode(err) == companydocs.EUNAUTHORIZED {
			c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="companydocs", error="invalid_token"`)
		}
		return err
	}
	c.Locals(sessionKey{}, session{account: account, token: token})
	return c.Next()
}

// bearerToken extracts the token from an Authorization header value and
// returns a copy of it.
func bearerToken(header string) (string, error) {
	if header == "" {
		return "", companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.session_required", nil)
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", companydocs.Refusal(companydocs.EUNAUTHORIZED, "refusal.bad_authorization", nil)
	}
	return utils.CopyString(token), nil
}

// currentSession returns what requireSession stored.
func currentSession(c *fiber.Ctx) session {
	sess, _ := c.Locals(sessionKey{}).(session)
	return sess
}

// noStore marks every answer of a route, errors included, as not to be
// cached: they carry tokens or one account's data.
func noStore(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Next()
}

// handleCreateSession exchanges an API key for a session token (201).
func (h sessionHandlers) handleCreateSession(c *fiber.Ctx) error {
	s := h.s
	var req createSessionRequest
	if err := decodeJSON(c, &req, `"api_key"`); err != nil {
		return err
	}
	if err := s.limitSessionKey(c, req.APIKey); err != nil {
		return err
	}
	sess, err := s.Sessions.CreateSession(c.UserContext(), req.APIKey)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(sess)
}

// handleDeleteSession ends the session the request is made with (204).
func (h sessionHandlers) handleDeleteSession(c *fiber.Ctx) error {
	s := h.s
	if err := s.Sessions.RevokeSession(c.UserContext(), currentSession(c).token); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// handleAccount shows the session's account to itself.
func (h sessionHandlers) handleAccount(c *fiber.Ctx) error {
	s := h.s
	a, err := s.Orders.AccountSummary(c.UserContext(), currentSession(c).account)
	if err != nil {
		return err
	}
	return c.JSON(a)
}
