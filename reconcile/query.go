package reconcile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"companydocs"
	"companydocs/resolver"
)

// MaxQueries bounds a reconciliation query batch. OpenRefine sends ten
// at a time; the batch search (POST /api/v1/documents/companies/search/batch)
// is the route for a thousand.
const MaxQueries = 1000

// Query is one reconciliation query (0.2 schema reconciliation-query-batch).
type Query struct {
	Query      string          `json:"query"`
	Type       json.RawMessage `json:"type"`
	Limit      *float64        `json:"limit"`
	Properties []PropertyValue `json:"properties"`
	TypeStrict string          `json:"type_strict"`
}

// PropertyValue is one property given with a query: pid one of
// PropertyIDs, v a string, number or boolean, an entity {id, name}, or an
// array of those.
type PropertyValue struct {
	PID string          `json:"pid"`
	V   json.RawMessage `json:"v"`
}

// Item is one query of a batch, by its key, as a resolver request.
type Item struct {
	Key     string
	Request resolver.Request
}

// DecodeQueries reads the queries parameter: a JSON object of queries by
// key. A batch that is not such an object, holds more than MaxQueries, a
// query with an unknown field, type or property id, or a value of the
// wrong kind, is refused whole with a sentence naming what is wrong (the
// client sends the same mapping with every batch, so the sentence helps
// more than ten empty results would).
func DecodeQueries(raw string) ([]Item, error) {
	var batch map[string]json.RawMessage
	if err := strictDecode(raw, &batch); err != nil || batch == nil {
		return nil, invalid("refusal.reconcile_queries_type", nil)
	}
	if len(batch) == 0 {
		return nil, invalid("refusal.reconcile_queries_empty", nil)
	}
	if len(batch) > MaxQueries {
		return nil, invalid("refusal.reconcile_too_many", companydocs.Args{"count": len(batch), "max": MaxQueries})
	}
	keys := make([]string, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]Item, len(keys))
	for i, k := range keys {
		req, err := decodeQuery(k, batch[k])
		if err != nil {
			return nil, err
		}
		items[i] = Item{Key: k, Request: req}
	}
	return items, nil
}

// decodeQuery reads one query into a resolver request.
func decodeQuery(key string, raw json.RawMessage) (resolver.Request, error) {
	var q Query
	var req resolver.Request
	if name := unknownMember(raw); name != "" {
		return req, invalid("refusal.reconcile_query_field_unknown", companydocs.Args{"key": companydocs.Shorten(key, 40), "field": companydocs.Shorten(strconv.Quote(name), 40)})
	}
	if err := strictDecode(string(raw), &q); err != nil {
		return req, shapeError(key, err)
	}
	if err := checkType(key, q.Type); err != nil {
		return req, err
	}
	req.Query = q.Query
	if q.Limit != nil {
		if *q.Limit < 1 || *q.Limit != math.Trunc(*q.Limit) {
			return req, invalid("refusal.reconcile_limit", companydocs.Args{"key": companydocs.Shorten(key, 40)})
		}
		req.Limit = int(min(*q.Limit, resolver.MaxLimit))
	}
	for _, pv := range q.Properties {
		field := req.Properties.Field(pv.PID)
		if field == nil {
			return req, invalid("refusal.reconcile_property_unknown", companydocs.Args{"key": companydocs.Shorten(key, 40), "property": companydocs.Shorten(pv.PID, 40), "properties": strings.Join(PropertyIDs, ", ")})
		}
		v, ok := propertyText(pv.V)
		if !ok {
			return req, invalid("refusal.reconcile_property_value", companydocs.Args{"key": companydocs.Shorten(key, 40), "property": companydocs.Shorten(pv.PID, 40)})
		}
		if *field == "" {
			*field = v
		}
	}
	if strings.TrimSpace(req.Query) == "" {
		req.Query = impliedQuery(req.Properties)
	}
	return req, nil
}

// impliedQuery is the text of a query that gives properties only: its
// identifier, which is then looked up as typed.
func impliedQuery(p resolver.Properties) string {
	switch {
	case p.LEI != "":
		return p.LEI
	case p.RegisterNumber != "":
		return strings.TrimSpace(p.RegisterNumber + " " + p.Court)
	}
	return ""
}

// checkType accepts no type, this service's type, or a list holding it.
func checkType(key string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(raw, &one) == nil:
		many = []string{one}
	case json.Unmarshal(raw, &many) == nil:
	default:
		return invalid("refusal.reconcile_type_shape", companydocs.Args{"key": companydocs.Shorten(key, 40)})
	}
	for _, t := range many {
		if t == TypeCompany {
			return nil
		}
	}
	return invalid("refusal.reconcile_type_unknown", companydocs.Args{"key": companydocs.Shorten(key, 40), "known": TypeCompany, "type": companydocs.Shorten(strings.Join(many, ", "), 60)})
}

// propertyText reads a property value as text: a string, a number (a
// postcode in a number column), a boolean, an entity's name (or id), or
// the first of an array of those that says something.
func propertyText(raw json.RawMessage) (string, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, true
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), true
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err == nil {
		return strconv.FormatBool(b), true
	}
	var entity struct{ ID, Name string }
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) && json.Unmarshal(raw, &entity) == nil {
		if entity.Name != "" {
			return entity.Name, true
		}
		return entity.ID, true
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err == nil {
		for _, v := range list {
			if t, ok := propertyText(v); ok && strings.TrimSpace(t) != "" {
				return t, true
			}
		}
		return "", true
	}
	return "", false
}

// strictDecode decodes exactly one JSON value, refusing unknown fields.
func strictDecode(raw string, dst any) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value")
	}
	return nil
}

// queryMembers are the names of Query's members, its fields' JSON names.
var queryMembers = func() []string {
	t := reflect.TypeFor[Query]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(t.Field(i).Tag.Get("json"), ",")
	}
	return names
}()

// unknownMember returns the first (by name) member of the query object
// raw that Query has no field for, matched as the decoder matches them
// (ignoring case); "" when there is none or raw is no object.
func unknownMember(raw json.RawMessage) string {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return ""
	}
	names := slices.Sorted(maps.Keys(members))
	for _, name := range names {
		if !slices.ContainsFunc(queryMembers, func(m string) bool { return strings.EqualFold(m, name) }) {
			return name
		}
	}
	return ""
}

// shapeError says what is wrong with the query object of key (whose
// members unknownMember found known).
func shapeError(key string, err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return invalid("refusal.reconcile_query_field_type", companydocs.Args{"key": companydocs.Shorten(key, 40), "field": typeErr.Field, "kind": jsonKind(typeErr.Type.Kind().String())})
	}
	return invalid("refusal.reconcile_query_not_object", companydocs.Args{"key": companydocs.Shorten(key, 40)})
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "slice":
		return "array"
	case "float64", "ptr":
		return "number"
	}
	return "value"
}

// invalid refuses a query with the catalog's sentence key.
func invalid(key string, args companydocs.Args) error {
	return companydocs.Refusal(companydocs.EINVALIDQUERY, key, args)
}
