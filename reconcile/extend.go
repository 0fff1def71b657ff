package reconcile

import (
	"strconv"
	"strings"

	"companydocs"
)

// extensionProperties are the properties data extension fetches. city,
// court, register_number, address, lei, officer and legal_form share
// their ids with the query properties, so that a column fetched can be
// given back as evidence.
var extensionProperties = []Property{
	{ID: "court", Name: "Register court"},
	{ID: "register_number", Name: "Register number"},
	{ID: "city", Name: "City (seat)"},
	{ID: "address", Name: "Registered address"},
	{ID: "legal_form", Name: "Legal form"},
	{ID: "status", Name: "Register status", Description: "registered, removed or unverified"},
	{ID: "lei", Name: "LEI"},
	{ID: "documents", Name: "Register documents available", Description: "AD, CD and the others the register holds"},
	{ID: "ordering_eligible", Name: "Ordering eligible", Description: "true when AD or CD can be ordered for this profile"},
	{ID: "officer", Name: "Current officers", Description: "Officers not dismissed, with their position"},
}

// MaxExtendIDs bounds the entities of one data extension query.
const MaxExtendIDs = MaxQueries

// ExtendQuery is a data extension query (0.2 schema data-extension-query).
type ExtendQuery struct {
	IDs        []string `json:"ids"`
	Properties []struct {
		ID       string         `json:"id"`
		Settings map[string]any `json:"settings,omitempty"`
	} `json:"properties"`
}

// ExtendResponse is a data extension response (0.2 schema
// data-extension-response).
type ExtendResponse struct {
	Meta []Property                       `json:"meta"`
	Rows map[string]map[string][]StrValue `json:"rows"`
}

// StrValue is a property value as text.
type StrValue struct {
	Str string `json:"str"`
}

// DecodeExtend reads the extend parameter: ids and known property ids.
func DecodeExtend(raw string) (ExtendQuery, error) {
	var q ExtendQuery
	if err := strictDecode(raw, &q); err != nil {
		return q, invalid("refusal.extend_type", nil)
	}
	switch {
	case len(q.IDs) == 0 || len(q.Properties) == 0:
		return q, invalid("refusal.extend_empty", nil)
	case len(q.IDs) > MaxExtendIDs:
		return q, invalid("refusal.extend_too_many", companydocs.Args{"count": len(q.IDs), "max": MaxExtendIDs})
	}
	for _, p := range q.Properties {
		if extensionProperty(p.ID) == nil {
			return q, invalid("refusal.extend_property_unknown", companydocs.Args{"property": companydocs.Shorten(p.ID, 40), "properties": strings.Join(extensionIDs(), ", ")})
		}
	}
	return q, nil
}

// Extend answers q with the profiles of its ids (nil where an id names
// no profile: its values are empty).
func Extend(q ExtendQuery, profiles map[string]*companydocs.Profile) ExtendResponse {
	out := ExtendResponse{Rows: map[string]map[string][]StrValue{}}
	for _, p := range q.Properties {
		out.Meta = append(out.Meta, *extensionProperty(p.ID))
	}
	for _, id := range q.IDs {
		row := map[string][]StrValue{}
		for _, p := range q.Properties {
			row[p.ID] = values(profiles[id], p.ID)
		}
		out.Rows[id] = row
	}
	return out
}

// values are what profile p holds for property id.
func values(p *companydocs.Profile, id string) []StrValue {
	out := []StrValue{}
	texts, ok := propertyTexts[id]
	if p == nil || !ok {
		return out
	}
	for _, t := range texts(p) {
		if t != "" {
			out = append(out, StrValue{Str: t})
		}
	}
	return out
}

// propertyTexts gives, for each extension property, what a profile holds
// for it.
var propertyTexts = map[string]func(p *companydocs.Profile) []string{
	"court": func(p *companydocs.Profile) []string { return []string{p.CourtName()} },
	"register_number": func(p *companydocs.Profile) []string {
		if p.Ref.Number == "" {
			return nil
		}
		return []string{p.Ref.NumberKey()}
	},
	"city": func(p *companydocs.Profile) []string { return []string{p.Seat} },
	"address": func(p *companydocs.Profile) []string {
		return []string{strings.TrimSuffix(strings.TrimSpace(p.Address), ".")}
	},
	"legal_form": func(p *companydocs.Profile) []string { return []string{p.LegalForm} },
	"status":     func(p *companydocs.Profile) []string { return []string{p.CandidateStatus()} },
	"lei": func(p *companydocs.Profile) []string {
		var out []string
		for _, l := range p.LEIs {
			out = append(out, string(l.LEI))
		}
		return out
	},
	"documents": func(p *companydocs.Profile) []string {
		var out []string
		for _, d := range p.Documents {
			out = append(out, string(d))
		}
		return out
	},
	"ordering_eligible": func(p *companydocs.Profile) []string { return []string{strconv.FormatBool(p.OrderingEligible())} },
	"officer":           currentOfficers,
}

// currentOfficers names the officers not dismissed, with their position.
func currentOfficers(p *companydocs.Profile) []string {
	var out []string
	for _, o := range p.Officers {
		if o.Dismissed || o.EndDate != "" {
			continue
		}
		if o.Position != "" {
			out = append(out, o.Name+" ("+o.Position+")")
		} else {
			out = append(out, o.Name)
		}
	}
	return out
}

func extensionProperty(id string) *Property {
	for i := range extensionProperties {
		if extensionProperties[i].ID == id {
			return &extensionProperties[i]
		}
	}
	return nil
}

func extensionIDs() []string {
	ids := make([]string, len(extensionProperties))
	for i, p := range extensionProperties {
		ids[i] = p.ID
	}
	return ids
}

// PropertyProposal is the answer of the property proposal service (0.2
// schema data-extension-property-proposal).
type PropertyProposal struct {
	Type       string     `json:"type"`
	Limit      int        `json:"limit,omitempty"`
	Properties []Property `json:"properties"`
}

// ProposeProperties proposes the extension properties of type typ (this
// service's one type; another type has none), at most limit (0: all).
func ProposeProperties(typ string, limit int) PropertyProposal {
	out := PropertyProposal{Type: typ, Limit: limit, Properties: []Property{}}
	if typ != TypeCompany && typ != "" {
		return out
	}
	for _, p := range extensionProperties {
		if limit > 0 && len(out.Properties) == limit {
			break
		}
		out.Properties = append(out.Properties, p)
	}
	return out
}
