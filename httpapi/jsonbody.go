package httpapi

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strconv"
	"unicode"
	"unicode/utf8"

	"companydocs"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// refusal is a catalog sentence (package messages) that refuses a body,
// with its values; the caller says which error code it is.
type refusal struct {
	key  string
	args companydocs.Args
}

// as makes the refusal an error with code.
func (r *refusal) as(code string) error {
	return companydocs.Refusal(code, r.key, r.args)
}

// decodeObject decodes body, which must be exactly one JSON object, into
// dst, and returns the refusal for the client, or nil when it decoded.
// encoding/json v2 (go-json-experiment) refuses by default what v1 accepts
// silently and differently from other parsers: invalid UTF-8, lone UTF-16
// surrogates and duplicate member names; names match case-sensitively, so
// "API_KEY" is not "api_key". Unknown members are refused too, naming the
// known ones (fields), so that a misspelt field is not silently ignored.
// Control characters in strings, which no name, id or key holds, are the
// one check of our own.
func decodeObject(body []byte, dst any, fields string) *refusal {
	return decodeObjectAllowing(body, dst, fields, nil)
}

// decodeObjectAllowing is decodeObject with the control characters allowed
// leaves in the body's strings: a search's pasted block keeps its line
// breaks and tabs, and the resolver refuses the other control characters
// with its own sentence.
func decodeObjectAllowing(body []byte, dst any, fields string, allowed func(rune) bool) *refusal {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if err := json.UnmarshalDecode(dec, dst, json.RejectUnknownMembers(true)); err != nil {
		return decodeMessage(err, body, fields)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return &refusal{key: "refusal.body_trailing_data"}
	}
	return checkStrings(body, allowed)
}

// decodeMessage describes a decoding error, naming the field or the
// position.
func decodeMessage(err error, body []byte, fields string) *refusal {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case !utf8.Valid(body):
		return &refusal{key: "refusal.body_not_utf8"}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &refusal{key: "refusal.body_ends_early"}
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return &refusal{"refusal.body_field_twice", companydocs.Args{"field": strconv.Quote(companydocs.Shorten(syn.JSONPointer.LastToken(), 40))}}
	case errors.As(err, &syn):
		return &refusal{"refusal.body_not_json", companydocs.Args{"byte": syn.ByteOffset}}
	case errors.As(err, &sem) && errors.Is(sem.Err, json.ErrUnknownName):
		return &refusal{"refusal.body_unknown_field", companydocs.Args{"field": strconv.Quote(companydocs.Shorten(sem.JSONPointer.LastToken(), 40)), "fields": fields}}
	case errors.As(err, &sem) && sem.JSONPointer == "":
		return &refusal{"refusal.body_not_object", companydocs.Args{"fields": fields, "kind": kindName(sem.JSONKind)}}
	case errors.As(err, &sem):
		return &refusal{"refusal.body_field_type", companydocs.Args{"field": strconv.Quote(string(sem.JSONPointer.LastToken())), "want": goKindName(sem.GoType), "kind": kindName(sem.JSONKind)}}
	}
	return &refusal{key: "refusal.body_unreadable_json"}
}

// kindName names a JSON kind as the messages do.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	case '[':
		return "array"
	case '{':
		return "object"
	}
	return "value"
}

// goKindName names the JSON a Go type wants.
func goKindName(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64:
		return "number"
	}
	return "value"
}

// checkStrings walks the strings of a decoded body, member names included.
func checkStrings(body []byte, allowed func(rune) bool) *refusal {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil // the end: the body decoded before
		}
		if tok.Kind() == '"' {
			if r := checkJSONString(tok.String(), allowed); r != nil {
				return r
			}
		}
	}
}

// checkJSONString rejects control characters, which no name, id or key
// holds (but those allowed, when it is not nil), and the replacement
// character, which stands for text that was broken before it was sent.
func checkJSONString(s string, allowed func(rune) bool) *refusal {
	for _, r := range s {
		if r == utf8.RuneError {
			return &refusal{key: "refusal.body_broken_character"}
		}
		if unicode.IsControl(r) && (allowed == nil || !allowed(r)) {
			return &refusal{key: "refusal.body_control_character"}
		}
	}
	return nil
}
