package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs"
	"companydocs/internal/e2e"
	"companydocs/resolver"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The preview is HTML: the OpenAPI check reads it as the text it is.
func init() { openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.FileBodyDecoder) }

// reconcileSchemas compiles the vendored 0.2 JSON Schemas
// (reconcile/testdata/schemas), each by the name of its file.
func reconcileSchemas(tb testing.TB) map[string]*jsonschema.Schema {
	tb.Helper()
	dir := filepath.Join(e2e.RepoRoot(), "reconcile", "testdata", "schemas")
	c := jsonschema.NewCompiler()
	// manifest.json's optional authentication refers to the Swagger 2.0
	// schema, which is not fetched: the service sends no authentication
	stub := map[string]any{"definitions": map[string]any{"securityDefinitions": map[string]any{"additionalProperties": map[string]any{}}}}
	if err := c.AddResource("http://swagger.io/v2/schema.json", stub); err != nil {
		tb.Fatal(err)
	}
	names := []string{"manifest", "reconciliation-query-batch", "reconciliation-result-batch", "suggest-entities-response",
		"suggest-properties-response", "data-extension-query", "data-extension-response", "data-extension-property-proposal", "type"}
	ids := map[string]string{}
	for _, name := range names {
		raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			tb.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		// two files name another file's place as their $id (the query
		// batch the query's, the proposal the draft's): each is added at
		// its own place in the 0.2 folder
		id := "https://reconciliation-api.github.io/specs/0.2/schemas/" + name + ".json"
		if err := c.AddResource(id, doc); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		ids[name] = id
	}
	out := map[string]*jsonschema.Schema{}
	for name, id := range ids {
		sch, err := c.Compile(id)
		if err != nil {
			tb.Fatalf("compile %s: %v", name, err)
		}
		out[name] = sch
	}
	return out
}

// validate checks raw against the named 0.2 schema.
func validate(tb testing.TB, schemas map[string]*jsonschema.Schema, name string, raw []byte) {
	tb.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("%s: not JSON: %v: %.300s", name, err, raw)
	}
	if err := schemas[name].Validate(inst); err != nil {
		tb.Errorf("does not conform to the 0.2 schema %s: %v\n%.600s", name, err, raw)
	}
}

type servicePath struct {
	ServiceURL  string `json:"service_url"`
	ServicePath string `json:"service_path"`
}

type reconcileCandidate struct {
	ID, Name, Description string
	Score                 float64
	Match                 bool
	Features              []struct {
		ID    string
		Value any
	}
}

// TestReconcileManifest reads the manifest as OpenRefine does: it conforms
// to the 0.2 schema, speaks 0.2, says what match means, and its view,
// preview, suggest and extend services answer; every route of the service
// is open to other origins (CORS), and no route outside it is.
func TestReconcileManifest(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	schemas := reconcileSchemas(t)
	status, raw, h := s.Do(t, "GET", e2e.ReconcilePath, "", "Origin", "https://openrefine.example")
	if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("GET %s: %d, Access-Control-Allow-Origin %q: %s", e2e.ReconcilePath, status, h.Get("Access-Control-Allow-Origin"), raw)
	}
	validate(t, schemas, "manifest", raw)
	var m struct {
		Versions    []string
		Description string
		View        struct{ URL string }
		Preview     struct{ URL string }
		Suggest     struct{ Entity, Property servicePath }
		Extend      struct {
			ProposeProperties servicePath `json:"propose_properties"`
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Versions) != 1 || m.Versions[0] != "0.2" || !strings.Contains(m.Description, "exact") || !strings.Contains(m.Description, "ordering_eligible") {
		t.Errorf("manifest %+v", m)
	}
	for _, u := range []string{m.View.URL, m.Preview.URL, m.Suggest.Entity.ServiceURL + m.Suggest.Entity.ServicePath,
		m.Suggest.Property.ServiceURL, m.Extend.ProposeProperties.ServiceURL} {
		if !strings.HasPrefix(u, s.Base) {
			t.Errorf("the manifest's %q is not on the server %s", u, s.Base)
		}
	}
	// a preflight, which the middleware answers before any route
	pre, _ := http.NewRequest("OPTIONS", s.Base+e2e.ReconcilePath+"/suggest/entity", nil)
	pre.Header.Set("Origin", "https://openrefine.example")
	pre.Header.Set("Access-Control-Request-Method", "GET")
	resp, err := s.Client.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("preflight: %d, Access-Control-Allow-Origin %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	_, _, h = s.Do(t, "GET", "/api/v1/documents/plans/", "", "Origin", "https://openrefine.example")
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("the plans route answers another origin: %q", h.Get("Access-Control-Allow-Origin"))
	}
	s.CheckAgainstOpenAPI(t)
}

// TestReconcileQueries sends a batch with and without properties, by POST
// and by GET: each candidate's match is true exactly where the search
// with the same text and properties labels it exact and it is orderable,
// a register number of another company makes no candidate a match, and
// the batch is counted.
func TestReconcileQueries(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	schemas := reconcileSchemas(t)
	batch := map[string]any{
		"plain":    map[string]any{"query": "Rheinbahn AG"},
		"city":     map[string]any{"query": "Rheinbahn AG", "type": "company", "properties": []any{map[string]any{"pid": "city", "v": "Düsseldorf"}}},
		"register": map[string]any{"query": "Rheinbahn", "limit": 3, "properties": []any{map[string]any{"pid": "register_number", "v": "HRB 562"}, map[string]any{"pid": "court", "v": "Amtsgericht Düsseldorf"}}},
		"other":    map[string]any{"query": "Rheinbahn AG Düsseldorf", "properties": []any{map[string]any{"pid": "register_number", "v": []any{"HRB 85233"}}, map[string]any{"pid": "court", "v": "Düsseldorf"}}},
		"postcode": map[string]any{"query": "Rheinbahn AG", "properties": []any{map[string]any{"pid": "postal_code", "v": 40231}, map[string]any{"pid": "officer", "v": map[string]any{"id": "x", "name": "Lars Asmus"}}}},
		"empty":    map[string]any{"query": "–"},
	}
	raw, _ := json.Marshal(batch)
	status, body, _ := s.ReconcileForm(t, "queries", string(raw))
	if status != http.StatusOK {
		t.Fatalf("queries: %d %s", status, body)
	}
	validate(t, schemas, "reconciliation-result-batch", body)
	validate(t, schemas, "reconciliation-query-batch", raw)
	var res map[string]struct{ Result []reconcileCandidate }
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(batch) || len(res["empty"].Result) != 0 {
		t.Fatalf("%d results for %d queries, the empty one %v", len(res), len(batch), res["empty"])
	}
	wantMatch := map[string]bool{"city": true, "register": true, "other": false}
	for key, want := range wantMatch {
		r := res[key].Result
		if len(r) == 0 || r[0].Name != "Rheinbahn AG" || r[0].Match != want {
			t.Errorf("%s: %+v, want Rheinbahn AG first, match %v", key, r, want)
		}
	}
	for key, r := range res {
		for _, c := range r.Result {
			if key == "other" && c.Match {
				t.Errorf("other: %s is a match though the register number given is another company's", c.Name)
			}
		}
	}
	// match is the search's exact and orderable, candidate by candidate
	props := map[string]any{"city": "Düsseldorf"}
	var single e2e.SearchResult
	b, _ := json.Marshal(map[string]any{"query": "Rheinbahn AG", "properties": props})
	s.MustJSON(t, http.StatusOK, &single, "POST", "/api/v1/documents/companies/search/", string(b))
	for i, c := range res["city"].Result {
		sc := single.Candidates[i]
		if c.ID != sc.ProfileID || c.Match != (sc.ConfidenceLabel == companydocs.LabelExact && sc.OrderingEligible) || c.Score != float64(int(sc.Confidence*1000+0.5))/10 {
			t.Errorf("candidate %d: %+v, the search's %+v", i, c, sc)
		}
	}
	// by GET too
	q, _ := json.Marshal(map[string]any{"q0": batch["city"]})
	status, body, _ = s.Do(t, "GET", e2e.ReconcilePath+"?queries="+url.QueryEscape(string(q)), "")
	if status != http.StatusOK || !strings.Contains(string(body), `"match":true`) {
		t.Errorf("GET queries: %d %s", status, body)
	}
	if n, _ := s.Metric(t, "companydocs_reconcile_total", "kind", "match"); n != 3 {
		t.Errorf("companydocs_reconcile_total{kind=match} = %v, want 3", n)
	}
	s.CheckAgainstOpenAPI(t)
}

// TestReconcileSuggestPreviewExtend drives the services OpenRefine calls
// beside reconciliation, on a real profile.
func TestReconcileSuggestPreviewExtend(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	schemas := reconcileSchemas(t)
	var sugg struct{ Result []struct{ ID, Name string } }
	status, body, _ := s.Do(t, "GET", e2e.ReconcilePath+"/suggest/entity?prefix=Rheinbahn", "")
	if status != http.StatusOK || json.Unmarshal(body, &sugg) != nil || len(sugg.Result) == 0 || sugg.Result[0].Name != "Rheinbahn AG" {
		t.Fatalf("suggest entity: %d %s", status, body)
	}
	validate(t, schemas, "suggest-entities-response", body)
	id := sugg.Result[0].ID
	// autocompletion: the word being typed is completed
	status, body, _ = s.Do(t, "GET", e2e.ReconcilePath+"/suggest/entity?prefix=Rheinb", "")
	if status != http.StatusOK || json.Unmarshal(body, &sugg) != nil || len(sugg.Result) == 0 || sugg.Result[0].ID != id {
		t.Errorf("suggest entity for a word cut short: %d %s", status, body)
	}
	status, body, _ = s.Do(t, "GET", e2e.ReconcilePath+"/suggest/property?prefix=reg", "")
	if status != http.StatusOK || !strings.Contains(string(body), `"id":"register_number"`) {
		t.Errorf("suggest property: %d %s", status, body)
	}
	validate(t, schemas, "suggest-properties-response", body)

	// the card is framed by the client's page: nothing forbids framing it
	status, body, h := s.Do(t, "GET", e2e.ReconcilePath+"/preview?id="+url.QueryEscape(id), "")
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "Rheinbahn AG") ||
		!strings.Contains(string(body), "HRB 562") || strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors") || h.Get("X-Frame-Options") != "" {
		t.Errorf("preview: %d %s %s", status, h, body)
	}
	s.WantError(t, http.StatusNotFound, companydocs.ENOTFOUND, "GET", e2e.ReconcilePath+"/preview?id=nosuchprofile", "")

	status, body, _ = s.Do(t, "GET", e2e.ReconcilePath+"/properties?type=company", "")
	validate(t, schemas, "data-extension-property-proposal", body)
	if status != http.StatusOK || !strings.Contains(string(body), `"ordering_eligible"`) {
		t.Errorf("propose properties: %d %s", status, body)
	}
	ext := `{"ids": ["` + id + `", "nosuchprofile"], "properties": [{"id": "register_number"}, {"id": "city"}, {"id": "ordering_eligible"}, {"id": "officer"}, {"id": "documents"}]}`
	status, body, _ = s.ReconcileForm(t, "extend", ext)
	if status != http.StatusOK {
		t.Fatalf("extend: %d %s", status, body)
	}
	validate(t, schemas, "data-extension-query", []byte(ext))
	validate(t, schemas, "data-extension-response", body)
	var rows struct {
		Rows map[string]map[string][]struct{ Str string }
	}
	if err := json.Unmarshal(body, &rows); err != nil {
		t.Fatal(err)
	}
	row := rows.Rows[id]
	if len(row["register_number"]) != 1 || row["register_number"][0].Str != "HRB 562" || row["city"][0].Str != "Düsseldorf" ||
		len(row["ordering_eligible"]) != 1 || len(rows.Rows["nosuchprofile"]["city"]) != 0 {
		t.Errorf("extend rows %+v", rows.Rows)
	}
	s.CheckAgainstOpenAPI(t)
}

// TestReconcileBadInput: every malformed request is a 4xx in the error
// shape with a sentence naming what is wrong, never a 5xx.
func TestReconcileBadInput(t *testing.T) {
	s, _ := e2e.FlowServer(t)
	for _, c := range []struct{ field, value, says string }{
		{"queries", "not json", "JSON object"},
		{"queries", `["Rheinbahn AG"]`, "JSON object"},
		{"queries", `{}`, "no query"},
		{"queries", `{"q0": {"query": "Rheinbahn AG", "properties": [{"pid": "town", "v": "Köln"}]}}`, "town"},
		{"queries", `{"q0": {"query": "Rheinbahn AG", "type": "person"}}`, "“person”"},
		{"queries", `{"q0": {"query": "Rheinbahn AG", "colour": "blue"}}`, `colour`},
		{"queries", `{"q0": {"query": "Rheinbahn AG", "limit": 0}}`, "limit"},
		{"queries", `{"q0": {"query": 7}}`, "query"},
		{"extend", `{"ids": ["x"], "properties": [{"id": "turnover"}]}`, "turnover"},
		{"extend", `{"ids": [], "properties": [{"id": "city"}]}`, "ids"},
		{"other", "x", "queries"},
	} {
		status, body, _ := s.ReconcileForm(t, c.field, c.value)
		var e e2e.ErrorResult
		if status != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error.Code != companydocs.EINVALIDQUERY || !strings.Contains(e.Error.Message, c.says) {
			t.Errorf("%s=%s: %d %s; want 400 invalid_query saying %s", c.field, c.value, status, body, c.says)
		}
	}
	s.WantError(t, http.StatusBadRequest, companydocs.EINVALIDQUERY, "GET", e2e.ReconcilePath+"/suggest/entity?prefix=", "")
	s.WantError(t, http.StatusBadRequest, companydocs.EINVALIDQUERY, "GET", e2e.ReconcilePath+"/suggest/entity?prefix=Bau&cursor=-1", "")
	s.WantError(t, http.StatusBadRequest, companydocs.EINVALIDQUERY, "GET", e2e.ReconcilePath+"/preview", "")
	// The cursor's bound is the search's: the message names it.
	status, body, _ := s.Do(t, "GET", e2e.ReconcilePath+fmt.Sprintf("/suggest/entity?prefix=Bau&cursor=%d", resolver.MaxLimit), "")
	if want := fmt.Sprintf("0 to %d", resolver.MaxLimit-1); status != http.StatusBadRequest || !strings.Contains(string(body), want) {
		t.Errorf("cursor %d: %d %s, want 400 saying %s", resolver.MaxLimit, status, body, want)
	}
	// An unknown id is quoted cut to 60 characters, never inside one: a
	// message of valid UTF-8.
	status, body, _ = s.Do(t, "GET", e2e.ReconcilePath+"/preview?id="+url.QueryEscape(strings.Repeat("ü", 80)), "")
	var e e2e.ErrorResult
	if status != http.StatusNotFound || json.Unmarshal(body, &e) != nil || !utf8.ValidString(e.Error.Message) ||
		!strings.Contains(e.Error.Message, "“"+strings.Repeat("ü", 59)+"…”") {
		t.Errorf("an unknown id of 80 ü: %d %s, want 404 quoting 59 ü and …", status, body)
	}
	s.CheckAgainstOpenAPI(t)
}

// TestReconcileIsRateLimitedPerQuery: a batch of n queries takes n from
// the address's search budget, which single searches share.
func TestReconcileIsRateLimitedPerQuery(t *testing.T) {
	s, _ := e2e.FlowServer(t, "--search-rate", "0.1", "--search-burst", "4")
	three := `{"a": {"query": "Rheinbahn AG"}, "b": {"query": "HRB 562 Düsseldorf"}, "c": {"query": "Müller GmbH"}}`
	if status, body, _ := s.ReconcileForm(t, "queries", three); status != http.StatusOK {
		t.Fatalf("3 queries on a budget of 4: %d %s", status, body)
	}
	s.FlowSearch(t, "Rheinbahn AG") // the fourth
	status, body, h := s.ReconcileForm(t, "queries", `{"a": {"query": "Rheinbahn AG"}}`)
	secs, _ := strconv.Atoi(h.Get("Retry-After"))
	if status != http.StatusTooManyRequests || secs < 1 || !strings.Contains(string(body), companydocs.ERATELIMITED) {
		t.Errorf("a fifth query on a budget of 4: %d, Retry-After %q, %s", status, h.Get("Retry-After"), body)
	}
	s.CheckAgainstOpenAPI(t)
}
