package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"companydocs"
	"companydocs/httpapi"
	"companydocs/internal/e2e"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// textCap is one capped text of a request: where it goes, and the
// request carrying a value of n characters.
type textCap struct {
	field string // as the refusal names it
	limit int
	// send makes the request with a value of n characters and returns
	// its status and body.
	send func(t *testing.T, n int) (int, []byte)
}

// TestTextCapsOverHTTP: every text a client or operator writes that the
// service stores is accepted at its cap and refused one character over
// it with 422 validation_error, in a sentence naming the field and the
// cap; the caps count characters (the values are 'ä', two bytes each,
// but for the ASCII-only header), as OpenAPI's maxLength does, and the
// OpenAPI document refuses the same over-cap requests.
func TestTextCapsOverHTTP(t *testing.T) {
	ts, _ := e2e.FlowServer(t, "--webhook-allow-http", "--webhook-allow-private")
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	client := ts.Session(t, "acme", 10)
	op := ts.OperatorSession(t, "ops")
	orders, operator := "/api/v1/documents/orders/", "/api/v1/operator/orders/"
	text := func(n int) string { return strings.Repeat("ä", n) }
	clear := func(t *testing.T) { // ends the account's open orders, so that its slot is free
		t.Helper()
		var list struct{ Orders []companydocs.Order }
		ts.Call(t, "GET", orders, client, nil, &list)
		for _, o := range list.Orders {
			if !companydocs.TerminalStatus(o.Status) {
				ts.Act(t, 200, "POST", operator+o.ID+"/cancel", op, nil)
			}
		}
	}
	open := func(t *testing.T) string { // a new open one-off order of the profile
		t.Helper()
		clear(t)
		var o companydocs.Order
		if status, raw := ts.Call(t, "POST", orders, client, e2e.OrderJSON(profile, "AD", "ad-single"), &o); status != 201 {
			t.Fatalf("create: %d %s", status, raw)
		}
		return o.ID
	}
	paid := func(t *testing.T) string {
		id := open(t)
		ts.Act(t, 200, "POST", operator+id+"/pay", op, nil)
		return id
	}
	body := func(field, value string) string {
		b, _ := json.Marshal(map[string]string{field: value})
		return string(b)
	}
	post := func(path, token, b string, headers ...string) func(*testing.T, int) (int, []byte) {
		return func(t *testing.T, _ int) (int, []byte) { return ts.Call(t, "POST", path, token, b, nil, headers...) }
	}
	orderField := func(field string, n int) string {
		req := map[string]string{"company_profile_id": profile, "document_type": "AD", "plan_id": "ad-single"}
		req[field] = strings.Repeat("a", n)
		if field == "discovery_candidate_id" {
			req[field] = "dc_" + strings.Repeat("a", n-3)
		}
		b, _ := json.Marshal(req)
		return string(b)
	}
	hook := func(field string, n int) string {
		url := "http://127.0.0.1:9/"
		if field == "url" {
			return body("url", url+strings.Repeat("a", n-len(url)))
		}
		b, _ := json.Marshal(map[string]string{"url": url, field: text(n)})
		return string(b)
	}
	caps := []textCap{
		{"note", companydocs.MaxNote, func(t *testing.T, n int) (int, []byte) {
			return post(orders+open(t)+"/cancel", client, body("note", text(n)))(t, n)
		}},
		{"note", companydocs.MaxNote, func(t *testing.T, n int) (int, []byte) {
			return post(operator+open(t)+"/pay", op, body("note", text(n)))(t, n)
		}},
		{"note", companydocs.MaxNote, func(t *testing.T, n int) (int, []byte) {
			return post(operator+paid(t)+"/request", op, body("note", text(n)))(t, n)
		}},
		{"note", companydocs.MaxNote, func(t *testing.T, n int) (int, []byte) {
			return post(operator+paid(t)+"/cancel", op, body("note", text(n)))(t, n)
		}},
		{"reason", companydocs.MaxNote, func(t *testing.T, n int) (int, []byte) {
			return post(operator+paid(t)+"/fail", op, body("reason", text(n)))(t, n)
		}},
		{"url", companydocs.MaxWebhookURL, func(t *testing.T, n int) (int, []byte) {
			return post("/api/v1/webhooks/", client, hook("url", n))(t, n)
		}},
		{"description", companydocs.MaxWebhookDescription, func(t *testing.T, n int) (int, []byte) {
			return post("/api/v1/webhooks/", client, hook("description", n))(t, n)
		}},
		{"Idempotency-Key", companydocs.MaxIdempotencyKey, func(t *testing.T, n int) (int, []byte) {
			clear(t)
			return post(orders, client, e2e.OrderJSON(profile, "AD", "ad-single"), "Idempotency-Key", strings.Repeat("k", n))(t, n)
		}},
	}
	for _, field := range []string{"company_profile_id", "document_type", "plan_id"} {
		caps = append(caps, textCap{field, companydocs.MaxRequestField, func(t *testing.T, n int) (int, []byte) {
			return post(orders+"preview/", client, orderField(field, n))(t, n)
		}})
	}
	caps = append(caps, textCap{"discovery_candidate_id", companydocs.DiscoveryIDLength, func(t *testing.T, n int) (int, []byte) {
		return post(orders+"preview/", client, orderField("discovery_candidate_id", n))(t, n)
	}})
	for _, c := range caps {
		t.Run(c.field, func(t *testing.T) {
			refusal := fmt.Sprintf("is longer than %d characters", c.limit)
			status, raw := c.send(t, c.limit)
			if bytes.Contains(raw, []byte(refusal)) || status >= 500 {
				t.Errorf("at the cap (%d): %d %s, want it past the length check", c.limit, status, raw)
			}
			status, raw = c.send(t, c.limit+1)
			var e e2e.ErrorResult
			json.Unmarshal(raw, &e)
			if status != 422 || e.Error.Code != companydocs.EVALIDATION || !strings.Contains(e.Error.Message, c.field) || !strings.Contains(e.Error.Message, refusal) {
				t.Errorf("one over the cap: %d %s, want 422 validation_error naming %s and %q", status, raw, c.field, refusal)
			}
		})
	}
	checkOverCapRequestsAgainstOpenAPI(t, ts)
	ts.CheckAgainstOpenAPI(t)
}

// checkOverCapRequestsAgainstOpenAPI: the OpenAPI document states each
// cap, so that it refuses every request the server refused as too long.
func checkOverCapRequestsAgainstOpenAPI(t *testing.T, ts *e2e.TestServer) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	ts.Mu.Lock()
	exchanges := append([]e2e.Exchange{}, ts.Exchanges...)
	ts.Mu.Unlock()
	n := 0
	for _, ex := range exchanges {
		if ex.Status != 422 || !bytes.Contains(ex.RespBody, []byte("characters (it has")) {
			continue
		}
		n++
		req, route, params, err := e2e.FindRoute(router, ex)
		if err != nil {
			t.Fatal(err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err == nil {
			t.Errorf("%s %s (%.80s): the server refused it as too long, openapi.json accepts it", ex.Method, ex.Path, ex.RespBody)
		}
	}
	if n == 0 {
		t.Error("no over-cap request was recorded")
	}
}

// TestAccountNameCap: an account name is accepted at 64 characters and
// refused at 65, from the command line as from the domain, with the
// field and the cap named.
func TestAccountNameCap(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("a", companydocs.MaxAccountName)
	if _, _, line, code := e2e.RunCLI(t, "accounts", "create", "--data-dir", dir, "--name", name); code != 0 {
		t.Fatalf("a name of %d characters: exit %d: %s", len(name), code, line)
	}
	_, _, line, code := e2e.RunCLI(t, "accounts", "create", "--data-dir", dir, "--name", name+"a")
	if want := fmt.Sprintf(`Field "name" is longer than %d characters`, companydocs.MaxAccountName); code != 1 || !strings.Contains(line, want) {
		t.Fatalf("a name of %d characters: exit %d, %q; want exit code 1 and %q", len(name)+1, code, line, want)
	}
}
