package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func newWebTestServer(t *testing.T) *Server {
	t.Helper()
	return newTestServer(t, Deps{})
}

func webGet(t *testing.T, s *Server, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp, string(body)
}

func TestWebFilesCarrySecurityHeaders(t *testing.T) {
	s := newWebTestServer(t)
	cases := []struct{ path, contentType, contains string }{
		{"/", "text/html; charset=utf-8", `<script type="module" src="/static/js/main.js"></script>`},
		{"/static/js/main.js", "text/javascript; charset=utf-8", `from "./core.js"`},
		{"/static/js/core.js", "text/javascript; charset=utf-8", "AbortError"},
		{"/static/i18n.js", "text/javascript; charset=utf-8", "export const texts"},
		{"/static/i18n/de.js", "text/javascript; charset=utf-8", "export const de"},
		{"/static/js/orderviews.js", "text/javascript; charset=utf-8", "export function orderDetails"},
		{"/static/app.css", "text/css; charset=utf-8", ".card"},
		{"/static/messages.json", "application/json", `"refusal.not_a_pdf":"Das Dokument ist kein PDF`},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			resp, body := webGet(t, s, c.path, nil)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != c.contentType || !strings.Contains(body, c.contains) {
				t.Fatalf("status %d, type %q, body has %q: %v", resp.StatusCode, resp.Header.Get("Content-Type"), c.contains, strings.Contains(body, c.contains))
			}
			want := map[string]string{
				"Content-Security-Policy": contentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"Referrer-Policy":         "no-referrer",
				"X-Frame-Options":         "DENY",
				"Cache-Control":           "no-cache",
			}
			for k, v := range want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
}

func TestWebRevalidatesWithETag(t *testing.T) {
	s := newWebTestServer(t)
	first, _ := webGet(t, s, "/static/js/core.js", nil)
	etag := first.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on /static/js/core.js")
	}
	again, body := webGet(t, s, "/static/js/core.js", map[string]string{"If-None-Match": etag})
	if again.StatusCode != http.StatusNotModified || body != "" {
		t.Fatalf("revalidation: status %d with %d bytes, want 304 and no body", again.StatusCode, len(body))
	}
	changed, _ := webGet(t, s, "/static/js/core.js", map[string]string{"If-None-Match": `"other"`})
	if changed.StatusCode != http.StatusOK {
		t.Fatalf("stale ETag: status %d, want 200", changed.StatusCode)
	}
}

func TestWebUnknownFilesAreNotFound(t *testing.T) {
	s := newWebTestServer(t)
	for _, path := range []string{"/static/missing.js", "/static/", "/static/../go.mod", "/static/%2e%2e/web.go", "/index.html"} {
		resp, body := webGet(t, s, path, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"not_found"`) {
			t.Errorf("GET %s: status %d body %q, want 404 not_found", path, resp.StatusCode, body)
		}
	}
}

// TestWebPageHasNoInlineCode keeps the page within its own policy: the CSP
// forbids inline scripts, inline event handlers and style attributes.
func TestWebPageHasNoInlineCode(t *testing.T) {
	_, body := webGet(t, newWebTestServer(t), "/", nil)
	checks := map[string]*regexp.Regexp{
		"inline script":        regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`),
		"inline event handler": regexp.MustCompile(`(?i)\son[a-z]+\s*=`),
		"style attribute":      regexp.MustCompile(`(?i)\sstyle\s*=`),
		"javascript: URL":      regexp.MustCompile(`(?i)javascript:`),
		"foreign resource":     regexp.MustCompile(`(?i)(?:src|href)\s*=\s*"(?:https?:)?//`),
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(body, -1) {
		if !strings.Contains(tag, ` src="/static/`) {
			t.Errorf("index.html has a script tag without a file of its own: %q", tag)
		}
	}
	for name, re := range checks {
		if m := re.FindString(body); m != "" {
			t.Errorf("index.html has a %s: %q", name, m)
		}
	}
}
