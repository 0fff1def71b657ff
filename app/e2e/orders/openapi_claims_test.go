package orders

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/data"
	"companydocs/httpapi"
	"companydocs/internal/e2e"
	"companydocs/internal/stripemocktest"
	"companydocs/metrics"
	"companydocs/ordering"
	"companydocs/resolver"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOpenAPIClaims checks what httpapi/openapi.json says in prose against
// the real server, where a machine can: whether each request schema's
// unknown fields are refused, whether the documented examples are answered,
// and whether every documented error code can be reached. Every exchange
// is then validated against the document.
func TestOpenAPIClaims(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	leis := filepath.Join(t.TempDir(), "lei_sample.csv")
	if err := os.WriteFile(leis, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	e2e.MustBuild(t, dir, 2000, e2e.SampleFile(t), e2e.OffeneRegister(t, "fixtures_665.jsonl"), leis)
	_, stripeFlags := e2e.StripeEnv(t, e2e.StartStripeFront(t, 0))
	s := e2e.StartServer(t, dir, append(stripeFlags, "--plans", withStripePlan(t, oneWatchPlans(t)))...)
	c := claimClients(t, s)
	exerciseStripe(t, s, c)

	t.Run("unknown fields", func(t *testing.T) { checkUnknownFields(t, doc, s, c) })
	t.Run("examples", func(t *testing.T) { checkExamples(t, s, c) })
	t.Run("prose", func(t *testing.T) { checkProse(t, doc, s) })
	codes := reachErrorCodes(t, s, c)
	bareDir := t.TempDir()
	e2e.MustBuild(t, bareDir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	bare := e2e.StartServer(t, bareDir, "--plans", emptyPlans(t), "--search-rate", "0.01", "--search-burst", "1")
	for code, ex := range reachUnavailableCodes(t, bare) {
		codes[code] = ex
	}
	for code, ex := range reachWithSlowSearch(t, s.Accounts, s.Ordering) {
		codes[code] = ex
	}
	t.Run("error codes", func(t *testing.T) {
		var missing []string
		for _, v := range doc.Components.Schemas["ErrorBody"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
			code := fmt.Sprint(v)
			// internal is the answer to a fault of the service itself; no
			// request can cause it on purpose.
			if code != companydocs.EINTERNAL && codes[code] == "" {
				missing = append(missing, code)
			}
		}
		if len(missing) > 0 {
			t.Errorf("documented error codes never answered: %v (reached: %v)", missing, codes)
		}
	})
	s.CheckAgainstOpenAPI(t)
	bare.CheckAgainstOpenAPI(t)
}

// claimClients holds what the claims need: sessions of a client, of a
// client without credits and of an operator, an open order and the real
// profile of Rheinbahn AG (Düsseldorf HRB 562).
type claims struct {
	client, poor, operator string
	order                  string
	profile                string
}

func claimClients(t *testing.T, s *e2e.TestServer) claims {
	t.Helper()
	c := claims{client: s.Session(t, "claims", 10), poor: s.Session(t, "poor", 0), operator: s.OperatorSession(t, "claims-op")}
	top := s.FlowSearch(t, "HRB 562 Düsseldorf").Candidates
	if len(top) == 0 || top[0].Name != "Rheinbahn AG" || top[0].ProfileID == "" {
		t.Fatalf("HRB 562 Düsseldorf: %+v, want Rheinbahn AG", top)
	}
	c.profile = top[0].ProfileID
	o := s.Act(t, http.StatusCreated, "POST", "/api/v1/documents/orders/", c.client, e2e.OrderBody(c.profile, "AD", "ad-single"))
	c.order = o.ID
	return c
}

// checkUnknownFields sends every documented JSON request body with an
// extra field: a schema that says additionalProperties false must be
// refused with the field named, any other must be accepted.
func checkUnknownFields(t *testing.T, doc *openapi3.T, s *e2e.TestServer, c claims) {
	valid := map[string]map[string]any{
		"SearchRequest":      {"query": "Rheinbahn AG Düsseldorf"},
		"SearchBatchRequest": {"queries": []any{map[string]any{"query": "Rheinbahn AG Düsseldorf"}}},
		"SessionRequest":     {"api_key": "cdk_unknown"},
		"OrderRequest":       e2e.OrderBody(c.profile, "CD", "cd-single"),
		"NoteRequest":        {"note": "A note."},
		"FailRequest":        {"reason": "The register has no such entry."},
		"WebhookRequest":     {"url": "https://example.com/hook"},
		"WatchRequest":       {"company_profile_id": c.profile},
		"StripeEvent":        {"id": "evt_unsigned", "type": "checkout.session.completed", "data": map[string]any{"object": map[string]any{}}},
	}
	checked := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			ref := op.RequestBody.Value.Content.Get("application/json").Schema
			name := ref.Ref[strings.LastIndex(ref.Ref, "/")+1:]
			body, ok := valid[name]
			if !ok {
				t.Errorf("%s %s: request schema %q has no valid body in this test; add one", method, path, name)
				continue
			}
			extra := map[string]any{"zz_unknown": 1}
			for k, v := range body {
				extra[k] = v
			}
			status, raw := s.Call(t, method, strings.ReplaceAll(path, "{id}", c.order), tokenFor(path, c), extra, nil)
			closed := ref.Value.AdditionalProperties.Has != nil && !*ref.Value.AdditionalProperties.Has
			refused := status >= 400 && status < 500 && strings.Contains(string(raw), "zz_unknown")
			if closed != refused {
				t.Errorf("%s %s (%s): the document says unknown fields are refused: %v; the server answered %d %s", method, path, name, closed, status, raw)
			}
			checked++
		}
	}
	if checked < 9 {
		t.Fatalf("only %d request bodies checked", checked)
	}
}

func tokenFor(path string, c claims) string {
	switch {
	case strings.HasPrefix(path, "/api/v1/operator/"):
		return c.operator
	case strings.HasPrefix(path, "/api/v1/documents/orders"), strings.HasPrefix(path, "/api/v1/webhooks"), strings.HasPrefix(path, "/api/v1/watches"):
		return c.client
	}
	return ""
}

// checkExamples asks the server what the document's examples claim: each
// search query example finds a company, the profile id example is an
// orderable profile, the order id example has the shape of an order id
// (a client that does not own it gets 404, not a validation error).
func checkExamples(t *testing.T, s *e2e.TestServer, c claims) {
	var raw any
	if err := json.Unmarshal(httpapi.OpenAPI, &raw); err != nil {
		t.Fatal(err)
	}
	examples := map[string][]string{}
	collectExamples(raw, "", examples)
	queries := examples["components.schemas.SearchRequest.properties.query"]
	if len(queries) == 0 {
		t.Fatalf("no query examples found among %d example sites", len(examples))
	}
	for _, q := range queries {
		res := s.FlowSearch(t, q)
		if len(res.Candidates) == 0 || len(res.Understanding.Notes) > 0 {
			t.Errorf("documented query example %q: %d candidates, notes %q; want it found", q, len(res.Candidates), res.Understanding.Notes)
		}
	}
	profileID := regexp.MustCompile(`^dp_[a-z0-9]+$`)
	orderID := regexp.MustCompile(`^ord_[0-9a-z]+$`)
	for site, values := range examples {
		for _, v := range values {
			switch {
			case profileID.MatchString(v):
				var p companydocs.Preview
				status, body := s.Call(t, "POST", "/api/v1/documents/orders/preview/", c.client, e2e.OrderBody(v, "CD", "cd-single"), &p)
				if status != http.StatusOK || !p.OrderingEligible {
					t.Errorf("%s: documented profile id %s: preview %d %s; want an orderable profile", site, v, status, body)
				}
			case orderID.MatchString(v):
				s.WantError(t, http.StatusNotFound, companydocs.ENOTFOUND, "GET", "/api/v1/documents/orders/"+v+"/", "", "Authorization", "Bearer "+c.client)
			}
		}
	}
}

// collectExamples gathers the string examples of the document by the
// dotted path of the object that holds them.
func collectExamples(v any, at string, out map[string][]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if k == "examples" || k == "example" {
				path := strings.TrimPrefix(at, ".")
				out[path] = append(out[path], flatten(child)...)
				continue
			}
			collectExamples(child, at+"."+k, out)
		}
	case []any:
		for i, child := range v {
			collectExamples(child, fmt.Sprintf("%s.%d", at, i), out)
		}
	}
}

func flatten(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return nil
}

// reachErrorCodes makes the server answer each error code the main server
// can answer; it returns code -> the request that got it.
func reachErrorCodes(t *testing.T, s *e2e.TestServer, c claims) map[string]string {
	got := map[string]string{}
	try := func(method, path, token string, body any, headers ...string) {
		t.Helper()
		var e e2e.ErrorResult
		status, raw := s.Call(t, method, path, token, body, &e, headers...)
		if status < 400 || e.Error.Code == "" || e.Error.Message == "" {
			t.Errorf("%s %s: %d %s, want an error", method, path, status, raw)
			return
		}
		got[e.Error.Code] = fmt.Sprintf("%s %s -> %d", method, path, status)
	}
	orders := "/api/v1/documents/orders/"
	try("POST", "/api/v1/documents/companies/search/", "", map[string]any{"query": ""})
	try("GET", orders, "", nil)
	try("POST", orders, c.poor, e2e.OrderBody(c.profile, "AD", "subscription-basic"))
	try("GET", orders, c.operator, nil)
	try("GET", "/api/v1/nothing-here", "", nil)
	try("DELETE", "/api/v1/documents/companies/search/", "", nil)
	try("POST", orders, c.client, e2e.OrderBody(c.profile, "AD", "ad-single"))
	try("POST", "/api/v1/operator/orders/"+c.order+"/request", c.operator, nil)
	try("POST", "/api/v1/documents/companies/search/", "", `{"query": "`+strings.Repeat("a", 70<<10)+`"}`)
	try("POST", "/api/v1/documents/orders/preview/", c.client, map[string]any{"document_type": "AD"})
	try("POST", "/api/v1/documents/companies/search/", "", "--x\r\n\r\n{}\r\n--x--", "Content-Type", "multipart/form-data; boundary=x")
	try("POST", orders, c.client, e2e.OrderBody("dp_aaaaaaaaaaaaaaaaaaaa", "AD", "ad-single"))
	s.Act(t, http.StatusCreated, "POST", "/api/v1/watches/", c.client, map[string]any{"company_profile_id": c.profile})
	try("POST", "/api/v1/watches/", c.client, map[string]any{"company_profile_id": otherOrderable(t, s, c.profile)})
	try("DELETE", "/api/v1/watches/wat_unknown", c.client, nil)
	try("POST", "/api/v1/payments/stripe/events", "", `{"id": "evt_forged", "type": "checkout.session.completed", "data": {"object": {}}}`, "Stripe-Signature", "t=1,v1=00")
	idless := []byte(`{"type": "checkout.session.completed", "data": {"object": {"object": "checkout.session"}}}`)
	try("POST", "/api/v1/payments/stripe/events", "", string(idless), "Stripe-Signature", stripemocktest.Sign(idless, stripemocktest.Secret, time.Now()))
	if status, raw := s.Call(t, "GET", "/api/v1/watches/", c.client, nil, nil); status != http.StatusOK || !strings.Contains(string(raw), c.profile) {
		t.Errorf("GET /api/v1/watches/: %d %s", status, raw)
	}
	return got
}

// oneWatchPlans is the shipped plans file with a watch limit of 1, so
// that a second watch reaches watch_limit_reached.
func oneWatchPlans(t *testing.T) string {
	var file struct {
		Plans []map[string]any `json:"plans"`
	}
	if err := json.Unmarshal(data.Plans, &file); err != nil {
		t.Fatal(err)
	}
	for _, p := range file.Plans {
		if p["kind"] == companydocs.PlanSubscription {
			p["watch_limit"] = 1
		}
	}
	raw, _ := json.Marshal(file)
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// otherOrderable finds an orderable profile other than not.
func otherOrderable(t *testing.T, s *e2e.TestServer, not string) string {
	for _, q := range []string{"Düsseldorf", "Freiburg GmbH", "Teningen"} {
		for _, c := range s.FlowSearch(t, q).Candidates {
			if c.OrderingEligible && c.ProfileID != not {
				return c.ProfileID
			}
		}
	}
	t.Fatal("no second orderable profile found")
	return ""
}

// reachUnavailableCodes uses a server without plans whose search rate is
// one at a time.
func reachUnavailableCodes(t *testing.T, s *e2e.TestServer) map[string]string {
	got := map[string]string{}
	for _, req := range []struct{ method, path, body string }{
		{"GET", "/api/v1/documents/plans/", ""},
		{"POST", "/api/v1/documents/companies/search/", `{"query": "Rheinbahn AG Düsseldorf"}`},
		{"POST", "/api/v1/documents/companies/search/", `{"query": "Rheinbahn AG Düsseldorf"}`},
	} {
		status, raw, _ := s.Do(t, req.method, req.path, req.body)
		var e e2e.ErrorResult
		if err := json.Unmarshal(raw, &e); err != nil || e.Error.Code == "" {
			continue // the first search, within the burst
		}
		got[e.Error.Code] = fmt.Sprintf("%s %s -> %d", req.method, req.path, status)
	}
	for _, want := range []string{companydocs.EPLANMISSING, companydocs.ERATELIMITED} {
		if got[want] == "" {
			t.Errorf("the bare server never answered %s: %v", want, got)
		}
	}
	return got
}

// reachWithSlowSearch uses the HTTP server alone, with a searcher that
// never answers before its deadline and a short read timeout (Main's is
// fixed at 10 s): a search is service_unavailable, half a request is
// request_timeout.
func reachWithSlowSearch(t *testing.T, sessions httpapi.Sessions, ord *ordering.Services) map[string]string {
	cfg := httpapi.DefaultConfig()
	cfg.ReadTimeout = 300 * time.Millisecond
	cfg.SearchTimeout = 50 * time.Millisecond
	srv, err := httpapi.NewServer(cfg, httpapi.Deps{
		Searcher: slowSearcher{}, Profiles: slowSearcher{}, Sessions: sessions, Ready: func() []string { return nil },
		Orders: ord.Orders, Payments: ord.Payments, Webhooks: ord.Webhooks, Watches: ord.Watches,
		Metrics: metrics.New().HTTP, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	got := map[string]string{}
	resp, err := http.Post("http://"+ln.Addr().String()+"/api/v1/documents/companies/search/", "application/json", strings.NewReader(`{"query": "Rheinbahn"}`))
	if err != nil {
		t.Fatal(err)
	}
	var e e2e.ErrorResult
	if err := json.NewDecoder(resp.Body).Decode(&e); err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		got[e.Error.Code] = "search past its deadline -> 503"
	}
	resp.Body.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /api/v1/documents/companies/search/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // hang guard
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("half a request: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(body, &e); err == nil && resp.StatusCode == http.StatusRequestTimeout {
		got[e.Error.Code] = "half a request -> 408"
	}
	return got
}

func emptyPlans(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, []byte(`{"plans": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkProse ties two sentences of the document to what the server does:
// an LEI query finds a discovery record without discover, and an exact
// name + seat match is exact (its score, which the answer does not carry,
// is at least 0.96 and may be more).
func checkProse(t *testing.T, doc *openapi3.T, s *e2e.TestServer) {
	discover := doc.Components.Schemas["SearchRequest"].Value.Properties["discover"].Value.Description
	res := s.FlowSearch(t, "391200PCHLV827FDCB76") // Deutsche Bank Stiftung: a GLEIF record only
	if len(res.Candidates) == 0 || res.Candidates[0].Source != companydocs.SourceDiscovery {
		t.Fatalf("LEI of a discovery record without discover: %+v", res.Candidates)
	}
	if !strings.Contains(discover, "An LEI query returns the record that carries the LEI whatever its source") {
		t.Errorf("discover is described as %q; the server returns a discovery record for an LEI without it", discover)
	}
	top := s.FlowSearch(t, "Rheinbahn AG Düsseldorf").Candidates[0]
	search := doc.Paths.Value("/api/v1/documents/companies/search/").Post.Description
	if top.ConfidenceLabel != companydocs.LabelExact || !strings.Contains(search, "unambiguous exact name + seat match of a verified profile (at least 0.96") {
		t.Errorf("Rheinbahn AG Düsseldorf is %s; the document gives exact name + seat a score of at least 0.96", top.ConfidenceLabel)
	}
}

// slowSearcher answers no search before its deadline.
type slowSearcher struct{}

func (slowSearcher) Profiles(ctx context.Context, _ []string) (map[string]*companydocs.Profile, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func (slowSearcher) Search(ctx context.Context, _ resolver.Request) (*resolver.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
