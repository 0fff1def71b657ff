package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkJSONText rejects what encoding/json would otherwise accept
// silently and differently from other parsers: invalid UTF-8 (decoded as
// U+FFFD), lone UTF-16 surrogates (likewise), duplicate keys (the last one
// wins, and field names match case-insensitively), and control characters
// in strings (no name, id or key holds one). It returns a sentence for the
// client, or "" when the text passes. It does not check the JSON syntax
// beyond what it walks; the decoding after it does.
func checkJSONText(body []byte) string {
	if !utf8.Valid(body) {
		return "The body is not valid UTF-8 text."
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []*jsonFrame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return ""
		}
		if err != nil {
			return "" // a syntax error: the decoding after this names it
		}
		if s, ok := tok.(string); ok {
			if msg := checkJSONString(s); msg != "" {
				return msg
			}
		}
		var top *jsonFrame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch {
		case tok == json.Delim('}') || tok == json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].valueDone()
			}
		case top != nil && top.keys != nil && top.wantKey:
			name, _ := tok.(string)
			folded := strings.ToLower(name)
			if top.keys[folded] {
				return "The body names the field \"" + truncate(name, 40) + "\" twice."
			}
			top.keys[folded] = true
			top.wantKey = false
		case tok == json.Delim('{'):
			stack = append(stack, &jsonFrame{keys: map[string]bool{}, wantKey: true})
		case tok == json.Delim('['):
			stack = append(stack, &jsonFrame{})
		case top != nil:
			top.valueDone()
		}
	}
}

// jsonFrame is an open object (keys non-nil) or array while walking.
type jsonFrame struct {
	keys    map[string]bool
	wantKey bool
}

// valueDone notes that a member's value ended: in an object, a key follows.
func (f *jsonFrame) valueDone() { f.wantKey = f.keys != nil }

// checkJSONString rejects control characters and the replacement
// character, which encoding/json puts in place of a lone surrogate.
func checkJSONString(s string) string {
	for _, r := range s {
		if r == utf8.RuneError {
			return "The body holds a broken character (an invalid UTF-16 escape or a replacement character): send clean UTF-8 text."
		}
		if unicode.IsControl(r) {
			return "The body holds a control character in a string: send plain text."
		}
	}
	return ""
}
