package reconcile

import (
	"strings"

	"companydocs/resolver"
)

// Property is a property of a company: one a query may give
// (resolver.Properties) or data extension may fetch, or both.
type Property struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// queryProperties are the properties a query may give: the search's
// (resolver.PropertyIDs, in their order), each with how a reconciliation
// client shows it. A property without its words here stops the program
// at start, so that a new property cannot be left out.
var queryProperties = func() []Property {
	words := map[string]Property{
		"city":            {Name: "City (seat)", Description: "Confirms or contradicts the seat"},
		"postal_code":     {Name: "Postal code", Description: "Confirms or contradicts the registered address"},
		"address":         {Name: "Street address", Description: "Street and house number: confirms or contradicts the registered address"},
		"court":           {Name: "Register court", Description: "Amtsgericht keeping the register; read with the register number"},
		"register_number": {Name: "Register number", Description: "HRB, HRA, VR, GnR, PR or GsR number: looked up by number"},
		"lei":             {Name: "LEI", Description: "Legal Entity Identifier: looked up"},
		"officer":         {Name: "Officer", Description: "A director's or officer's name: searched among officers"},
		"legal_form":      {Name: "Legal form", Description: "GmbH, AG, KG, e.V. ...: confirms or contradicts the form"},
	}
	out := make([]Property, len(resolver.PropertyIDs))
	for i, id := range resolver.PropertyIDs {
		p, ok := words[id]
		if !ok {
			panic("reconcile: the search's property " + id + " has no name")
		}
		p.ID = id
		out[i] = p
	}
	return out
}()

// PropertyIDs are the ids of the properties a query may give.
var PropertyIDs = resolver.PropertyIDs

// SuggestResponse is a suggest service's answer (0.2 schemas
// suggest-entities-response and suggest-properties-response).
type SuggestResponse struct {
	Result []Suggestion `json:"result"`
}

// Suggestion is one suggested entity or property.
type Suggestion struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Notable     []Type `json:"notable,omitempty"`
}

// SuggestProperties suggests the properties whose id or name starts with
// prefix (any word of the name), query and extension properties alike.
func SuggestProperties(prefix string) SuggestResponse {
	prefix = strings.ToLower(strings.TrimSpace(prefix))
	out := SuggestResponse{Result: []Suggestion{}}
	seen := map[string]bool{}
	for _, p := range append(append([]Property{}, queryProperties...), extensionProperties...) {
		if seen[p.ID] || !propertyStarts(p, prefix) {
			continue
		}
		seen[p.ID] = true
		out.Result = append(out.Result, Suggestion{ID: p.ID, Name: p.Name, Description: p.Description})
	}
	return out
}

func propertyStarts(p Property, prefix string) bool {
	if prefix == "" || strings.HasPrefix(p.ID, prefix) {
		return true
	}
	for _, w := range strings.Fields(strings.ToLower(p.Name)) {
		if strings.HasPrefix(strings.Trim(w, "()"), prefix) {
			return true
		}
	}
	return false
}
