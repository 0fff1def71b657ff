package httpapi

import (
	"companydocs/messages"

	"github.com/gofiber/fiber/v2"
)

// sayingIn is the language an answer's sentences are said in: German when
// the request's Accept-Language prefers it, else English. The answer says
// so (Content-Language) and that it depends on the header (Vary).
func sayingIn(c *fiber.Ctx) string {
	lang := messages.Pick(c.Get(fiber.HeaderAcceptLanguage))
	c.Set(fiber.HeaderContentLanguage, lang)
	c.Vary(fiber.HeaderAcceptLanguage)
	return lang
}
