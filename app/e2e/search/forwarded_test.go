package search

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"companydocs/internal/e2e"
)

// manifestURLs fetches the reconciliation manifest from client with the
// request's Host set to host (empty: the server's address) and headers
// (name, value pairs), and returns its URLs by name with the answer's
// headers.
func manifestURLs(t *testing.T, client *http.Client, base, host string, headers ...string) (map[string]string, http.Header) {
	t.Helper()
	req, err := http.NewRequest("GET", base+e2e.ReconcilePath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s (Host %q, %q): %d %v: %s", e2e.ReconcilePath, host, headers, resp.StatusCode, err, raw)
	}
	return manifestURLsIn(t, raw), resp.Header
}

// manifestURLsIn returns the URLs of a manifest by name.
func manifestURLsIn(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	var m struct {
		Documentation string
		View          struct{ URL string }
		Preview       struct{ URL string }
		Suggest       struct{ Entity, Property servicePath }
		Extend        struct {
			ProposeProperties servicePath `json:"propose_properties"`
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"view":               m.View.URL,
		"preview":            m.Preview.URL,
		"suggest entity":     m.Suggest.Entity.ServiceURL + m.Suggest.Entity.ServicePath,
		"suggest property":   m.Suggest.Property.ServiceURL + m.Suggest.Property.ServicePath,
		"propose properties": m.Extend.ProposeProperties.ServiceURL + m.Extend.ProposeProperties.ServicePath,
		"documentation":      m.Documentation,
	}
}

// manifestRaw asks for the manifest over a connection of its own with
// the Host header host as it is, and returns the status and body.
func manifestRaw(t *testing.T, addr, host string) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET "+e2e.ReconcilePath+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}

// checkURLsStartWith checks that every URL of the manifest starts with
// prefix.
func checkURLsStartWith(t *testing.T, urls map[string]string, prefix, what string) {
	t.Helper()
	for name, u := range urls {
		if !strings.HasPrefix(u, prefix) {
			t.Errorf("%s: the manifest's %s is %q, want it under %s", what, name, u, prefix)
		}
	}
}

// checkVary checks that the answer's Vary names every header of want and
// none of never.
func checkVary(t *testing.T, h http.Header, want, never []string, what string) {
	t.Helper()
	named := map[string]bool{}
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			named[http.CanonicalHeaderKey(strings.TrimSpace(f))] = true
		}
	}
	for _, w := range want {
		if !named[w] {
			t.Errorf("%s: Vary %q does not name %s", what, h.Values("Vary"), w)
		}
	}
	for _, n := range never {
		if named[n] {
			t.Errorf("%s: Vary %q names %s, which the answer does not depend on", what, h.Values("Vary"), n)
		}
	}
}

// TestManifestForwardedHeadersOnlyFromTrustedProxies: the manifest's URLs
// (view, preview, suggest, propose properties, documentation) come from
// the request's own Host and the socket's scheme; X-Forwarded-Host and
// X-Forwarded-Proto are believed only from a trusted proxy, and with
// --public-url every URL starts with it whatever the request says. The
// answer says what it depends on (Vary) and may be cached for a while.
func TestManifestForwardedHeadersOnlyFromTrustedProxies(t *testing.T) {
	forwarded := []string{"X-Forwarded-Host", "evil.example", "X-Forwarded-Proto", "https"}
	fromRequest := []string{"Host", "X-Forwarded-Host", "X-Forwarded-Proto"}
	checkCaching := func(t *testing.T, h http.Header) {
		t.Helper()
		if cc := h.Get("Cache-Control"); cc != "public, max-age=300" {
			t.Errorf("Cache-Control %q, want public, max-age=300", cc)
		}
	}

	t.Run("no trusted proxy", func(t *testing.T) {
		dir := t.TempDir()
		e2e.MustBuild(t, dir, 50, e2e.SampleFile(t))
		s := e2e.StartServer(t, dir)
		urls, h := manifestURLs(t, s.Client, s.Base, "", forwarded...)
		checkURLsStartWith(t, urls, s.Base+"/", "X-Forwarded-Host and -Proto from a client")
		checkVary(t, h, fromRequest, nil, "built from the request")
		checkCaching(t, h)
		// the Host header itself is the request's own host: it is used,
		// and Vary says so
		urls, _ = manifestURLs(t, s.Client, s.Base, "companydocs.example:8443", forwarded...)
		checkURLsStartWith(t, urls, "http://companydocs.example:8443/", "another Host")
		// no Host, or one that is no host name, falls back to the
		// server's address (Go's client sends an invalid Host as none)
		urls, _ = manifestURLs(t, s.Client, s.Base, "evil.example/x?y#z", forwarded...)
		checkURLsStartWith(t, urls, s.Base+"/", "an empty Host")
		for _, host := range []string{"evil.example/x", "evil.example@x", `evil.example"><x`, "evil.example:port", "evil.example x"} {
			status, raw := manifestRaw(t, s.Addr(), host)
			if status == http.StatusOK {
				checkURLsStartWith(t, manifestURLsIn(t, raw), s.Base+"/", "Host "+host)
			} else if strings.Contains(string(raw), "evil") {
				t.Errorf("Host %q: %d answers with the Host: %s", host, status, raw)
			}
		}
	})
	t.Run("trusted proxy", func(t *testing.T) {
		dir := t.TempDir()
		e2e.MustBuild(t, dir, 50, e2e.SampleFile(t))
		s := e2e.StartServer(t, dir, "--trusted-proxies", "127.0.0.1")
		proxy, other := e2e.LoopbackClient(t, "127.0.0.1"), e2e.LoopbackClient(t, "127.0.0.2")
		urls, h := manifestURLs(t, proxy, s.Base, "", forwarded...)
		checkURLsStartWith(t, urls, "https://evil.example/", "X-Forwarded-Host and -Proto from the trusted proxy")
		checkVary(t, h, fromRequest, nil, "built from the request")
		checkCaching(t, h)
		// a proxy that appends: the right-most value is the one it wrote
		urls, _ = manifestURLs(t, proxy, s.Base, "", "X-Forwarded-Host", "evil.example, docs.example:8443", "X-Forwarded-Proto", "https")
		checkURLsStartWith(t, urls, "https://docs.example:8443/", "two X-Forwarded-Host values from the trusted proxy")
		// values that are no host name or scheme are not used
		urls, _ = manifestURLs(t, proxy, s.Base, "", "X-Forwarded-Host", "evil.example/x", "X-Forwarded-Proto", "gopher")
		checkURLsStartWith(t, urls, s.Base+"/", "unreadable forwarded values from the trusted proxy")
		urls, _ = manifestURLs(t, other, s.Base, "", forwarded...)
		checkURLsStartWith(t, urls, s.Base+"/", "X-Forwarded-Host and -Proto from an address that is no trusted proxy")
	})
	t.Run("public URL", func(t *testing.T) {
		dir := t.TempDir()
		e2e.MustBuild(t, dir, 50, e2e.SampleFile(t))
		const public = "https://docs.example.com/companydocs"
		s := e2e.StartServer(t, dir, "--public-url", public+"/", "--trusted-proxies", "127.0.0.1")
		for _, host := range []string{"", "evil.example"} {
			urls, h := manifestURLs(t, s.Client, s.Base, host, forwarded...)
			checkURLsStartWith(t, urls, public+"/", "--public-url")
			checkVary(t, h, nil, fromRequest, "built from --public-url")
			checkCaching(t, h)
			if urls["suggest entity"] != public+e2e.ReconcilePath+"/suggest/entity" {
				t.Errorf("suggest entity %q, want the endpoint under %s", urls["suggest entity"], public)
			}
		}
	})
}
