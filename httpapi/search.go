package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"companydocs"
	"companydocs/resolver"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofiber/fiber/v2"
)

// searchBody is the JSON body of a search; fields are decoded one by one
// so that a wrong type gets a sentence naming the field.
type searchBody struct {
	Query    jsontext.Value `json:"query"`
	Mode     jsontext.Value `json:"mode"`
	Discover jsontext.Value `json:"discover"`
	Limit    jsontext.Value `json:"limit"`
	// Properties are the structured clues (resolver.Properties).
	Properties jsontext.Value `json:"properties"`
}

// searchFields names the fields a search may hold, for messages.
const searchFields = `"query", "mode", "discover", "limit" and "properties"`

// propertyFields names the properties a search may hold, for messages.
const propertyFields = `"city", "postal_code", "address", "court", "register_number", "lei", "officer" and "legal_form"`

func (s *Server) handleSearch(c *fiber.Ctx) error {
	if ct := c.Get(fiber.HeaderContentType); ct != "" && !isJSONType(ct) {
		return invalidQuery("The body must be JSON: send Content-Type: application/json.")
	}
	req, err := decodeSearch(c.Body())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.config.SearchTimeout)
	defer cancel()
	res, err := s.Searcher.Search(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return companydocs.Errorf(companydocs.EUNAVAILABLE, "The search took too long. Try a more specific query.")
	} else if err != nil {
		return err
	}
	if s.OnSearch != nil {
		s.OnSearch(res)
	}
	return c.JSON(res)
}

// decodeSearch reads a search body; anything malformed is invalid_query.
func decodeSearch(body []byte) (resolver.Request, error) {
	var b searchBody
	var req resolver.Request
	if len(bytes.TrimSpace(body)) == 0 {
		return req, invalidQuery("The body must be a JSON object such as {\"query\": \"HRB 6684 München\"}.")
	}
	if msg := decodeObjectAllowing(body, &b, searchFields, lineSeparator); msg != "" {
		return req, invalidQuery(msg)
	}
	if len(b.Query) == 0 || string(b.Query) == "null" {
		return req, invalidQuery("The field query is missing. Send a company name, city, register number, LEI or director's name.")
	}
	if err := json.Unmarshal(b.Query, &req.Query); err != nil {
		return req, invalidQuery("The field query must be a string.")
	}
	if err := decodeOptional(b.Mode, &req.Mode, "mode", "a string: \"standard\" or \"deep\""); err != nil {
		return req, err
	}
	if err := decodeOptional(b.Discover, &req.Discover, "discover", "true or false"); err != nil {
		return req, err
	}
	if err := decodeOptional(b.Limit, &req.Limit, "limit", fmt.Sprintf("a whole number from 1 to %d", resolver.MaxLimit)); err != nil {
		return req, err
	}
	if len(b.Limit) > 0 && string(b.Limit) != "null" && req.Limit == 0 {
		return req, invalidQuery(fmt.Sprintf("The field limit must be a whole number from 1 to %d.", resolver.MaxLimit))
	}
	return req, decodeProperties(b.Properties, &req.Properties)
}

// decodeProperties reads a search's properties: an object of strings
// whose names are the property ids; an unknown name is refused by name.
func decodeProperties(raw jsontext.Value, dst *resolver.Properties) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	err := json.Unmarshal(raw, dst, json.RejectUnknownMembers(true))
	var sem *json.SemanticError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &sem) && errors.Is(sem.Err, json.ErrUnknownName):
		return invalidQuery(fmt.Sprintf("Unknown property %q: properties may hold only %s.", truncate(sem.JSONPointer.LastToken(), 40), propertyFields))
	case errors.As(err, &sem) && sem.JSONPointer != "":
		return invalidQuery(fmt.Sprintf("The property %s must be a string.", truncate(sem.JSONPointer.LastToken(), 40)))
	}
	return invalidQuery(`The field properties must be an object such as {"city": "Düsseldorf", "register_number": "HRB 562"}.`)
}

// lineSeparator reports whether r separates the lines of a pasted block
// (resolver.Request): a line break or a tab.
func lineSeparator(r rune) bool { return r == '\n' || r == '\r' || r == '\t' }

func decodeOptional(raw jsontext.Value, dst any, field, want string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return invalidQuery(fmt.Sprintf("The field %s must be %s.", field, want))
	}
	return nil
}

func invalidQuery(msg string) error {
	return companydocs.Errorf(companydocs.EINVALIDQUERY, "%s", msg)
}
