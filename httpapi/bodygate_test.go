package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"companydocs"
)

// bodyKinds are the bodies the gate judges: each with its Content-Type
// header (empty: none sent) and Content-Encoding.
var bodyKinds = []struct {
	name, contentType, encoding, body string
}{
	{"json", "application/json", "", `{"query":"Bau"}`},
	{"json with charset", "application/json; charset=utf-8", "", `{"query":"Bau"}`},
	{"json+suffix", "application/problem+json", "", `{"query":"Bau"}`},
	{"no content type", "", "", `{"query":"Bau"}`},
	{"form", "application/x-www-form-urlencoded", "", `queries={"q0":{"query":"Bau"}}`},
	{"pdf", "application/pdf", "", "%PDF-1.4\n%%EOF\n"},
	{"text", "text/plain", "", `{"query":"Bau"}`},
	{"octet stream", "application/octet-stream", "", "\x00\x01"},
	{"malformed type", "application/json; charset", "", `{"query":"Bau"}`},
	{"multipart form", "multipart/form-data; boundary=x", "", "--x\r\nContent-Disposition: form-data; name=\"queries\"\r\n\r\n{}\r\n--x--\r\n"},
	{"multipart form upper case", "Multipart/Form-Data; boundary=x", "", "--x\r\n\r\n{}\r\n--x--\r\n"},
	{"multipart mixed", "multipart/mixed; boundary=x", "", "--x\r\n\r\n{}\r\n--x--\r\n"},
	{"gzip json", "application/json", "gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\xae\x05\x00\x43\xbf\xa6\xa3\x02\x00\x00\x00"},
	{"deflate form", "application/x-www-form-urlencoded", "deflate", "x"},
}

// wantTaken says, apart from the server's rules, which media type a route
// takes: the upload a PDF, reconciliation a form, every other POST JSON
// (or a body without Content-Type), GET and DELETE none.
func wantTaken(method, path string) string {
	switch {
	case method == http.MethodGet || method == http.MethodDelete || method == http.MethodHead:
		return ""
	case method == http.MethodPut && strings.HasSuffix(path, "/document"):
		return "application/pdf"
	case strings.HasPrefix(path, "/api/v1/reconcile"):
		return "application/x-www-form-urlencoded"
	}
	return "application/json"
}

// TestBodyGateOnEveryRoute sends every kind of body to every route,
// without a session and with one: a multipart or compressed body is 415
// everywhere, a media type the route does not take 415, a body on a route
// that takes none 413, and what a route takes passes the gate to its
// handler.
func TestBodyGateOnEveryRoute(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	routes := s.app.GetRoutes(true)
	if len(routes) < 30 {
		t.Fatalf("%d routes: the server's routes were not found", len(routes))
	}
	tried := 0
	for _, r := range routes {
		if r.Method == http.MethodHead || r.Method == http.MethodConnect || r.Method == http.MethodTrace || strings.Contains(r.Path, "*") {
			continue
		}
		path := strings.ReplaceAll(r.Path, ":id", "ord_x")
		for _, kind := range bodyKinds {
			for _, token := range []string{"", s.token} {
				name := fmt.Sprintf("%s %s %s session=%v", r.Method, path, kind.name, token != "")
				status, code := s.sendBody(t, r.Method, path, token, kind.contentType, kind.encoding, kind.body)
				checkGate(t, name, wantTaken(r.Method, path), kind.contentType, kind.encoding, status, code)
				tried++
			}
		}
	}
	t.Logf("%d requests", tried)
}

func checkGate(t *testing.T, name, taken, contentType, encoding string, status int, code string) {
	t.Helper()
	media := strings.ToLower(strings.TrimSpace(strings.Split(contentType, ";")[0]))
	multipart := strings.HasPrefix(media, "multipart/")
	switch {
	case multipart || encoding != "":
		wantStatus(t, name, status, code, http.StatusUnsupportedMediaType, companydocs.EUNSUPPORTEDMEDIA)
	case taken == "":
		wantStatus(t, name, status, code, http.StatusRequestEntityTooLarge, companydocs.ETOOLARGE)
	case media == taken && contentType != "application/json; charset", media == "" && taken == "application/json",
		strings.HasSuffix(media, "+json") && taken == "application/json":
		if status == http.StatusUnsupportedMediaType || status == http.StatusRequestEntityTooLarge {
			t.Errorf("%s: %d %s, want the body past the gate", name, status, code)
		}
	default:
		wantStatus(t, name, status, code, http.StatusUnsupportedMediaType, companydocs.EUNSUPPORTEDMEDIA)
	}
}

func wantStatus(t *testing.T, name string, status int, code string, want int, wantCode string) {
	t.Helper()
	if status != want || code != wantCode {
		t.Errorf("%s: %d %s, want %d %s", name, status, code, want, wantCode)
	}
}

// sendBody sends body with the headers given and returns the answer's
// status and error code.
func (s *orderServer) sendBody(t *testing.T, method, path, token, contentType, encoding, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out errorBody
	_ = json.NewDecoder(resp.Body).Decode(&out) // a success's body is no error body
	return resp.StatusCode, out.Error.Code
}

// TestBodyGateJudgesTheAnnouncedLength: a Content-Length over the route's
// cap is refused before the body is read.
func TestBodyGateJudgesTheAnnouncedLength(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	for _, c := range []struct {
		method, path string
		length       int
		want         int
	}{
		{"POST", "/api/v1/documents/companies/search/", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"POST", "/api/v1/documents/companies/search/batch", BatchBodyLimit + 1, http.StatusRequestEntityTooLarge},
		{"POST", "/api/v1/reconcile/", 64<<10 + 1, http.StatusRequestEntityTooLarge},
		{"PUT", "/api/v1/operator/orders/ord_x/document", MaxUploadSize + 1, http.StatusRequestEntityTooLarge},
		{"POST", "/no/such/route", 64<<10 + 1, http.StatusRequestEntityTooLarge},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(strings.Repeat(" ", c.length)))
		req.Header.Set("Content-Type", wantTaken(c.method, c.path))
		resp, err := s.app.Test(req, 2000)
		if err != nil {
			t.Fatalf("%s %s: %v", c.method, c.path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s announcing %d bytes: %d, want %d", c.method, c.path, c.length, resp.StatusCode, c.want)
		}
	}
}

// TestBodyGateReadsAbsoluteFormRequests: a request line in absolute form
// ("POST http://host/path", which HTTP/1.1 servers take) is judged by the
// route it reaches: a search batch of 100 KiB, over a JSON route's cap
// but under the batch's and sent a moment after its headers, is
// answered, not refused 413 by its headers.
func TestBodyGateReadsAbsoluteFormRequests(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.app.Listener(ln)
	t.Cleanup(func() { s.app.Shutdown() })
	body := `{"queries":[{"query":"` + strings.Repeat("Bau ", 25<<10) + `"}]}`
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST http://%s%s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		ln.Addr(), batchPath, ln.Addr(), len(body))
	time.Sleep(50 * time.Millisecond) // the body comes after the headers were judged
	io.WriteString(conn, body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Errorf("an absolute-form batch of %d bytes: %d %.200s, want 200", len(body), resp.StatusCode, raw)
	}
}

// TestStripeEventTooLargeNamesItsCap: an event over PaymentEventBodyLimit
// is refused with a sentence naming that cap (256 KiB), in English and
// German, whether its Content-Length announces it or it comes chunked
// and passes the cap while read; the other routes' sentence names theirs
// (64 KiB), which the events route's once named too.
func TestStripeEventTooLargeNamesItsCap(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln) // its lingering close lets a client still sending read the 413
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	body := `{"id":"evt_1","type":"checkout.session.completed","pad":"` + strings.Repeat("x", PaymentEventBodyLimit) + `"}`
	limit := companydocs.SizeText(PaymentEventBodyLimit)
	for _, c := range []struct {
		name, path, lang string
		chunked          bool
		want             string // in the message
	}{
		{"announced, English", routePaymentEvents, "en", false, "at most " + limit + "."},
		{"announced, German", routePaymentEvents, "de", false, "höchstens " + limit + " an."},
		{"chunked, English", routePaymentEvents, "en", true, "at most " + limit + "."},
		{"chunked, German", routePaymentEvents, "de", true, "höchstens " + limit + " an."},
		{"another route", "/api/v1/documents/orders/preview", "en", false, "at most 64 KiB of JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", "http://"+ln.Addr().String()+c.path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if c.chunked {
				req.ContentLength, req.TransferEncoding = -1, []string{"chunked"}
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept-Language", c.lang)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out errorBody
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			wantStatus(t, c.name, resp.StatusCode, out.Error.Code, http.StatusRequestEntityTooLarge, companydocs.ETOOLARGE)
			if !strings.Contains(out.Error.Message, c.want) {
				t.Errorf("message %q, want it to say %q", out.Error.Message, c.want)
			}
			if c.path == routePaymentEvents && strings.Contains(out.Error.Message, "64 KiB") {
				t.Errorf("message %q names the other routes' cap", out.Error.Message)
			}
		})
	}
}

// TestStripeEventBodyCap: the Stripe events route takes JSON up to
// PaymentEventBodyLimit (a large event passes the gate, past the other
// routes' 64 KiB), and refuses more
// before its handler runs.
func TestStripeEventBodyCap(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	event := func(n int) string {
		return `{"id":"evt_1","type":"checkout.session.completed","pad":"` + strings.Repeat("x", n) + `"}`
	}
	status, code := s.sendBody(t, "POST", routePaymentEvents, "", "application/json; charset=utf-8", "", event(200<<10))
	if status != http.StatusNotFound || code != companydocs.ENOTFOUND { // past the gate: no provider is configured here
		t.Errorf("a 200 KiB event: %d %s, want it past the gate (404: no Stripe plan)", status, code)
	}
	status, code = s.sendBody(t, "POST", routePaymentEvents, "", "application/json", "", event(PaymentEventBodyLimit))
	wantStatus(t, "an event over the cap", status, code, http.StatusRequestEntityTooLarge, companydocs.ETOOLARGE)
	status, code = s.sendBody(t, "POST", "/api/v1/documents/orders/preview", "", "application/json", "", event(200<<10))
	wantStatus(t, "the same body on another route", status, code, http.StatusRequestEntityTooLarge, companydocs.ETOOLARGE)
}
