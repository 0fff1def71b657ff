package companydocs

import (
	"encoding/json"
	"strings"

	"companydocs/messages"
)

// WatchIn returns w with each change of its last change said in lang
// (FieldChange.Message); w itself is not changed.
func WatchIn(lang string, w Watch) Watch {
	if w.LastChange == nil {
		return w
	}
	last := *w.LastChange
	last.Changes = make([]FieldChange, len(w.LastChange.Changes))
	for i, c := range w.LastChange.Changes {
		c.Message = c.In(lang)
		last.Changes[i] = c
	}
	w.LastChange = &last
	return w
}

// In says the change in lang: what the field was and is now, who left and
// who joined the management, or that the profile left the register data.
func (c FieldChange) In(lang string) string {
	say := func(key string, args messages.Args) string { return messages.Say(lang, key, args) }
	both := func(key string, before, after string) string {
		return say(key, messages.Args{"before": orDash(before), "after": orDash(after)})
	}
	switch c.Field {
	case FieldName, FieldSeat, FieldAddress, FieldLegalForm:
		return both("change."+c.Field, valueAs[string](c.Before), valueAs[string](c.After))
	case FieldStatus:
		return both("change.status", statusWords(lang, valueAs[string](c.Before)), statusWords(lang, valueAs[string](c.After)))
	case FieldRegister:
		return both("change.register", valueAs[RegisterValue](c.Before).Text, valueAs[RegisterValue](c.After).Text)
	case FieldOfficers:
		var parts []string
		if left := officerNames(valueAs[[]OfficerValue](c.Before)); left != "" {
			parts = append(parts, say("change.officers_left", messages.Args{"names": left}))
		}
		if joined := officerNames(valueAs[[]OfficerValue](c.After)); joined != "" {
			parts = append(parts, say("change.officers_joined", messages.Args{"names": joined}))
		}
		return strings.Join(parts, "; ")
	case FieldPreviousNames, FieldLEI, FieldDocuments, FieldRemoved:
		return say("change."+c.Field, nil)
	}
	return say("change.field", messages.Args{"field": c.Field})
}

// valueAs reads a change's value as the type its field has: as built, or
// as decoded from a stored watch (maps and lists).
func valueAs[T any](v any) T {
	var out T
	if t, ok := v.(T); ok {
		return t
	}
	if b, err := json.Marshal(v); err == nil {
		_ = json.Unmarshal(b, &out) // a value of another shape says nothing
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func statusWords(lang, status string) string {
	if key := "companyStatus." + status; status != "" && messages.Has(key) {
		return messages.Say(lang, key, nil)
	}
	return status
}

// officerNames lists officers as "Name (role)", "" for none.
func officerNames(list []OfficerValue) string {
	names := make([]string, len(list))
	for i, o := range list {
		names[i] = o.Name
		if o.Role != "" {
			names[i] += " (" + o.Role + ")"
		}
	}
	return strings.Join(names, ", ")
}
