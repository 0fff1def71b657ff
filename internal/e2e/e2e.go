package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/data"
	"companydocs/httpapi"
	"companydocs/index"
	"companydocs/ingest"
	"companydocs/internal/realdata"
	"companydocs/internal/syncbuf"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// RunMainEnv makes the test binary act as the companydocs binary: the
// kill test starts it as a separate "companydocs ingest" process.
const RunMainEnv = "COMPANYDOCS_TEST_RUN_MAIN"

// PeakFileEnv makes the test binary run the companydocs command as a
// child of its own and write the child's peak resident memory (bytes) to
// the file it names. Linux counts into a process's peak the address space
// it ran in before exec, and Go starts processes with vfork, in the
// parent's: a child of the test process, which holds an index and rows,
// never measures under the test process's own peak; a child of this
// small process measures its own.
const PeakFileEnv = "COMPANYDOCS_TEST_PEAK_FILE"

// Main is the TestMain of every end-to-end package: as a child of the
// test process (RunMainEnv, PeakFileEnv) it runs the companydocs command,
// else the tests.
func Main(m *testing.M) {
	if path := os.Getenv(PeakFileEnv); path != "" {
		os.Exit(runMeasured(path))
	}
	if os.Getenv(RunMainEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
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
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, PeakFileEnv+"=") }), RunMainEnv+"=1")
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

// OffeneRegister returns a file of the repository's real OffeneRegister
// records (testdata/realdata/offeneregister), e.g. fixtures_665.jsonl.
func OffeneRegister(tb testing.TB, name string) string {
	tb.Helper()
	return realdata.Path(tb, "offeneregister", name)
}

// SampleFile writes the embedded real sample to a file.
func SampleFile(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "sample.jsonl.bz2")
	if err := os.WriteFile(path, data.Sample, 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Record is the part of an OffeneRegister record the tests look at.
type Record struct {
	CompanyNumber string `json:"company_number"`
	Name          string `json:"name"`
	CurrentStatus string `json:"current_status"`
	Attributes    struct {
		Registrar string          `json:"registrar"`
		Office    string          `json:"registered_office"`
		Docs      map[string]bool `json:"additional_data"`
	} `json:"all_attributes"`
}

// ReadRecords reads the first n records of a plain or bzip2 JSONL file.
func ReadRecords(tb testing.TB, path string, n int) []Record {
	tb.Helper()
	sc := bufio.NewScanner(realdata.Open(tb, path))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var out []Record
	for len(out) < n && sc.Scan() {
		var rec Record
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

// MustBuild ingests inputs (at most maxRecords of each) into a new
// generation of dataDir and publishes it.
func MustBuild(tb testing.TB, dataDir string, maxRecords int, inputs ...string) index.Meta {
	tb.Helper()
	var in []ingest.Input
	for _, p := range inputs {
		in = append(in, ingest.Input{Path: p})
	}
	meta, _, err := app.BuildGeneration(context.Background(), dataDir, in, app.BuildOptions{Keep: index.DefaultKeep, MaxRecords: maxRecords, AllowShrink: true}, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		tb.Fatalf("build generation: %v", err)
	}
	return meta
}

// Exchange is one request and its response, kept to check them against
// the OpenAPI document.
type Exchange struct {
	Method, Path string
	reqHeader    http.Header
	reqBody      []byte
	Status       int
	RespHeader   http.Header
	RespBody     []byte
}

// TestServer is the real Main serving on a loopback port.
type TestServer struct {
	*app.Main
	Base   string
	Client *http.Client
	Out    *syncbuf.Buffer
	Logs   *syncbuf.Buffer

	Mu        sync.Mutex
	Exchanges []Exchange

	closeOnce sync.Once
	closeErr  error
}

// Shutdown closes the Main once; later calls return the first result.
func (s *TestServer) Shutdown() error {
	s.closeOnce.Do(func() { s.closeErr = s.Close() })
	return s.closeErr
}

// StartServer runs Main with --addr 127.0.0.1:0 on dataDir (which must
// hold a published generation unless the test wants the sample ingested)
// and closes it at the end of the test.
func StartServer(tb testing.TB, dataDir string, args ...string) *TestServer {
	tb.Helper()
	s := &TestServer{Main: app.NewMain(), Out: &syncbuf.Buffer{}, Logs: &syncbuf.Buffer{},
		Client: &http.Client{Timeout: 30 * time.Second}}
	s.Stdout, s.Stderr = s.Out, s.Logs
	base := []string{"--addr", "127.0.0.1:0", "--data-dir", dataDir, "--poll-interval", "100ms",
		"--search-rate", "0", "--session-rate", "0", "--write-rate", "0", "--log-format", "json", "--log-level", "debug"}
	if err := s.ParseFlags(append(base, args...)); err != nil {
		tb.Fatal(err)
	}
	if err := s.Run(context.Background()); err != nil {
		s.Close()
		tb.Fatalf("run: %v\n%s", err, s.Logs.String())
	}
	tb.Cleanup(func() {
		if err := s.Shutdown(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	s.Base = "http://" + s.Addr()
	return s
}

// Do sends a request, records it for the OpenAPI check and returns the
// status and body. headers are name, value pairs.
func (s *TestServer) Do(tb testing.TB, method, path, body string, headers ...string) (int, []byte, http.Header) {
	tb.Helper()
	req, err := http.NewRequest(method, s.Base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.Client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, path, err)
	}
	s.Mu.Lock()
	s.Exchanges = append(s.Exchanges, Exchange{method, path, req.Header.Clone(), []byte(body), resp.StatusCode, resp.Header.Clone(), respBody})
	s.Mu.Unlock()
	return resp.StatusCode, respBody, resp.Header
}

// MustJSON sends a request, checks the status and decodes the body.
func (s *TestServer) MustJSON(tb testing.TB, want int, dst any, method, path, body string, headers ...string) {
	tb.Helper()
	status, respBody, _ := s.Do(tb, method, path, body, headers...)
	if status != want {
		tb.Fatalf("%s %s: status %d, want %d; body %s", method, path, status, want, respBody)
	}
	if dst != nil {
		if err := json.Unmarshal(respBody, dst); err != nil {
			tb.Fatalf("%s %s: %v in %s", method, path, err, respBody)
		}
	}
}

// WantError checks an error response's status, code and message.
func (s *TestServer) WantError(tb testing.TB, status int, code, method, path, body string, headers ...string) map[string]any {
	tb.Helper()
	var out struct {
		Error struct{ Code, Message string } `json:"error"`
		Order map[string]any                 `json:"order"`
	}
	s.MustJSON(tb, status, &out, method, path, body, headers...)
	if out.Error.Code != code || out.Error.Message == "" {
		tb.Fatalf("%s %s: error %+v, want code %s with a message", method, path, out.Error, code)
	}
	return out.Order
}

// Candidate is the part of a search candidate the tests look at.
type Candidate struct {
	Name             string `json:"name"`
	ProfileID        string `json:"profile_id"`
	ConfidenceLabel  string `json:"confidence_label"`
	OrderingEligible bool   `json:"ordering_eligible"`
	Status           string `json:"status"`
	RegistryNumber   string `json:"registry_number"`
}

// Search runs a search for query and returns its candidates.
func (s *TestServer) Search(tb testing.TB, query string) []Candidate {
	tb.Helper()
	var res struct{ Candidates []Candidate }
	body, _ := json.Marshal(map[string]any{"query": query})
	s.MustJSON(tb, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", string(body))
	return res.Candidates
}

// FindByName returns the candidate named exactly name, if any.
func FindByName(cands []Candidate, name string) (Candidate, bool) {
	for _, c := range cands {
		if c.Name == name {
			return c, true
		}
	}
	return Candidate{}, false
}

// Metric returns the sum of the samples of name whose labels include every
// given label, and whether there is one, from GET /metrics.
func (s *TestServer) Metric(tb testing.TB, name string, labels ...string) (float64, bool) {
	tb.Helper()
	status, body, _ := s.Do(tb, "GET", "/metrics", "")
	if status != http.StatusOK {
		tb.Fatalf("GET /metrics: status %d", status)
	}
	return MetricIn(string(body), name, labels...)
}

// MetricIn returns the sum of the samples of name in the Prometheus text
// whose labels include labels (name, value pairs), and whether any was
// found.
func MetricIn(text, name string, labels ...string) (sum float64, found bool) {
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

// CheckAgainstOpenAPI validates every recorded response (and the request
// of every successful exchange) against the served OpenAPI document, and
// returns the statuses seen.
func (s *TestServer) CheckAgainstOpenAPI(tb testing.TB) map[int]int {
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
	s.Mu.Lock()
	exchanges := append([]Exchange{}, s.Exchanges...)
	s.Mu.Unlock()
	seen := map[int]int{}
	for _, ex := range exchanges {
		seen[ex.Status]++
		if err := validateExchange(router, ex); err != nil {
			tb.Errorf("%s %s -> %d does not conform to openapi.json: %v\nresponse: %.400s", ex.Method, ex.Path, ex.Status, err, ex.RespBody)
		}
	}
	return seen
}

func validateExchange(router routers.Router, ex Exchange) error {
	req, route, params, err := FindRoute(router, ex)
	if err != nil {
		if ex.Status == http.StatusNotFound || ex.Status == http.StatusMethodNotAllowed {
			return nil // an unknown path or method: nothing to conform to but the error body
		}
		return err
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	if ex.Status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fmt.Errorf("request: %w", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: ex.Status, Header: ex.RespHeader,
		Body:    io.NopCloser(bytes.NewReader(ex.RespBody)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	return openapi3filter.ValidateResponse(context.Background(), out)
}

// FindRoute finds the documented operation of an exchange; every path is
// served with and without the trailing slash, the document writes one.
func FindRoute(router routers.Router, ex Exchange) (*http.Request, *routers.Route, map[string]string, error) {
	u, err := url.Parse(ex.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	var lastErr error
	for _, p := range []string{u.Path, strings.TrimSuffix(u.Path, "/"), u.Path + "/"} {
		v := *u
		v.Path = p
		req, err := http.NewRequest(ex.Method, v.String(), bytes.NewReader(ex.reqBody))
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

// PickCompanies finds, through the API, a live orderable company and a
// removed one among real records.
func PickCompanies(tb testing.TB, s *TestServer, recs []Record) (live, removed Candidate, liveRec Record) {
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
		c, ok := FindByName(s.Search(tb, r.Name+" "+r.Attributes.Office), r.Name)
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

// OrderJSON is the body of an order of document doc of profileID on plan.
func OrderJSON(profileID, doc, plan string) string {
	return `{"company_profile_id":"` + profileID + `","document_type":"` + doc + `","plan_id":"` + plan + `"}`
}
