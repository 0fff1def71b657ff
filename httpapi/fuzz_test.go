package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
	"companydocs/resolver"
)

// fuzzIndex is a resolver index over the real fixture profiles: lookups by
// id and register number are real, text search finds nothing (the query
// parsing and validation in front of it is what is fuzzed here).
type fuzzIndex struct{ profiles orderProfiles }

func (x fuzzIndex) Profile(id string) (*companydocs.Profile, error) { return x.profiles[id], nil }

func (x fuzzIndex) ByNumber(t register.Type, number string) ([]*companydocs.Profile, error) {
	var out []*companydocs.Profile
	for _, p := range x.profiles {
		if p.Ref.Type == t && p.Ref.Number == number {
			out = append(out, p)
		}
	}
	return out, nil
}

func (fuzzIndex) ByLEI(register.LEI) ([]*companydocs.Profile, error) { return nil, nil }

func (fuzzIndex) SearchText(context.Context, companydocs.TextQuery) ([]companydocs.Hit, error) {
	return nil, nil
}

type fuzzSearcher struct{ idx fuzzIndex }

func (s fuzzSearcher) Search(ctx context.Context, req resolver.Request) (*resolver.Result, error) {
	return resolver.Resolve(ctx, s.idx, req)
}

// fuzzRoutes are the endpoints that decode a JSON body.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/api/v1/documents/companies/search/"},
	{"POST", "/api/v1/auth/sessions/"},
	{"POST", "/api/v1/documents/orders/preview/"},
	{"POST", "/api/v1/documents/orders/"},
	{"POST", "/api/v1/documents/companies/search/batch"},
}

// FuzzEndpoints sends arbitrary bodies and Content-Types to every endpoint
// that reads JSON, with a valid session: the answer is never a 500, and it
// is either a success or the error shape with the code the status table
// gives its status.
func FuzzEndpoints(f *testing.F) {
	srv := newOrderServer(f, shippedPlansFile())
	srv.Searcher = fuzzSearcher{fuzzIndex{srv.profilesForFuzz(f)}}
	for i := range fuzzRoutes {
		route := byte(i)
		f.Add(route, []byte(orderBody(srv.live, "AD", "ad-single")), "application/json")
		f.Add(route, []byte(orderBody(srv.removed, "CD", "subscription-basic")), "application/json; charset=utf-8")
		f.Add(route, []byte(`{"query":"`+srv.live.Name+`","mode":"deep","limit":5}`), "")
		f.Add(route, []byte(`{"query":"HRB `+srv.live.Ref.Number+`","discover":true}`), "application/json")
		f.Add(route, []byte(`{"api_key":"cdk_x","api_key":"cdk_y"}`), "application/json")
		f.Add(route, []byte("{\"query\":\"Bau\xff\"}"), "text/plain")
		f.Add(route, []byte(`{"company_profile_id":7,"document_type":["AD"],"plan_id":null}`), "application/json")
		f.Add(route, []byte(`{"query":"Bau"}`), "application/js"+strings.Repeat("\xee", 5000))
		f.Add(route, []byte(`{"queries":[{"query":"`+srv.live.Name+`","properties":{"city":"Köln","officer":7}},{"query":""},null]}`), "application/json")
		f.Add(route, []byte(`{"query":"Bau","properties":{"register_number":"HRB `+srv.live.Ref.Number+`","town":"x"}}`), "application/json")
	}
	f.Fuzz(func(t *testing.T, route byte, body []byte, contentType string) {
		r := fuzzRoutes[int(route)%len(fuzzRoutes)]
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(string(body)))
		// app.Test reads the request with fasthttp's 4 KiB header buffer and
		// returns an error for larger headers instead of the server's 413;
		// TestHostileRequests sends oversized headers to a real listener.
		contentType = contentType[:min(len(contentType), 1<<10)]
		if contentType != "" && !strings.ContainsAny(contentType, "\r\n\x00") {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Authorization", "Bearer "+srv.token2) // "other" has no credits: nothing is bought
		resp, err := srv.app.Test(req, -1)
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		checkFuzzAnswer(t, r.path, resp.StatusCode, raw)
	})
}

// profilesForFuzz returns the fixture profiles the order server knows.
func (s *orderServer) profilesForFuzz(tb testing.TB) orderProfiles {
	tb.Helper()
	profiles, _, _ := loadOrderProfiles(tb)
	return profiles
}

func checkFuzzAnswer(t *testing.T, path string, status int, raw []byte) {
	t.Helper()
	if status >= 500 {
		t.Fatalf("%s: status %d: %s", path, status, raw)
	}
	if status < 300 {
		var ok map[string]any
		if err := json.Unmarshal(raw, &ok); err != nil {
			t.Fatalf("%s: success %d with a body that is no JSON object: %q", path, status, raw)
		}
		return
	}
	var body errorBody
	if err := json.Unmarshal(raw, &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("%s: status %d without the error shape: %q", path, status, raw)
	}
	if want, ok := statusOf[body.Error.Code]; !ok || want != status {
		t.Fatalf("%s: code %s with status %d, the status table says %d", path, body.Error.Code, status, want)
	}
	if path == "/api/v1/documents/companies/search/" && status == http.StatusUnprocessableEntity {
		t.Fatalf("search answered validation_error; its code for a malformed body is invalid_query: %s", raw)
	}
}
