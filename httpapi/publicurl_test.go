package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gofiber/fiber/v2"
)

func TestParsePublicURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://docs.example.com", "https://docs.example.com"},
		{"https://docs.example.com/", "https://docs.example.com"},
		{"https://docs.example.com/companydocs/", "https://docs.example.com/companydocs"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080"},
		{"https://[2001:db8::1]:8443", "https://[2001:db8::1]:8443"},
	} {
		got, err := ParsePublicURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParsePublicURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "/companydocs", "docs.example.com", "ftp://docs.example.com", "https://", "https:///x",
		"https://u@docs.example.com", "https://docs.example.com/?a=1", "https://docs.example.com/?", "https://docs.example.com/#a",
		"https://docs.example.com#", "https://docs example.com", "https://docs.example.com:port", "mailto:ops@example.com"} {
		if got, err := ParsePublicURL(in); err == nil {
			t.Errorf("ParsePublicURL(%q) = %q, want an error", in, got)
		}
	}
	if _, err := NewServer(Config{PublicURL: "https://docs.example.com/?a", UploadsInFlight: 1, DownloadsInFlight: 1, DownloadsPerAccount: 1}, Deps{}); err == nil {
		t.Error("NewServer took a public URL with a query")
	}
}

// TestFiberBelievesNoForwardedHeadersFromStrangers: with no trusted proxy
// configured, Fiber's own view of the request (BaseURL, Protocol,
// Hostname, Secure, IP) is the socket's and the Host header's, whatever
// X-Forwarded-* say, so that no later use of them hands a client's
// header back as the service's address.
func TestFiberBelievesNoForwardedHeadersFromStrangers(t *testing.T) {
	s := newTestServer(t, Deps{})
	s.app.Get("/probe", func(c *fiber.Ctx) error {
		return c.SendString(c.BaseURL() + " " + c.Protocol() + " " + c.Hostname() + " " + strconv.FormatBool(c.Secure()) + " " + c.IP())
	})
	req := httptest.NewRequest(http.MethodGet, "http://companydocs.example/probe", nil)
	for name, value := range map[string]string{"X-Forwarded-Host": "evil.example", "X-Forwarded-Proto": "https",
		"X-Forwarded-Protocol": "https", "X-Forwarded-Ssl": "on", "X-Url-Scheme": "https", "X-Forwarded-For": "198.51.100.1"} {
		req.Header.Set(name, value)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if want := "http://companydocs.example http companydocs.example false 0.0.0.0"; string(body) != want {
		t.Errorf("Fiber's view of the request: %q, want %q", body, want)
	}
}
