package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// decodeObject decodes body, which must be exactly one JSON object, into
// dst, and returns a sentence for the client, or "" when it decoded.
// encoding/json v2 (go-json-experiment) refuses by default what v1 accepts
// silently and differently from other parsers: invalid UTF-8, lone UTF-16
// surrogates and duplicate member names; names match case-sensitively, so
// "API_KEY" is not "api_key". Unknown members are refused too, naming the
// known ones (fields), so that a misspelt field is not silently ignored.
// Control characters in strings, which no name, id or key holds, are the
// one check of our own.
func decodeObject(body []byte, dst any, fields string) string {
	return decodeObjectAllowing(body, dst, fields, nil)
}

// decodeObjectAllowing is decodeObject with the control characters allowed
// leaves in the body's strings: a search's pasted block keeps its line
// breaks and tabs, and the resolver refuses the other control characters
// with its own sentence.
func decodeObjectAllowing(body []byte, dst any, fields string, allowed func(rune) bool) string {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if err := json.UnmarshalDecode(dec, dst, json.RejectUnknownMembers(true)); err != nil {
		return decodeMessage(err, body, fields)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return "The body must hold exactly one JSON object, with nothing after it."
	}
	return checkStrings(body, allowed)
}

// decodeMessage describes a decoding error, naming the field or the
// position.
func decodeMessage(err error, body []byte, fields string) string {
	var syn *jsontext.SyntacticError
	var sem *json.SemanticError
	switch {
	case !utf8.Valid(body):
		return "The body is not valid UTF-8 text."
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "The body is not valid JSON: it ends too early."
	case errors.As(err, &syn) && errors.Is(syn.Err, jsontext.ErrDuplicateName):
		return fmt.Sprintf("The body names the field %q twice.", truncate(syn.JSONPointer.LastToken(), 40))
	case errors.As(err, &syn):
		return fmt.Sprintf("The body is not valid JSON (error at byte %d).", syn.ByteOffset)
	case errors.As(err, &sem) && errors.Is(sem.Err, json.ErrUnknownName):
		return fmt.Sprintf("Unknown field %q: the body may hold only %s.", truncate(sem.JSONPointer.LastToken(), 40), fields)
	case errors.As(err, &sem) && sem.JSONPointer == "":
		return fmt.Sprintf("The body must be a JSON object with %s, not a JSON %s.", fields, kindName(sem.JSONKind))
	case errors.As(err, &sem):
		return fmt.Sprintf("Field %q must be a JSON %s, not a %s.", sem.JSONPointer.LastToken(), goKindName(sem.GoType), kindName(sem.JSONKind))
	}
	return "The body could not be read as JSON."
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
func checkStrings(body []byte, allowed func(rune) bool) string {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return "" // the end: the body decoded before
		}
		if tok.Kind() == '"' {
			if msg := checkJSONString(tok.String(), allowed); msg != "" {
				return msg
			}
		}
	}
}

// checkJSONString rejects control characters, which no name, id or key
// holds (but those allowed, when it is not nil), and the replacement
// character, which stands for text that was broken before it was sent.
func checkJSONString(s string, allowed func(rune) bool) string {
	for _, r := range s {
		if r == utf8.RuneError {
			return "The body holds a broken character (a replacement character): send clean UTF-8 text."
		}
		if unicode.IsControl(r) && (allowed == nil || !allowed(r)) {
			return "The body holds a control character in a string: send plain text."
		}
	}
	return ""
}
