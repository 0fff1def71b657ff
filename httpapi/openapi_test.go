package httpapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/reasoncodes"
	"companydocs/resolver"

	"github.com/getkin/kin-openapi/openapi3"
)

// loadOpenAPI parses and validates the embedded document.
func loadOpenAPI(tb testing.TB) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPI)
	if err != nil {
		tb.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		tb.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	return doc
}

func TestOpenAPIDocumentIsValid3_1(t *testing.T) {
	doc := loadOpenAPI(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi = %q, want 3.1", doc.OpenAPI)
	}
	if doc.Components.SecuritySchemes["bearerAuth"] == nil {
		t.Fatal("no bearerAuth security scheme")
	}
}

// documentedOp finds the operation for a Fiber route pattern: ":id"
// becomes "{id}", and the path may be documented with or without the
// trailing slash.
func documentedOp(doc *openapi3.T, method, fiberPath string) *openapi3.Operation {
	path := documentPath(fiberPath)
	for _, candidate := range []string{path, path + "/"} {
		if item := doc.Paths.Value(candidate); item != nil {
			if op := item.GetOperation(method); op != nil {
				return op
			}
		}
	}
	return nil
}

// apiRoute reports whether a route belongs to the API or the operations
// endpoints, which the document must describe (a web page need not be).
func apiRoute(path string) bool {
	return strings.HasPrefix(path, "/api/") || path == "/healthz" || path == "/readyz" || path == "/metrics"
}

func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	s := newTestServer(t, Deps{})
	served := map[string]bool{}
	for _, r := range s.app.GetRoutes(true) {
		if r.Method == http.MethodHead || !apiRoute(r.Path) {
			continue
		}
		served[r.Method+" "+strings.TrimSuffix(documentPath(r.Path), "/")] = true
		if documentedOp(doc, r.Method, r.Path) == nil {
			t.Errorf("route %s %s is not in openapi.json", r.Method, r.Path)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if !served[method+" "+strings.TrimSuffix(path, "/")] {
				t.Errorf("openapi.json describes %s %s, which the server does not serve", method, path)
			}
		}
	}
	if len(served) < 12 {
		t.Fatalf("only %d routes served: %v", len(served), served)
	}
}

// documentPath writes a Fiber route pattern as an OpenAPI path.
func documentPath(fiberPath string) string {
	parts := strings.Split(fiberPath, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}

// errorCodes returns the codes an error response's schema allows, or nil
// when the response is not an error body.
func errorCodes(tb testing.TB, resp *openapi3.Response) []string {
	tb.Helper()
	mt := resp.Content.Get("application/json")
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	s := mt.Schema.Value
	if len(s.AllOf) == 0 || !strings.HasSuffix(s.AllOf[0].Ref, "/ErrorBody") {
		return nil
	}
	code := s.Properties["error"].Value.Properties["code"].Value
	if code.Const != nil {
		return []string{fmt.Sprint(code.Const)}
	}
	var out []string
	for _, v := range code.Enum {
		out = append(out, fmt.Sprint(v))
	}
	return out
}

// TestOpenAPIErrorStatusesFollowTheStatusTable checks every documented
// error response against statusOf, the one table the error handler uses,
// and that the error body's code list is exactly that table's codes.
func TestOpenAPIErrorStatusesFollowTheStatusTable(t *testing.T) {
	doc := loadOpenAPI(t)
	var tableCodes, docCodes []string
	for code := range statusOf {
		tableCodes = append(tableCodes, code)
	}
	for _, v := range doc.Components.Schemas["ErrorBody"].Value.Properties["error"].Value.Properties["code"].Value.Enum {
		docCodes = append(docCodes, fmt.Sprint(v))
	}
	sort.Strings(tableCodes)
	sort.Strings(docCodes)
	if !slices.Equal(tableCodes, docCodes) {
		t.Errorf("ErrorBody codes %v, status table codes %v", docCodes, tableCodes)
	}
	checked := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for status, ref := range op.Responses.Map() {
				for _, code := range errorCodes(t, ref.Value) {
					checked++
					if want := strconv.Itoa(statusOf[code]); want != status {
						t.Errorf("%s %s documents %s with status %s; the server answers %s", method, path, code, status, want)
					}
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d error responses checked", checked)
	}
}

// TestOpenAPIStatesTheDecidedValues checks that the numbers the document
// states are the ones in the code.
func TestOpenAPIStatesTheDecidedValues(t *testing.T) {
	doc := loadOpenAPI(t)
	def := DefaultConfig()
	text := doc.Info.Description + doc.Paths.Value("/api/v1/documents/companies/search/").Post.Description
	for name, want := range map[string]string{
		"ShortQueryCap":           fmt.Sprintf("%.2f", resolver.ShortQueryCap),
		"NoCourtCap":              fmt.Sprintf("%.2f", resolver.NoCourtCap),
		"SharedNumberCap":         fmt.Sprintf("%.2f", resolver.SharedNumberCap),
		"UnverifiedCap":           fmt.Sprintf("%.2f", resolver.UnverifiedCap),
		"InvalidLEICap":           fmt.Sprintf("%.2f", resolver.InvalidLEICap),
		"AnchoredConfidence":      fmt.Sprintf("%.2f", resolver.AnchoredConfidence),
		"ExactNameSeatConfidence": fmt.Sprintf("%.2f", resolver.ExactNameSeatConfidence),
		"ExactThreshold":          fmt.Sprintf("%.2f", resolver.ExactThreshold),
		"ExactConfidence":         fmt.Sprintf("confidence of %.2f or more", resolver.ExactConfidence),
		"PossibleConfidence":      fmt.Sprintf("confidence of %.2f or less", resolver.PossibleConfidence),
		"SearchRate":              fmt.Sprintf("%g searches per second", def.SearchRate),
		"SearchBurst":             fmt.Sprintf("burst of %d", def.SearchBurst),
		"SessionRate":             fmt.Sprintf("token bucket of %g per second with a burst of %d", def.SessionRate, def.SessionBurst),
		"BodyLimit":               fmt.Sprintf("%d KiB", def.BodyLimit>>10),
		"SearchTimeout":           fmt.Sprintf("deadline %s", def.SearchTimeout),
		"MaxLimit":                fmt.Sprintf("limit 1 to %d (default %d)", resolver.MaxLimit, resolver.DefaultLimit),
		"MaxQueryRunes":           fmt.Sprintf("query up to %d characters", resolver.MaxQueryRunes),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("%s: the document does not say %q", name, want)
		}
	}
	events := doc.Paths.Value(routePaymentEvents).Post
	for where, text := range map[string]string{"description": events.Description, "413": *events.Responses.Value("413").Value.Description} {
		if want := companydocs.SizeText(PaymentEventBodyLimit); !strings.Contains(text, want) {
			t.Errorf("the events route's %s does not say its cap, %s", where, want)
		}
	}
	search := doc.Components.Schemas["SearchRequest"].Value.Properties
	if got := *search["limit"].Value.Max; got != resolver.MaxLimit {
		t.Errorf("SearchRequest.limit maximum %v, want %d", got, resolver.MaxLimit)
	}
	if got := *search["query"].Value.MaxLength; got != resolver.MaxQueryRunes {
		t.Errorf("SearchRequest.query maxLength %v, want %d", got, resolver.MaxQueryRunes)
	}
}

func TestOpenAPIServed(t *testing.T) {
	s := newTestServer(t, Deps{})
	for _, path := range []string{"/api/v1/openapi.json", "/api/v1/openapi.json/"} {
		resp, err := s.app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || string(body) != string(OpenAPI) {
			t.Errorf("GET %s: status %d, type %q, %d bytes; want the document", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
	}
}

// TestOpenAPIListsTheReasonCodes checks the document against the
// resolver's tables of reason and note codes and the verification gaps of
// discovery_unverified: the enums hold every code, the code's
// description names each code's params, and the params schema has exactly
// the fields a client receives.
func TestOpenAPIListsTheReasonCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	table, err := reasoncodes.Load()
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]func(string) ([]string, bool){"ReasonDetail": table.Params, "NoteDetail": table.Params, "LineDetail": table.Params, "VerificationGap": table.GapParams}
	for schema, codes := range map[string][]string{"ReasonDetail": table.ReasonCodes(), "NoteDetail": table.NoteCodes(), "LineDetail": table.LineCodes(), "VerificationGap": table.GapCodes()} {
		code := doc.Components.Schemas[schema].Value.Properties["code"].Value
		var enum []string
		for _, v := range code.Enum {
			enum = append(enum, fmt.Sprint(v))
		}
		slices.Sort(enum)
		if !slices.Equal(enum, codes) {
			t.Errorf("%s.code enum %v, want %v", schema, enum, codes)
		}
		for _, c := range codes {
			names, _ := params[schema](c)
			if len(names) > 0 && !strings.Contains(code.Description, c+" "+strings.Join(names, ", ")+";") {
				t.Errorf("the description of %s.code does not say %q", schema, c+" "+strings.Join(names, ", "))
			}
		}
	}
	for schema, typ := range map[string]reflect.Type{"ReasonParams": reflect.TypeFor[companydocs.ReasonParams](), "GapParams": reflect.TypeFor[companydocs.GapParams]()} {
		var documented []string
		for name := range doc.Components.Schemas[schema].Value.Properties {
			documented = append(documented, name)
		}
		slices.Sort(documented)
		if want := jsonFields(typ); !slices.Equal(documented, want) {
			t.Errorf("%s properties %v, want %v", schema, documented, want)
		}
	}
}

// jsonFields are the JSON names of a struct's fields, sorted.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
