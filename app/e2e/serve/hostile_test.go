package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/app"
	"companydocs/internal/e2e"
)

// hostileCase is one hostile request and the answer the contract asks for.
type hostileCase struct {
	name        string
	method      string
	path        string
	contentType string // "" sends application/json
	body        string
	wantStatus  int
	wantCode    string
	chunked     bool // sent without Content-Length, in chunks
}

// hostileBodies are malformed bodies for an endpoint whose JSON object has
// the string field field and whose error code for a malformed payload is
// code.
func hostileBodies(field, valid, code string) []hostileCase {
	status := http.StatusUnprocessableEntity
	if code == companydocs.EINVALIDQUERY {
		status = http.StatusBadRequest
	}
	rest := strings.TrimPrefix(valid, "{"+`"`+field+`":"x"`)
	obj := func(value string) string { return `{"` + field + `":` + value + rest }
	deep := strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000)
	cases := []hostileCase{
		{name: "invalid UTF-8 in a string", body: obj("\"Bau\xff\xfeGmbH\"")},
		{name: "invalid UTF-8 outside strings", body: "\xff" + obj(`"Bau"`)},
		{name: "overlong UTF-8 encoding of a slash", body: obj("\"\xc0\xafetc\"")},
		{name: "UTF-16 surrogate half", body: obj(`"Bau\ud800GmbH"`)},
		{name: "escaped NUL", body: obj(`"Bau\u0000GmbH"`)},
		{name: "raw NUL byte", body: obj("\"Bau\x00GmbH\"")},
		{name: "escape sequence", body: obj(`"\u001b[31mBau"`)},
		{name: "bell and backspace", body: obj(`"Bau\u0007\bGmbH"`)},
		{name: "raw newline in a string", body: obj("\"Bau\nGmbH\"")},
		{name: "deeply nested arrays as the value", body: obj(deep)},
		{name: "deeply nested objects as the body", body: strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000)},
		{name: "number where a string belongs", body: obj(`7`)},
		{name: "huge number where a string belongs", body: obj(`1e999`)},
		{name: "boolean where a string belongs", body: obj(`true`)},
		{name: "object where a string belongs", body: obj(`{"x":"y"}`)},
		{name: "array where a string belongs", body: obj(`["Bau"]`)},
		{name: "duplicate key", body: `{"` + field + `":"x",` + strings.TrimPrefix(valid, "{")},
		{name: "duplicate key differing only in case", body: `{"` + strings.ToUpper(field) + `":"x",` + strings.TrimPrefix(valid, "{")},
		{name: "unknown field", body: strings.TrimSuffix(valid, "}") + `,"admin":true}`},
		{name: "array body", body: "[" + valid + "]"},
		{name: "string body", body: `"` + field + `"`},
		{name: "null body", body: `null`},
		{name: "two objects", body: valid + valid},
		{name: "trailing garbage", body: valid + " x"},
		{name: "truncated", body: valid[:len(valid)-3]},
		{name: "empty body", body: ""},
		{name: "whitespace body", body: " \n\t "},
		{name: "byte order mark", body: "\xef\xbb\xbf" + valid},
	}
	for i := range cases {
		cases[i].wantStatus, cases[i].wantCode = status, code
	}
	// A media type the route does not take is refused by the body gate,
	// before the body is read, with the same code on every route.
	unsupported := func(name, body, contentType string) hostileCase {
		return hostileCase{name: name, body: body, contentType: contentType, wantStatus: http.StatusUnsupportedMediaType, wantCode: companydocs.EUNSUPPORTEDMEDIA}
	}
	return append(cases,
		unsupported("wrong Content-Type text/plain", valid, "text/plain"),
		unsupported("wrong Content-Type form", field+"=Bau", "application/x-www-form-urlencoded"),
		unsupported("malformed Content-Type", valid, "application/json; charset"),
		unsupported("JSON in a multipart body", "--x\r\n\r\n"+valid+"\r\n--x--", "multipart/form-data; boundary=x"),
		hostileCase{name: "1 MB body", body: obj(`"` + strings.Repeat("a", 1<<20) + `"`),
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: companydocs.ETOOLARGE},
		hostileCase{name: "10 MB body", body: obj(`"` + strings.Repeat("a", 10<<20) + `"`),
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: companydocs.ETOOLARGE},
		hostileCase{name: "10 MB line of garbage", body: strings.Repeat("\x00\xff{[", 10<<18),
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: companydocs.ETOOLARGE},
		hostileCase{name: "chunked 10 MB body", body: obj(`"` + strings.Repeat("a", 10<<20) + `"`), chunked: true,
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: companydocs.ETOOLARGE},
	)
}

// TestHostileRequests sends malformed, oversized and ambiguous requests to
// every endpoint that reads a body: each gets its contract's error code in
// the error shape, never a 500 and never a hang; the server then still
// answers normally.
func TestHostileRequests(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	s := e2e.StartServer(t, dir)
	key, err := s.Accounts.CreateAccount("hostile", 5)
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	s.MustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+key+`"}`)
	auth := "Bearer " + sess.Token

	endpoints := []struct {
		path, field, valid, code string
		auth                     bool
	}{
		{"/api/v1/documents/companies/search/", "query", `{"query":"x","limit":3}`, companydocs.EINVALIDQUERY, false},
		{"/api/v1/auth/sessions/", "api_key", `{"api_key":"x"}`, companydocs.EVALIDATION, false},
		{"/api/v1/documents/orders/preview/", "company_profile_id", `{"company_profile_id":"x","document_type":"AD","plan_id":"ad-single"}`, companydocs.EVALIDATION, true},
		{"/api/v1/documents/orders/", "company_profile_id", `{"company_profile_id":"x","document_type":"AD","plan_id":"ad-single"}`, companydocs.EVALIDATION, true},
	}
	client := &http.Client{Timeout: 20 * time.Second}
	tried := 0
	for _, ep := range endpoints {
		for _, c := range hostileBodies(ep.field, ep.valid, ep.code) {
			t.Run(ep.path+" "+c.name, func(t *testing.T) {
				hdr := http.Header{}
				if ep.auth {
					hdr.Set("Authorization", auth)
				}
				c.method, c.path = "POST", ep.path
				checkHostile(t, client, s.Base, c, hdr)
			})
			tried++
		}
	}
	for _, c := range hostileOtherRequests() {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{}
			hdr.Set("Authorization", auth)
			checkHostile(t, client, s.Base, c, hdr)
		})
		tried++
	}
	tried += checkHostileHeaders(t, s.Base, auth)
	// The server still answers normally, and no order was made.
	s.Search(t, "Rheinbahn")
	var list struct{ Orders []any }
	s.MustJSON(t, http.StatusOK, &list, "GET", "/api/v1/documents/orders/", "", "Authorization", auth)
	if len(list.Orders) != 0 {
		t.Errorf("hostile requests made %d orders", len(list.Orders))
	}
	if strings.Contains(s.Logs.String(), `"status":500`) {
		t.Error("a hostile request was answered 500")
	}
	t.Logf("hostile requests: %d tried", tried)
}

// hostileOtherRequests are hostile paths and query strings.
func hostileOtherRequests() []hostileCase {
	const orders = "/api/v1/documents/orders/"
	notFound := func(name, path string) hostileCase {
		return hostileCase{name: name, method: "GET", path: path, wantStatus: http.StatusNotFound, wantCode: companydocs.ENOTFOUND}
	}
	invalid := func(name, path string) hostileCase {
		return hostileCase{name: name, method: "GET", path: path, wantStatus: http.StatusUnprocessableEntity, wantCode: companydocs.EVALIDATION}
	}
	return []hostileCase{
		notFound("order id with NUL", orders+"ord_%00/"),
		notFound("order id with invalid UTF-8", orders+"%ff%fe/"),
		{name: "request line of 10 kB", method: "GET", path: orders + strings.Repeat("a", 10<<10) + "/",
			wantStatus: http.StatusRequestEntityTooLarge, wantCode: companydocs.ETOOLARGE},
		notFound("path traversal", orders+"..%2f..%2fetc%2fpasswd"),
		notFound("unknown path with control characters", "/api/v1/%1b%5b31m"),
		invalid("limit beyond int64", orders+"?limit=99999999999999999999999"),
		invalid("negative limit", orders+"?limit=-1"),
		invalid("limit with NUL", orders+"?limit=1%00"),
		invalid("cursor with invalid UTF-8", orders+"?cursor=%ff%fe"),
		invalid("cursor of another shape", orders+"?cursor=b3JkXzAwMDAw"),
		{name: "Idempotency-Key with non-ASCII bytes", method: "POST", path: orders,
			body:       `{"company_profile_id":"x","document_type":"AD","plan_id":"ad-single"}`,
			wantStatus: http.StatusUnprocessableEntity, wantCode: companydocs.EVALIDATION},
	}
}

// checkHostile sends c and checks the answer's status and error shape.
func checkHostile(t *testing.T, client *http.Client, base string, c hostileCase, hdr http.Header) {
	t.Helper()
	var body io.Reader = strings.NewReader(c.body)
	if c.chunked {
		body = io.MultiReader(body) // no length: the client sends chunks
	}
	req, err := http.NewRequest(c.method, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.body != "" || c.method == "POST" {
		ct := c.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if strings.HasPrefix(c.name, "Idempotency-Key") {
		req.Header.Set("Idempotency-Key", "schl\xfcssel-\xff")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	defer resp.Body.Close()
	checkErrorShape(t, resp, c.wantStatus, c.wantCode)
}

// checkErrorShape reads an error answer: status, JSON content type,
// {"error":{"code","message"}} with the wanted code.
func checkErrorShape(t *testing.T, resp *http.Response, status int, code string) {
	t.Helper()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	var body struct {
		Error *struct{ Code, Message string } `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Error == nil {
		t.Fatalf("status %d, body is not the error shape: %.300q", resp.StatusCode, raw)
	}
	if resp.StatusCode != status || body.Error.Code != code || body.Error.Message == "" {
		t.Errorf("status %d code %q (%s), want %d %s", resp.StatusCode, body.Error.Code, body.Error.Message, status, code)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
}

// checkHostileHeaders sends oversized and malformed header blocks over a
// raw connection: the server answers with a status below 500 or closes the
// connection, within the time limit, and does not crash. (It tolerates a
// NUL in a header value it does not read.) It returns how many were tried.
func checkHostileHeaders(t *testing.T, base, auth string) int {
	host := strings.TrimPrefix(base, "http://")
	requests := []string{
		"POST /api/v1/documents/orders/ HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + strings.Repeat("A", 64<<10) + "\r\n\r\n",
		"GET /api/v1/documents/plans/ HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Pad: y\r\n", 5000) + "\r\n",
		"GET /api/v1/documents/plans/ HTTP/1.1\r\nHost: x\r\nX-Bad: a\x00b\r\n\r\n",
		"GET /\x00 HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /api/v1/documents/companies/search/ HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{}",
		"POST /api/v1/documents/companies/search/ HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n{}",
		"POST /api/v1/documents/companies/search/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nFFFFFFFF\r\n{}",
		"POST /api/v1/documents/companies/search/ HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
		"GARBAGE\r\n\r\n",
	}
	for i, raw := range requests {
		status, err := e2e.RawExchange(host, raw)
		if err != nil {
			t.Errorf("raw request %d: %v", i, err)
			continue
		}
		if status >= 500 {
			t.Errorf("raw request %d (%.60q): status %d, want a status below 500 or a closed connection", i, raw, status)
		}
	}
	return len(requests)
}

// TestIngestReportsHostileLines ingests a real-format dump with hostile
// lines between real records: every hostile line is reported as skipped,
// every real record is indexed, and the generation is published.
func TestIngestReportsHostileLines(t *testing.T) {
	const real = 40
	lines := e2e.SampleLines(t, real)
	hostile := []string{
		"{\"company_number\":\"K1101R_HRB150148\",\"name\":\"Bau\xff\xfe GmbH\"", // truncated, invalid UTF-8
		"\x00\x00\x00\x00",
		"\x1b[31m{}",
		strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000),
		`{"company_number":7,"name":8,"current_status":true}`,
		`{"company_number":"","name":"","all_attributes":{}}`,
		`["a","b"]`,
		`null`,
		"{\"company_number\":\"" + strings.Repeat("9", 10<<20) + "\"}",
		strings.Repeat("x", 17<<20),
	}
	var dump bytes.Buffer
	for i, line := range lines {
		dump.Write(line)
		dump.WriteByte('\n')
		if i%4 == 0 && i/4 < len(hostile) {
			dump.WriteString(hostile[i/4])
			dump.WriteByte('\n')
		}
	}
	path := filepath.Join(t.TempDir(), "hostile.jsonl")
	if err := os.WriteFile(path, dump.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := app.RunCommand(context.Background(), []string{"ingest", "--data-dir", dir, "--log-format", "json", path}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("ingest: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	counts := regexp.MustCompile(`registry records\s+read (\d+)\s+indexed (\d+)\s+merged 0\s+skipped (\d+)`).FindStringSubmatch(out)
	want := []string{strconv.Itoa(real + len(hostile)), strconv.Itoa(real), strconv.Itoa(len(hostile))}
	if len(counts) != 4 || !slices.Equal(counts[1:], want) {
		t.Errorf("summary counts (read, indexed, skipped) %q, want %q:\n%s", counts, want, out)
	}
	for _, reason := range []string{"invalid JSON", "no register reference", "line longer than the maximum line size"} {
		if !strings.Contains(out, reason) {
			t.Errorf("the summary does not report %q:\n%s", reason, out)
		}
	}
	if !strings.Contains(out, fmt.Sprintf("with %d profiles", real)) {
		t.Errorf("no generation of %d profiles published:\n%s", real, out)
	}
}
