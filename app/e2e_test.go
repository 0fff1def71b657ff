package app

import (
	"companydocs/internal/realdata"
	"os/signal"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs/data"
	"companydocs/httpapi"
	"companydocs/index"
	"companydocs/ingest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// runMainEnv makes the test binary act as the companydocs binary: the
// kill test starts it as a separate "companydocs ingest" process.
const runMainEnv = "COMPANYDOCS_TEST_RUN_MAIN"

// peakFileEnv makes the test binary run the companydocs command as a
// child of its own and write the child's peak resident memory (bytes) to
// the file it names. Linux counts into a process's peak the address space
// it ran in before exec, and Go starts processes with vfork, in the
// parent's: a child of the test process, which holds an index and rows,
// never measures under the test process's own peak; a child of this
// small process measures its own.
const peakFileEnv = "COMPANYDOCS_TEST_PEAK_FILE"

func TestMain(m *testing.M) {
	if path := os.Getenv(peakFileEnv); path != "" {
		os.Exit(runMeasured(path))
	}
	if os.Getenv(runMainEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// runMeasured runs the companydocs command line of os.Args with this
// process's stdin, stdout and stderr, writes its peak resident memory to
// path and returns its exit code.
func runMeasured(path string) int {
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, peakFileEnv+"=") }), runMainEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	if err := os.WriteFile(path, []byte(strconv.FormatInt(peak, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return cmd.ProcessState.ExitCode()
}

// offeneRegister returns a file of the repository's real OffeneRegister
// records (testdata/realdata/offeneregister), e.g. fixtures_665.jsonl.
func offeneRegister(tb testing.TB, name string) string {
	tb.Helper()
	return realdata.Path(tb, "offeneregister", name)
}

// sampleFile writes the embedded real sample to a file.
func sampleFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "sample.jsonl.bz2")
	if err := os.WriteFile(path, data.Sample, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// record is the part of an OffeneRegister record the tests look at.
type record struct {
	CompanyNumber string `json:"company_number"`
	Name          string `json:"name"`
	CurrentStatus string `json:"current_status"`
	Attributes    struct {
		Registrar string          `json:"registrar"`
		Office    string          `json:"registered_office"`
		Docs      map[string]bool `json:"additional_data"`
	} `json:"all_attributes"`
}

// readRecords reads the first n records of a plain or bzip2 JSONL file.
func readRecords(tb testing.TB, path string, n int) []record {
	tb.Helper()
	sc := bufio.NewScanner(realdata.Open(tb, path))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []record
	for len(out) < n && sc.Scan() {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustBuild ingests inputs (at most maxRecords of each) into a new
// generation of dataDir and publishes it.
func mustBuild(tb testing.TB, dataDir string, maxRecords int, inputs ...string) index.Meta {
	tb.Helper()
	var in []ingest.Input
	for _, p := range inputs {
		in = append(in, ingest.Input{Path: p})
	}
	meta, _, err := buildGeneration(context.Background(), dataDir, in, buildOptions{keep: index.DefaultKeep, maxRecords: maxRecords, allowShrink: true}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatalf("build generation: %v", err)
	}
	return meta
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent log writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// exchange is one request and its response, kept to check them against
// the OpenAPI document.
type exchange struct {
	method, path string
	reqHeader    http.Header
	reqBody      []byte
	status       int
	respHeader   http.Header
	respBody     []byte
}

// testServer is the real Main serving on a loopback port.
type testServer struct {
	*Main
	base   string
	client *http.Client
	stdout *syncBuffer
	logs   *syncBuffer

	mu        sync.Mutex
	exchanges []exchange

	closeOnce sync.Once
	closeErr  error
}

// shutdown closes the Main once; later calls return the first result.
func (s *testServer) shutdown() error {
	s.closeOnce.Do(func() { s.closeErr = s.Close() })
	return s.closeErr
}

// startServer runs Main with --addr 127.0.0.1:0 on dataDir (which must
// hold a published generation unless the test wants the sample ingested)
// and closes it at the end of the test.
func startServer(tb testing.TB, dataDir string, args ...string) *testServer {
	tb.Helper()
	s := &testServer{Main: NewMain(), stdout: &syncBuffer{}, logs: &syncBuffer{},
		client: &http.Client{Timeout: 30 * time.Second}}
	s.Stdout, s.Stderr = s.stdout, s.logs
	base := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--poll-interval", "100ms",
		"--search-rate", "0", "--session-rate", "0", "--write-rate", "0", "--log-format", "json", "--log-level", "debug"}
	if err := s.ParseFlags(append(base, args...)); err != nil {
		tb.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		s.Close()
		tb.Fatalf("run: %v\n%s", err, s.logs.String())
	}
	tb.Cleanup(func() {
		if err := s.shutdown(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	s.base = "http://" + s.Addr()
	return s
}

// do sends a request, records it for the OpenAPI check and returns the
// status and body. headers are name, value pairs.
func (s *testServer) do(tb testing.TB, method, path, body string, headers ...string) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	s.mu.Lock()
	s.exchanges = append(s.exchanges, exchange{method, path, req.Header.Clone(), []byte(body), resp.StatusCode, resp.Header.Clone(), respBody})
	s.mu.Unlock()
	return resp.StatusCode, respBody, resp.Header
}

// mustJSON sends a request, checks the status and decodes the body.
func (s *testServer) mustJSON(tb testing.TB, want int, dst any, method, path, body string, headers ...string) {
	tb.Helper()
	status, respBody, _ := s.do(tb, method, path, body, headers...)
	if status != want {
		tb.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, respBody)
	}
	if dst != nil {
		if err := json.Unmarshal(respBody, dst); err != nil {
			tb.Fatalf("%s %s: %v in %s", method, path, err, respBody)
		}
	}
}

// wantError checks an error response's status, code and message.
func (s *testServer) wantError(tb testing.TB, status int, code, method, path, body string, headers ...string) map[string]any {
	tb.Helper()
	var out struct {
		Error struct{ Code, Message string } `json:"error"`
		Order map[string]any                 `json:"order"`
	}
	s.mustJSON(tb, status, &out, method, path, body, headers...)
	if out.Error.Code != code || out.Error.Message == "" {
		tb.Fatalf("%s %s: error %+v, want code %s with a message", method, path, out.Error, code)
	}
	return out.Order
}

// candidate is the part of a search candidate the tests look at.
type candidate struct {
	Name             string `json:"name"`
	ProfileID        string `json:"profile_id"`
	ConfidenceLabel  string `json:"confidence_label"`
	OrderingEligible bool   `json:"ordering_eligible"`
	Status           string `json:"status"`
	RegistryNumber   string `json:"registry_number"`
}

func (s *testServer) search(tb testing.TB, query string) []candidate {
	tb.Helper()
	var res struct{ Candidates []candidate }
	body, _ := json.Marshal(map[string]any{"query": query})
	s.mustJSON(tb, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", string(body))
	return res.Candidates
}

// findByName returns the candidate named exactly name, if any.
func findByName(cands []candidate, name string) (candidate, bool) {
	for _, c := range cands {
		if c.Name == name {
			return c, true
		}
	}
	return candidate{}, false
}

// metric returns the sum of the samples of name whose labels include every
// given label, and whether there is one, from GET /metrics.
func (s *testServer) metric(tb testing.TB, name string, labels ...string) (float64, bool) {
	tb.Helper()
	status, body, _ := s.do(tb, "GET", "/metrics", "")
	if status != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d", status)
	}
	return metricIn(string(body), name, labels...)
}

func metricIn(text, name string, labels ...string) (sum float64, found bool) {
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		all := true
		for i := 0; i+1 < len(labels); i += 2 {
			all = all && strings.Contains(rest, labels[i]+`="`+labels[i+1]+`"`)
		}
		f := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if !all || len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			sum, found = sum+v, true
		}
	}
	return sum, found
}

// checkAgainstOpenAPI validates every recorded response (and the request
// of every successful exchange) against the served OpenAPI document, and
// returns the statuses seen.
func (s *testServer) checkAgainstOpenAPI(tb testing.TB) map[int]int {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		tb.Fatal(err)
	}
	doc.Servers = nil // match paths whatever the host
	router, err := legacy.NewRouter(doc)
	if err != nil {
		tb.Fatal(err)
	}
	s.mu.Lock()
	exchanges := append([]exchange{}, s.exchanges...)
	s.mu.Unlock()
	seen := map[int]int{}
	for _, ex := range exchanges {
		seen[ex.status]++
		if err := validateExchange(router, ex); err != nil {
			tb.Errorf("%s %s -> %d does not conform to openapi.json: %v\nresponse: %.400s", ex.method, ex.path, ex.status, err, ex.respBody)
		}
	}
	return seen
}

func validateExchange(router routers.Router, ex exchange) error {
	req, route, params, err := findRoute(router, ex)
	if err != nil {
		if ex.status == http.StatusNotFound || ex.status == http.StatusMethodNotAllowed {
			return nil // an unknown path or method: nothing to conform to but the error body
		}
		return err
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if ex.status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("request: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: ex.status, Header: ex.respHeader,
		Body:    io.NopCloser(bytes.NewReader(ex.respBody)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// findRoute finds the documented operation of an exchange; every path is
// served with and without the trailing slash, the document writes one.
func findRoute(router routers.Router, ex exchange) (*http.Request, *routers.Route, map[string]string, error) {
	u, err := url.Parse(ex.path)
	if err != nil {
		return nil, nil, nil, err
	}
	var lastErr error
	for _, p := range []string{u.Path, strings.TrimSuffix(u.Path, "/"), u.Path + "/"} {
		v := *u
		v.Path = p
		req, err := http.NewRequest(ex.method, v.String(), bytes.NewReader(ex.reqBody))
		if err != nil {
			return nil, nil, nil, err
		}
		req.Header = ex.reqHeader.Clone()
		route, params, err := router.FindRoute(req)
		if err == nil {
			return req, route, params, nil
		}
		lastErr = err
	}
	return nil, nil, nil, lastErr
}

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

// pickCompanies finds, through the API, a live orderable company and a
// removed one among real records.
func pickCompanies(tb testing.TB, s *testServer, recs []record) (live, removed candidate, liveRec record) {
	tb.Helper()
	tries := 0
	for _, r := range recs {
		if (live.ProfileID != "" && removed.ProfileID != "") || tries > 60 {
			break
		}
		wantLive := r.CurrentStatus == "currently registered" && r.Attributes.Docs["AD"] && r.Attributes.Docs["CD"] && live.ProfileID == ""
		wantRemoved := r.CurrentStatus == "removed" && removed.ProfileID == ""
		if !wantLive && !wantRemoved {
			continue
		}
		tries++
		c, ok := findByName(s.search(tb, r.Name+" "+r.Attributes.Office), r.Name)
		switch {
		case ok && wantLive && c.OrderingEligible && c.ProfileID != "":
			live, liveRec = c, r
		case ok && wantRemoved && c.Status == "removed" && c.ProfileID != "":
			removed = c
		}
	}
	if live.ProfileID == "" || removed.ProfileID == "" {
		tb.Fatalf("no live orderable (%+v) or removed (%+v) company found among %d real records", live, removed, len(recs))
	}
	return live, removed, liveRec
}

// TestEndToEnd drives the real Main over HTTP through search, sessions,
// preview and orders, then checks metrics, request logs and every response
// against the OpenAPI document.
func TestEndToEnd(t *testing.T) {
	sample := sampleFile(t)
	leiSample := filepath.Join(t.TempDir(), "lei_sample.csv")
	if err := os.WriteFile(leiSample, data.LEISample, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	meta := mustBuild(t, dir, e2eRecords, sample, leiSample)
	s := startServer(t, dir, "--demo", "--demo-credits", "1")
	if s.DemoKey == "" || !strings.Contains(s.stdout.String(), s.DemoKey) {
		t.Fatal("--demo printed no API key")
	}
	live, removed, liveRec := pickCompanies(t, s, readRecords(t, sample, e2eRecords))

	t.Run("operations", func(t *testing.T) { checkOperations(t, s, meta) })
	t.Run("search", func(t *testing.T) { checkSearch(t, s, live, liveRec) })
	token := login(t, s)
	t.Run("orders", func(t *testing.T) { checkOrders(t, s, token, live, removed) })
	t.Run("session end", func(t *testing.T) {
		s.mustJSON(t, http.StatusNoContent, nil, "DELETE", "/api/v1/auth/sessions/current", "", "Authorization", "Bearer "+token)
		s.wantError(t, http.StatusUnauthorized, "unauthorized", "GET", "/api/v1/documents/orders/", "", "Authorization", "Bearer "+token)
	})
	t.Run("metrics", func(t *testing.T) { checkMetrics(t, s, meta) })
	t.Run("logs", func(t *testing.T) { checkRequestLogs(t, s, s.DemoKey, token) })
	t.Run("openapi", func(t *testing.T) {
		seen := s.checkAgainstOpenAPI(t)
		for _, status := range []int{200, 201, 204, 400, 401, 402, 404, 409, 413, 422} {
			if seen[status] == 0 {
				t.Errorf("no response with status %d was checked (seen %v)", status, seen)
			}
		}
	})
}

func checkOperations(t *testing.T, s *testServer, meta index.Meta) {
	var health, ready map[string]any
	s.mustJSON(t, http.StatusOK, &health, "GET", "/healthz", "")
	s.mustJSON(t, http.StatusOK, &ready, "GET", "/readyz", "")
	if health["status"] != "ok" || ready["status"] != "ready" {
		t.Errorf("healthz %v, readyz %v", health, ready)
	}
	build := readBuildInfo()
	if ready["version"] != build.Version || ready["revision"] != build.Revision {
		t.Errorf("readyz %v, want version %q and revision %q", ready, build.Version, build.Revision)
	}
	_, scrape, _ := s.do(t, "GET", "/metrics", "")
	if want := fmt.Sprintf("companydocs_build_info{goversion=%q,revision=%q,version=%q} 1", build.GoVersion, build.Revision, build.Version); !bytes.Contains(scrape, []byte(want)) {
		t.Errorf("/metrics lacks %s", want)
	}
	_, body, _ := s.do(t, "GET", "/api/v1/openapi.json", "")
	if !bytes.Equal(body, httpapi.OpenAPI) {
		t.Error("GET /api/v1/openapi.json does not serve the document")
	}
	var plans struct{ Plans []map[string]any }
	s.mustJSON(t, http.StatusOK, &plans, "GET", "/api/v1/documents/plans/", "")
	if len(plans.Plans) == 0 {
		t.Error("no plans listed")
	}
	s.wantError(t, http.StatusNotFound, "not_found", "GET", "/api/v1/no-such-thing", "")
	s.wantError(t, http.StatusMethodNotAllowed, "method_not_allowed", "PUT", "/api/v1/documents/plans/", "{}")
	big := `{"query":"` + strings.Repeat("a", 70<<10) + `"}`
	s.wantError(t, http.StatusRequestEntityTooLarge, "payload_too_large", "POST", "/api/v1/documents/companies/search/", big)
}

func checkSearch(t *testing.T, s *testServer, live candidate, rec record) {
	if _, ok := findByName(s.search(t, rec.Name), rec.Name); !ok {
		t.Errorf("search by name %q does not find it", rec.Name)
	}
	cands := s.search(t, "Amtsgericht "+rec.Attributes.Registrar+" "+live.RegistryNumber)
	if len(cands) == 0 || cands[0].ProfileID != live.ProfileID || cands[0].ConfidenceLabel != "exact" {
		t.Errorf("register reference %s at %s: candidates %+v, want %s exact first", live.RegistryNumber, rec.Attributes.Registrar, cands, live.ProfileID)
	}
	var deep struct{ Candidates []candidate }
	s.mustJSON(t, http.StatusOK, &deep, "POST", "/api/v1/documents/companies/search", `{"query":"`+rec.Name+`","mode":"deep","discover":true,"limit":3}`)
	if len(deep.Candidates) == 0 || len(deep.Candidates) > 3 {
		t.Errorf("deep search with limit 3: %d candidates", len(deep.Candidates))
	}
	// a real unverified GLEIF record of the embedded LEI sample: its
	// verification gaps as codes, checked against the document with every
	// other answer
	if c := s.search(t, "159559AIRJTK5Q44LO95"); len(c) != 1 || c[0].Status != "unverified" || c[0].OrderingEligible {
		t.Errorf("unverified GLEIF record: candidates %+v", c)
	}
	var lei struct {
		Understanding struct {
			LEIValid *bool `json:"lei_valid"`
		} `json:"query_understanding"`
	}
	s.mustJSON(t, http.StatusOK, &lei, "POST", "/api/v1/documents/companies/search/", `{"query":"529900T8BM49AURSDO56"}`)
	if lei.Understanding.LEIValid == nil || *lei.Understanding.LEIValid {
		t.Errorf("an LEI with a wrong checksum is not reported as invalid")
	}
	for _, body := range []string{`{"query":""}`, `{"query":"Bau","limit":0}`, `{"query":"Bau","mode":"fast"}`, `{"query":7}`, `not json`} {
		s.wantError(t, http.StatusBadRequest, "invalid_query", "POST", "/api/v1/documents/companies/search/", body)
	}
}

func login(t *testing.T, s *testServer) string {
	s.wantError(t, http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/auth/sessions/", `{"api_key":"cdk_not-a-key"}`)
	s.wantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/auth/sessions/", `{"key":"x"}`)
	var sess struct{ Token string }
	s.mustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+s.DemoKey+`"}`)
	if sess.Token == "" {
		t.Fatal("no session token")
	}
	return sess.Token
}

func orderJSON(profileID, doc, plan string) string {
	return `{"company_profile_id":"` + profileID + `","document_type":"` + doc + `","plan_id":"` + plan + `"}`
}

func checkOrders(t *testing.T, s *testServer, token string, live, removed candidate) {
	auth := []string{"Authorization", "Bearer " + token}
	s.wantError(t, http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/documents/orders/preview/", orderJSON(live.ProfileID, "AD", "ad-single"))
	var p struct {
		OrderingEligible bool `json:"ordering_eligible"`
		Blockers         []struct{ Code string }
	}
	s.mustJSON(t, http.StatusOK, &p, "POST", "/api/v1/documents/orders/preview/", orderJSON(live.ProfileID, "AD", "ad-single"), auth...)
	if !p.OrderingEligible {
		t.Errorf("preview of %s: not eligible: %+v", live.ProfileID, p.Blockers)
	}
	s.mustJSON(t, http.StatusOK, &p, "POST", "/api/v1/documents/orders/preview/", `{"document_type":"AD","plan_id":"ad-single"}`, auth...)
	if p.OrderingEligible || len(p.Blockers) == 0 || p.Blockers[0].Code != "company_profile_id_missing" {
		t.Errorf("preview without a profile: %+v", p)
	}
	s.wantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/documents/orders/preview/", `{"document_type":"XX","plan_id":"ad-single"}`, auth...)

	var first struct{ ID string }
	idem := append([]string{"Idempotency-Key", "e2e-1"}, auth...)
	s.mustJSON(t, http.StatusCreated, &first, "POST", "/api/v1/documents/orders/", orderJSON(live.ProfileID, "AD", "ad-single"), idem...)
	existing := s.wantError(t, http.StatusConflict, "duplicate_order", "POST", "/api/v1/documents/orders/", orderJSON(live.ProfileID, "AD", "ad-single"), idem...)
	if existing["id"] != first.ID {
		t.Errorf("duplicate_order carries %v, want the order %s", existing["id"], first.ID)
	}
	s.wantError(t, http.StatusUnprocessableEntity, "verified_company_required", "POST", "/api/v1/documents/orders/", orderJSON(removed.ProfileID, "AD", "ad-single"), auth...)
	s.wantError(t, http.StatusUnprocessableEntity, "validation_error", "POST", "/api/v1/documents/orders/", `{"company_name":"ACME GmbH","document_type":"AD","plan_id":"ad-single"}`, auth...)
	s.mustJSON(t, http.StatusCreated, nil, "POST", "/api/v1/documents/orders/", orderJSON(live.ProfileID, "CD", "subscription-basic"), auth...)
	s.wantError(t, http.StatusPaymentRequired, "insufficient_credits", "POST", "/api/v1/documents/orders/", orderJSON(live.ProfileID, "AD", "subscription-basic"), auth...)

	var page struct {
		Orders     []struct{ ID string }
		NextCursor *string `json:"next_cursor"`
	}
	s.mustJSON(t, http.StatusOK, &page, "GET", "/api/v1/documents/orders/?limit=1", "", auth...)
	if len(page.Orders) != 1 || page.NextCursor == nil {
		t.Fatalf("first page of one: %+v", page)
	}
	s.mustJSON(t, http.StatusOK, &page, "GET", "/api/v1/documents/orders/?limit=1&cursor="+url.QueryEscape(*page.NextCursor), "", auth...)
	if len(page.Orders) != 1 || page.Orders[0].ID != first.ID || page.NextCursor != nil {
		t.Errorf("second page: %+v, want the first order and no cursor", page)
	}
	s.wantError(t, http.StatusUnprocessableEntity, "validation_error", "GET", "/api/v1/documents/orders/?limit=0", "", auth...)
	s.mustJSON(t, http.StatusOK, nil, "GET", "/api/v1/documents/orders/"+first.ID+"/", "", auth...)
	s.wantError(t, http.StatusNotFound, "not_found", "GET", "/api/v1/documents/orders/ord_00000000000000000000000000/", "", auth...)
}

func checkMetrics(t *testing.T, s *testServer, meta index.Meta) {
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
		if got, ok := s.metric(t, c.name, c.labels...); !ok || got != c.want {
			_, body, _ := s.do(t, "GET", "/metrics", "")
			t.Errorf("%s%v = %v (present %v), want %v\n%s", c.name, c.labels, got, ok, c.want, body)
		}
	}
	if n, _ := s.metric(t, "companydocs_searches_total", "kind", "register_reference", "top_label", "exact"); n < 1 {
		t.Error("the exact register search is not counted")
	}
	if n, _ := s.metric(t, "companydocs_http_request_duration_seconds_count", "route", "/api/v1/documents/companies/search", "status", "200"); n < 5 {
		t.Errorf("search latency histogram counts %v requests", n)
	}
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes", "companydocs_index_generation_age_seconds"} {
		if _, ok := s.metric(t, name); !ok {
			t.Errorf("metric %s missing", name)
		}
	}
}

// checkRequestLogs checks one log line per request, with route, method,
// status, duration and size, and no secret anywhere in the logs.
func checkRequestLogs(t *testing.T, s *testServer, secrets ...string) {
	logs := s.logs.String()
	for _, secret := range secrets {
		_, rest, _ := strings.Cut(secret, "_")
		for _, needle := range []string{secret, rest} {
			if len(needle) >= 16 && strings.Contains(logs, needle) {
				t.Errorf("the logs contain a secret (%.8s...)", needle)
			}
		}
	}
	lines := requestLogs(t, logs)
	s.mu.Lock()
	requests := len(s.exchanges)
	s.mu.Unlock()
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
	mustBuild(t, dir, 200, offeneRegister(t, "fixtures_665.jsonl"))
	plans := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(plans, []byte(`{"plans": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--plans", plans, "--search-rate", "0.01", "--search-burst", "2")
	var ready struct {
		Status  string
		Missing []string
	}
	s.mustJSON(t, http.StatusServiceUnavailable, &ready, "GET", "/readyz/", "")
	if ready.Status != "not ready" || len(ready.Missing) != 1 || !strings.Contains(ready.Missing[0], "plan") {
		t.Errorf("readyz: %+v, want not ready for want of a plan", ready)
	}
	s.mustJSON(t, http.StatusOK, nil, "GET", "/healthz", "")
	s.wantError(t, http.StatusServiceUnavailable, "plan_configuration_missing", "GET", "/api/v1/documents/plans/", "")

	key, err := s.Accounts.CreateAccount("acme", 5)
	if err != nil {
		t.Fatal(err)
	}
	var sess struct{ Token string }
	s.mustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions", `{"api_key":"`+key+`"}`)
	s.wantError(t, http.StatusServiceUnavailable, "plan_configuration_missing", "POST", "/api/v1/documents/orders", orderJSON("dp_x", "AD", "ad-single"), "Authorization", "Bearer "+sess.Token)

	s.search(t, "Bau")
	s.search(t, "Bau")
	s.wantError(t, http.StatusTooManyRequests, "rate_limited", "POST", "/api/v1/documents/companies/search/", `{"query":"Bau"}`)
	_, _, h := s.do(t, "POST", "/api/v1/documents/companies/search/", `{"query":"Bau"}`)
	if n, err := strconv.Atoi(h.Get("Retry-After")); err != nil || n < 1 {
		t.Errorf("Retry-After %q, want whole seconds >= 1", h.Get("Retry-After"))
	}
	if n, _ := s.metric(t, "companydocs_search_rate_limited_total"); n != 2 {
		t.Errorf("rate-limited searches counted %v, want 2", n)
	}
	checkRequestLogs(t, s, key, sess.Token)
	seen := s.checkAgainstOpenAPI(t)
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
	mustBuild(t, dir, 300, offeneRegister(t, "fixtures_665.jsonl"))
	s := startServer(t, dir)
	body := `{"query":"Rheinbahn Düsseldorf"}`
	conn, br := startRequestAwaitingBody(t, s.Addr(), "/api/v1/documents/companies/search/", len(body))
	defer conn.Close()

	closed := make(chan error, 1)
	go func() { closed <- s.shutdown() }()
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
	var res struct{ Candidates []candidate }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(respBody, &res) != nil {
		t.Fatalf("in-flight search during shutdown: status %d, body %s", resp.StatusCode, respBody)
	}
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}

	again := startServer(t, dir) // fails if the order store or the index is still locked
	again.mustJSON(t, http.StatusOK, nil, "GET", "/readyz", "")
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
