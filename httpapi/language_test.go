package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"companydocs/messages"
)

// TestErrorMessageLanguage checks that an error's message is the
// catalog's sentence in the language Accept-Language prefers (English
// unless German is preferred), that Content-Language names it, and that
// every error code has its plain words in the catalog.
func TestErrorMessageLanguage(t *testing.T) {
	s := newWebTestServer(t)
	for _, tc := range []struct{ acceptLanguage, lang string }{
		{"", "en"}, {"de-DE,de;q=0.9,en;q=0.8", "de"}, {"en-GB,de;q=0.5", "en"}, {"fr", "en"}, {"de", "de"},
	} {
		resp, body := webGet(t, s, "/api/v1/no-such-endpoint", map[string]string{"Accept-Language": tc.acceptLanguage})
		var e errorBody
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			t.Fatalf("Accept-Language %q: %v in %s", tc.acceptLanguage, err, body)
		}
		want := messages.Say(tc.lang, "refusal.no_endpoint", nil)
		if resp.StatusCode != http.StatusNotFound || e.Error.Code != "not_found" || e.Error.Message != want {
			t.Errorf("Accept-Language %q: %d %+v, want 404 not_found %q", tc.acceptLanguage, resp.StatusCode, e.Error, want)
		}
		if got := resp.Header.Get("Content-Language"); got != tc.lang {
			t.Errorf("Accept-Language %q: Content-Language %q, want %q", tc.acceptLanguage, got, tc.lang)
		}
		if vary := resp.Header.Get("Vary"); vary == "" {
			t.Errorf("Accept-Language %q: no Vary header", tc.acceptLanguage)
		}
	}
	for code := range statusOf {
		if !messages.Has("error." + code) {
			t.Errorf("error code %s has no words in the catalog (error.%s)", code, code)
		}
	}
}

// TestConnRefusalIsTheCatalogs reads the answer to a connection over a
// cap as a client does: a 503 whose message is the catalog's English.
func TestConnRefusalIsTheCatalogs(t *testing.T) {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(connRefusal)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e errorBody
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	want := messages.Say(messages.English, "refusal.too_many_connections", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || e.Error.Code != "service_unavailable" || e.Error.Message != want ||
		resp.Header.Get("Content-Language") != "en" || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("connection refusal: %d %+v %v", resp.StatusCode, e.Error, resp.Header)
	}
}
