package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/data"
	"companydocs/httpapi"
	"companydocs/index"
	"companydocs/internal/e2e"
)

// requestLogs returns the JSON log lines with msg "request".
func requestLogs(tb testing.TB, logs string) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == "request" {
			out = append(out, m)
		}
	}
	return out
}

// e2eRecords is the number of sample records the end-to-end generations
// hold: enough for live, removed and register-number cases, few enough to
// build in seconds under the race detector.
const e2eRecords = 1500

// TestEndToEnd drives the real Main over HTTP through search, sessions,
// preview and orders, then checks metrics, request logs and every response
// against the OpenAPI document.
func TestEndToEnd(t *testing.T) {
	sample := e2e.SampleFile(t)
	leiSample := filepath.Join(t.TempDir(), "lei_sample.csv")
	if err := os.WriteFile(leiSample, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	meta := e2e.MustBuild(t, dir, e2eRecords, sample, leiSample)
	s := e2e.StartServer(t, dir, "--demo", "--demo-credits", "1")
	if s.DemoKey == "" || !strings.Contains(s.Out.String(), s.DemoKey) {
		t.Fatal("--demo printed no API key")
	}
	live, removed, liveRec := e2e.PickCompanies(t, s, e2e.ReadRecords(t, sample, e2eRecords))

	t.Run("operations", func(t *testing.T) { checkOperations(t, s, meta) })
	t.Run("search", func(t *testing.T) { checkSearch(t, s, live, liveRec) })
	token := login(t, s)
	t.Run("orders", func(t *testing.T) { checkOrders(t, s, token, live, removed) })
	t.Run("session end", func(t *testing.T) {
		s.MustJSON(t, http.StatusNoContent, nil, "DELETE", "/api/v1/auth/sessions/current", "", "Authorization", "Bearer "+token)
		s.WantError(t, http.StatusUnauthorized, "unauthorized", "GET", "/api/v1/documents/orders/", "", "Authorization", "Bearer "+token)
	})
	t.Run("metrics", func(t *testing.T) { checkMetrics(t, s, meta) })
	t.Run("logs", func(t *testing.T) { checkRequestLogs(t, s, s.DemoKey, token) })
	t.Run("openapi", func(t *testing.T) {
		seen := s.CheckAgainstOpenAPI(t)
		for _, status := range []int{200, 201, 204, 400, 401, 402, 404, 409, 413, 422} {
			if seen[status] == 0 {
				t.Errorf("no response with status %d was checked (seen %v)", status, seen)
			}
		}
	})
}

func checkOperations(t *testing.T, s *e2e.TestServer, meta index.Meta) {
	var health, ready map[string]any
	s.MustJSON(t, http.StatusOK, &health, "GET", "/healthz", "")
	s.MustJSON(t, http.StatusOK, &ready, "GET", "/readyz", "")
	if health["status"] != "ok" || ready["status"] != "ready" {
		t.Errorf("healthz %v, readyz %v", health, ready)
	}
	build := app.ReadBuildInfo()
	if ready["version"] != build.Version || ready["revision"] != build.Revision {
		t.Errorf("readyz %v, want version %q and revision %q", ready, build.Version, build.Revision)
	}
	_, scrape, _ := s.Do(t, "GET", "/metrics", "")
	if want := fmt.Sprintf("companydocs_build_info{goversion=%q,revision=%q,version=%q} 1", build.GoVersion, build.Revision, build.Version); !bytes.Contains(scrape, []byte(want)) {
		t.Errorf("/metrics lacks %s", want)
	}
	_, body, _ := s.Do(t, "GET", "/api/v1/openapi.json", "")
	if !bytes.Equal(body, httpapi.OpenAPI) {
		t.Error("GET /api/v1/openapi.json does not serve the document")
	}
	var plans struct{ Plans []map[string]any }
	s.MustJSON(t, http.StatusOK, &plans, "GET", "/api/v1/documents/plans/", "")
	if len(plans.Plans) == 0 {
		t.Error("no plans listed")
	}
	s.WantError(t, http.StatusNotFound, "not_found", "GET", "/api/v1/no-such-thing", "")
	s.WantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "PUT", "/api/v1/documents/plans/", "{}")
	big := `{"query":"` + strings.Repeat("a", 70<<10) + `"}`
	s.WantError(t, http.StatusRequestEntityTooLarge, "payload_too_large", "POST", "/api/v1/documents/companies/search/", big)
}

func checkSearch(t *testing.T, s *e2e.TestServer, live e2e.Candidate, rec e2e.Record) {
	if _, ok := e2e.FindByName(s.Search(t, rec.Name), rec.Name); !ok {
		t.Errorf("search by name %q does not find it", rec.Name)
	}
	cands := s.Search(t, "Amtsgericht "+rec.Attributes.Registrar+" "+live.RegistryNumber)
	if len(cands) == 0 || cands[0].ProfileID != live.ProfileID || cands[0].ConfidenceLabel != "exact" {
		t.Errorf("register reference %s at %s: candidates %+v, want %s exact first", live.RegistryNumber, rec.Attributes.Registrar, cands, live.ProfileID)
	}
	var deep struct{ Candidates []e2e.Candidate }
	s.MustJSON(t, http.StatusOK, &deep, "POST", "/api/v1/documents/companies/search", `{"query":"`+rec.Name+`","mode":"deep","discover":true,"limit":3}`)
	if len(deep.Candidates) == 0 || len(deep.Candidates) > 3 {
		t.Errorf("deep search with limit 3: %d candidates", len(deep.Candidates))
	}
	// a real unverified GLEIF record of the embedded LEI sample: its
	// verification gaps as codes, checked against the document with every
	// other answer
	if c := s.Search(t, "159559AIRJTK5Q44LO95"); len(c) != 1 || c[0].Status != "unverified" || c[0].OrderingEligible {
		t.Errorf("unverified GLEIF record: candidates %+v", c)
	}
	var lei struct {
		Understanding struct {
			LEIValid *bool `json:"lei_valid"`
		} `json:"query_understanding"`
	}
	s.MustJSON(t, http.StatusOK, &lei, "POST", "/api/v1/documents/companies/search/", `{"query":"529900T8BM49AURSDO56"}`)
	if lei.Understanding.LEIValid == nil || *lei.Understanding.LEIValid {
		t.Errorf("an LEI with a wrong checksum is not reported as invalid")
	}
	for _, body := range []string{`{"query":""}`, `{"query":"Bau","limit":0}`, `{"query":"Bau","mode":"fast"}`, `{"query":7}`, `not json`} {
		s.WantError(t, http.StatusBadRequest, "invalid_query", "POST", "/api/v1/documents/companies/search/", body)
	}
}

func login(t *testing.T, s *e2e.TestServer) string {
	s.WantError(t, http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/auth/sessions/", `{"api_key":"cdk_not-a-key"}`)
	s.WantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/auth/sessions/", `{"key":"x"}`)
	var sess struct{ Token string }
	s.MustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+s.DemoKey+`"}`)
	if sess.Token == "" {
		t.Fatal("no session token")
	}
	return sess.Token
}

func checkOrders(t *testing.T, s *e2e.TestServer, token string, live, removed e2e.Candidate) {
	auth := []string{"Authorization", "Bearer " + token}
	s.WantError(t, http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/documents/orders/preview/", e2e.OrderJSON(live.ProfileID, "AD", "ad-single"))
	var p struct {
		OrderingEligible bool `json:"ordering_eligible"`
		Blockers         []struct{ Code string }
	}
	s.MustJSON(t, http.StatusOK, &p, "POST", "/api/v1/documents/orders/preview/", e2e.OrderJSON(live.ProfileID, "AD", "ad-single"), auth...)
	if !p.OrderingEligible {
		t.Errorf("preview of %s: not eligible: %+v", live.ProfileID, p.Blockers)
	}
	s.MustJSON(t, http.StatusOK, &p, "POST", "/api/v1/documents/orders/preview/", `{"document_type":"AD","plan_id":"ad-single"}`, auth...)
	if p.OrderingEligible || len(p.Blockers) == 0 || p.Blockers[0].Code != "company_profile_id_missing" {
		t.Errorf("preview without a profile: %+v", p)
	}
	s.WantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/documents/orders/preview/", `{"document_type":"XX","plan_id":"ad-single"}`, auth...)

	var first struct{ ID string }
	idem := append([]string{"Idempotency-Key", "e2e-1"}, auth...)
	s.MustJSON(t, http.StatusCreated, &first, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(live.ProfileID, "AD", "ad-single"), idem...)
	existing := s.WantError(t, http.StatusConflict, "duplicate_order", "POST", "/api/v1/documents/orders/", e2e.OrderJSON(live.ProfileID, "AD", "ad-single"), idem...)
	if existing["id"] != first.ID {
		t.Errorf("duplicate_order carries %v, want the order %s", existing["id"], first.ID)
	}
	s.WantError(t, http.StatusUnprocessableEntity, "verified_company_required", "POST", "/api/v1/documents/orders/", e2e.OrderJSON(removed.ProfileID, "AD", "ad-single"), auth...)
	s.WantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/documents/orders/", `{"company_name":"ACME GmbH","document_type":"AD","plan_id":"ad-single"}`, auth...)
	s.MustJSON(t, http.StatusCreated, nil, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(live.ProfileID, "CD", "subscription-basic"), auth...)
	s.WantError(t, http.StatusPaymentRequired, "insufficient_credits", "POST", "/api/v1/documents/orders/", e2e.OrderJSON(live.ProfileID, "AD", "subscription-basic"), auth...)

	var page struct {
		Orders     []struct{ ID string }
		NextCursor *string `json:"next_cursor"`
	}
	s.MustJSON(t, http.StatusOK, &page, "GET", "/api/v1/documents/orders/?limit=1", "", auth...)
	if len(page.Orders) != 1 || page.NextCursor == nil {
		t.Fatalf("first page of one: %+v", page)
	}
	s.MustJSON(t, http.StatusOK, &page, "GET", "/api/v1/documents/orders/?limit=1&cursor="+url.QueryEscape(*page.NextCursor), "", auth...)
	if len(page.Orders) != 1 || page.Orders[0].ID != first.ID || page.NextCursor != nil {
		t.Errorf("second page: %+v, want the first order and no cursor", page)
	}
	s.WantError(t, http.StatusUnprocessableEntity, "validation_error", "GET", "/api/v1/documents/orders/?limit=0", "", auth...)
	s.MustJSON(t, http.StatusOK, nil, "GET", "/api/v1/documents/orders/"+first.ID+"/", "", auth...)
	s.WantError(t, http.StatusNotFound, "not_found", "GET", "/api/v1/documents/orders/ord_00000000000000000000000000/", "", auth...)
}

func checkMetrics(t *testing.T, s *e2e.TestServer, meta index.Meta) {
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"companydocs_orders_total", []string{"outcome", "created"}, 2},
		{"companydocs_orders_total", []string{"outcome", "rejected", "code", "duplicate_order"}, 1},
		{"companydocs_orders_total", []string{"outcome", "rejected", "code", "verified_company_required"}, 1},
		{"companydocs_orders_total", []string{"outcome", "rejected", "code", "insufficient_credits"}, 1},
		{"companydocs_orders_total", []string{"outcome", "rejected", "code", "validation_error"}, 1},
		{"companydocs_http_requests_total", []string{"route", "/api/v1/documents/orders/:id", "method", "GET", "status", "404"}, 1},
		{"companydocs_http_requests_total", []string{"route", "unmatched", "status", "404"}, 1},
		{"companydocs_http_requests_total", []string{"route", "unmatched", "status", "405"}, 1},
		{"companydocs_http_errors_total", []string{"route", "/api/v1/documents/companies/search", "code", "invalid_query"}, 5},
		{"companydocs_index_generation_info", []string{"generation", meta.ID}, 1},
		{"companydocs_index_profiles", nil, float64(meta.Profiles)},
		{"companydocs_search_rate_limited_total", nil, 0},
	} {
		if got, ok := s.Metric(t, c.name, c.labels...); !ok || got != c.want {
			_, body, _ := s.Do(t, "GET", "/metrics", "")
			t.Errorf("%s%v = %v (present %v), want %v\n%s", c.name, c.labels, got, ok, c.want, body)
		}
	}
	if n, _ := s.Metric(t, "companydocs_searches_total", "kind", "register_reference", "top_label", "exact"); n < 1 {
		t.Error("the exact register search is not counted")
	}
	if n, _ := s.Metric(t, "companydocs_http_request_duration_seconds_count", "route", "/api/v1/documents/companies/search", "status", "200"); n < 5 {
		t.Errorf("search latency histogram counts %v requests", n)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "companydocs_index_generation_age_seconds"} {
		if _, ok := s.Metric(t, name); !ok {
			t.Errorf("metric %s missing", name)
		}
	}
}

// checkRequestLogs checks one log line per request, with route, method,
// status, duration and size, and no secret anywhere in the logs.
func checkRequestLogs(t *testing.T, s *e2e.TestServer, secrets ...string) {
	logs := s.Logs.String()
	for _, secret := range secrets {
		_, rest, _ := strings.Cut(secret, "_")
		for _, needle := range []string{secret, rest} {
			if len(needle) >= 16 && strings.Contains(logs, needle) {
				t.Errorf("the logs contain a secret (%.8s...)", needle)
			}
		}
	}
	lines := requestLogs(t, logs)
	s.Mu.Lock()
	requests := len(s.Exchanges)
	s.Mu.Unlock()
	if len(lines) != requests {
		t.Errorf("%d request log lines for %d requests", len(lines), requests)
	}
	for _, l := range lines {
		for _, k := range []string{"route", "method", "path", "status", "duration_ms", "bytes"} {
			if _, ok := l[k]; !ok {
				t.Errorf("request log line without %s: %v", k, l)
			}
		}
		for k := range l {
			if strings.Contains(strings.ToLower(k), "auth") || strings.Contains(strings.ToLower(k), "body") {
				t.Errorf("request log line has field %q: %v", k, l)
			}
		}
	}
}

// TestNotReadyAndRateLimited starts a deployment without plans and with a
// tight search limit: readiness names what is missing, plans and orders
// answer plan_configuration_missing, the third search rate_limited.
func TestNotReadyAndRateLimited(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(`{"plans": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := e2e.StartServer(t, dir, "--plans", plans, "--search-rate", "0.01", "--search-burst", "2")
	var ready struct {
		Status  string
		Missing []string
	}
	s.MustJSON(t, http.StatusServiceUnavailable, &ready, "GET", "/readyz/", "")
	if ready.Status != "not ready" || len(ready.Missing) != 1 || !strings.Contains(ready.Missing[0], "plan") {
		t.Errorf("readyz: %+v, want not ready for want of a plan", ready)
	}
	s.MustJSON(t, http.StatusOK, nil, "GET", "/healthz", "")
	s.WantError(t, http.StatusServiceUnavailable, "plan_configuration_missing", "GET", "/api/v1/documents/plans/", "")

	key, err := s.Accounts.CreateAccount("acme", 5)
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	s.MustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions", `{"api_key":"`+key+`"}`)
	s.WantError(t, http.StatusServiceUnavailable, "plan_configuration_missing", "POST", "/api/v1/documents/orders", e2e.OrderJSON("dp_x", "AD", "ad-single"), "Authorization", "Bearer "+sess.Token)

	s.Search(t, "Bau")
	s.Search(t, "Bau")
	s.WantError(t, http.StatusTooManyRequests, "rate_limited", "POST", "/api/v1/documents/companies/search/", `{"query":"Bau"}`)
	_, _, h := s.Do(t, "POST", "/api/v1/documents/companies/search/", `{"query":"Bau"}`)
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q, want whole seconds >= 1", h.Get("Retry-After"))
	}
	if n, _ := s.Metric(t, "companydocs_search_rate_limited_total"); n != 2 {
		t.Errorf("rate-limited searches counted %v, want 2", n)
	}
	checkRequestLogs(t, s, key, sess.Token)
	seen := s.CheckAgainstOpenAPI(t)
	for _, status := range []int{429, 503} {
		if seen[status] == 0 {
			t.Errorf("no response with status %d was checked (seen %v)", status, seen)
		}
	}
}

// TestShutdownFinishesInFlightRequests starts a request, shuts the server
// down while the request is in flight, and checks that the request is
// answered, Close succeeds, and the data directory (index and the bbolt
// order store) can be opened again at once.
func TestShutdownFinishesInFlightRequests(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 300, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	s := e2e.StartServer(t, dir)
	body := `{"query":"Rheinbahn Düsseldorf"}`
	conn, br := startRequestAwaitingBody(t, s.Addr(), "/api/v1/documents/companies/search/", len(body))
	defer conn.Close()

	closed := make(chan error, 1)
	go func() { closed <- s.Shutdown() }()
	waitListenerClosed(t, s.Addr())
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatalf("send the body during shutdown: %v", err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the in-flight request got no response: %v", err)
	}
	respBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var res struct{ Candidates []e2e.Candidate }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(respBody, &res) != nil {
		t.Fatalf("in-flight search during shutdown: status %d, body %s", resp.StatusCode, respBody)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}

	again := e2e.StartServer(t, dir) // fails if the order store or the index is still locked
	again.MustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")
	if _, err := again.Accounts.CreateAccount("after-restart", 1); err != nil {
		t.Fatalf("the reopened order store does not take writes: %v", err)
	}
}

// startRequestAwaitingBody sends the headers of a JSON POST with
// "Expect: 100-continue" and waits for "100 Continue": from then on the
// server is inside the request, waiting for the body.
func startRequestAwaitingBody(t *testing.T, addr, path string, length int) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", path, addr, length)
	br := bufio.NewReader(conn)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, " 100 ") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || strings.TrimSpace(blank) != "" {
		t.Fatalf("after 100 Continue: %q, %v", blank, err)
	}
	return conn, br
}

// waitListenerClosed returns once new connections are refused, i.e. the
// shutdown has begun.
func waitListenerClosed(t *testing.T, addr string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the server still accepts connections after Close began")
}
