package httpapi

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"

	"companydocs"
	"companydocs/resolver"
	"companydocs/textfold"

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

// propertyFields names the properties a search may hold, for messages:
// "city", "postal_code", ... and "legal_form".
var propertyFields = func() string {
	quoted := make([]string, len(resolver.PropertyIDs))
	for i, id := range resolver.PropertyIDs {
		quoted[i] = strconv.Quote(id)
	}
	last := len(quoted) - 1
	return strings.Join(quoted[:last], ", ") + " and " + quoted[last]
}()

func (s *Server) handleSearch(c *fiber.Ctx) error {
	req, err := decodeSearch(c.Body())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.config.SearchTimeout)
	defer cancel()
	res, err := s.Searcher.Search(ctx, req)
	if errors.Is(err, context.DeadlineExceeded) {
		return companydocs.Refusal(companydocs.EUNAVAILABLE, "refusal.search_too_slow", nil)
	} else if err != nil {
		return err
	}
	if s.OnSearch != nil {
		s.OnSearch(res)
	}
	return c.JSON(res.SaidIn(sayingIn(c), req.Query))
}

// decodeSearch reads a search body; anything malformed is invalid_query.
func decodeSearch(body []byte) (resolver.Request, error) {
	var b searchBody
	var req resolver.Request
	if len(bytes.TrimSpace(body)) == 0 {
		return req, invalidQuery("refusal.search_body_empty", nil)
	}
	if r := decodeObjectAllowing(body, &b, searchFields, lineSeparator); r != nil {
		return req, r.as(companydocs.EINVALIDQUERY)
	}
	if len(b.Query) == 0 || string(b.Query) == "null" {
		return req, invalidQuery("refusal.search_query_missing", nil)
	}
	if err := json.Unmarshal(b.Query, &req.Query); err != nil {
		return req, invalidQuery("refusal.search_query_type", nil)
	}
	if err := decodeOptional(b.Mode, &req.Mode, "refusal.search_mode_type"); err != nil {
		return req, err
	}
	if err := decodeOptional(b.Discover, &req.Discover, "refusal.search_discover_type"); err != nil {
		return req, err
	}
	if err := decodeOptional(b.Limit, &req.Limit, "refusal.search_limit_type"); err != nil {
		return req, err
	}
	if len(b.Limit) > 0 && string(b.Limit) != "null" && req.Limit == 0 {
		return req, invalidQuery("refusal.search_limit_type", nil)
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
		return invalidQuery("refusal.property_unknown", companydocs.Args{"property": companydocs.Shorten(sem.JSONPointer.LastToken(), 40), "properties": propertyFields})
	case errors.As(err, &sem) && sem.JSONPointer != "":
		return invalidQuery("refusal.property_type", companydocs.Args{"property": companydocs.Shorten(sem.JSONPointer.LastToken(), 40)})
	}
	return invalidQuery("refusal.properties_type", nil)
}

// lineSeparator reports whether r separates the lines of a pasted block
// (resolver.Request): a line break or a tab.
func lineSeparator(r rune) bool { return r == '\t' || textfold.IsLineBreak(r) }

// decodeOptional reads an optional field, refused with the catalog's
// sentence key when it has the wrong type.
func decodeOptional(raw jsontext.Value, dst any, key string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return invalidQuery(key, nil)
	}
	return nil
}

// invalidQuery refuses a search with the catalog's sentence key; the
// limit's bound is filled in wherever a sentence names it.
func invalidQuery(key string, args companydocs.Args) error {
	if args == nil {
		args = companydocs.Args{"max": resolver.MaxLimit}
	}
	return companydocs.Refusal(companydocs.EINVALIDQUERY, key, args)
}
