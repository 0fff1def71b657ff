package httpapi

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/internal/realdata"
	"companydocs/ordering"
	"companydocs/plansfile"
	"companydocs/register"
)

// orderProfiles serves registry-cache profiles made from real
// OffeneRegister records.
type orderProfiles map[string]*companydocs.Profile

func (p orderProfiles) Profile(id string) (*companydocs.Profile, error) { return p[id], nil }

// loadOrderProfiles reads the first 200 fixture records and returns them
// with one live record (AD and CD held) and one removed record.
func loadOrderProfiles(tb testing.TB) (profiles orderProfiles, live, removed *companydocs.Profile) {
	tb.Helper()
	f, err := os.Open(realdata.Path(tb, "offeneregister", "fixtures_665.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	profiles = orderProfiles{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for i := 0; i < 200 && sc.Scan(); i++ {
		var r struct {
			CompanyNumber string `json:"company_number"`
			Name          string `json:"name"`
			CurrentStatus string `json:"current_status"`
			Attributes    struct {
				Docs map[string]bool `json:"additional_data"`
			} `json:"all_attributes"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			tb.Fatal(err)
		}
		// The id only has to be unique and stable here: derive it from the
		// whole company_number.
		court, _, _ := strings.Cut(r.CompanyNumber, "_")
		ref := register.Ref{Court: court, Type: register.HRB, Number: r.CompanyNumber}
		p := &companydocs.Profile{ID: companydocs.ProfileID(ref), Source: companydocs.SourceRegistryCache, Ref: ref,
			Name: r.Name, Verified: true, Removed: r.CurrentStatus == "removed"}
		for _, t := range companydocs.OrderableDocumentTypes {
			if r.Attributes.Docs[string(t)] {
				p.Documents = append(p.Documents, t)
			}
		}
		profiles[p.ID] = p
		if live == nil && !p.Removed && len(p.Documents) == 2 {
			live = p
		}
		if removed == nil && p.Removed {
			removed = p
		}
	}
	if live == nil || removed == nil {
		tb.Fatal("fixture records lack a live or a removed entry")
	}
	return profiles, live, removed
}

// orderServer is a Server with real ordering.Accounts and Orders on a
// temp dir.
type orderServer struct {
	*Server
	live, removed *companydocs.Profile
	token, token2 string // sessions of accounts "acme" (2 credits) and "other" (0)
	key           string
}

func newOrderServer(tb testing.TB, plansFile string) *orderServer {
	tb.Helper()
	profiles, live, removed := loadOrderProfiles(tb)
	plans, err := plansfile.Load(plansFile)
	if err != nil {
		tb.Fatal(err)
	}
	accounts, orders := openOrdering(tb, profiles, plans)
	s := newTestServer(tb, orderingDeps(accounts, orders))
	srv := &orderServer{Server: s, live: live, removed: removed}
	srv.key = mustKey(tb, accounts, "acme", 2)
	srv.token = srv.login(tb, srv.key)
	srv.token2 = srv.login(tb, mustKey(tb, accounts, "other", 0))
	return srv
}

// orderingDeps are the dependencies that authenticate and order, as serve
// wires them.
func orderingDeps(accounts *ordering.Accounts, svc *ordering.Services) Deps {
	return Deps{Sessions: accounts, Orders: svc.Orders, Payments: svc.Payments, Webhooks: svc.Webhooks, Watches: svc.Watches}
}

// openOrdering opens Accounts and the ordering services over a bbolt file in a temporary
// directory, checked and closed when the test ends.
func openOrdering(tb testing.TB, profiles ordering.Profiles, plans *ordering.Plans) (*ordering.Accounts, *ordering.Services) {
	tb.Helper()
	dir := tb.TempDir()
	db, err := bbolt.Open(filepath.Join(dir, bbolt.DatabaseFile), bbolt.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	docs, err := bbolt.OpenDocuments(db, filepath.Join(dir, ordering.DocumentsDir))
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	opts := ordering.Options{Documents: docs}
	orders, err := ordering.New(db, profiles, plans, opts)
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	accounts := ordering.NewAccounts(db, opts)
	tb.Cleanup(func() {
		accounts.Close()
		if err := db.Check(); err != nil {
			tb.Error(err)
		}
		db.Close()
	})
	return accounts, orders
}

func mustKey(tb testing.TB, svc *ordering.Accounts, name string, credits int64) string {
	tb.Helper()
	key, err := svc.CreateAccount(name, credits)
	if err != nil {
		tb.Fatal(err)
	}
	return key
}

func (s *orderServer) login(tb testing.TB, key string) string {
	tb.Helper()
	var sess companydocs.Session
	s.mustDo(tb, "POST", "/api/v1/auth/sessions/", "", `{"api_key":"`+key+`"}`, http.StatusCreated, &sess)
	return sess.Token
}

// do sends a request and returns the status and the decoded body.
func (s *orderServer) do(tb testing.TB, method, path, token, body string, headers ...string) (*http.Response, map[string]any) {
	tb.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := s.app.Test(req, -1)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			tb.Fatalf("%s %s: body %q is not a JSON object: %v", method, path, data, err)
		}
	}
	return resp, out
}

// mustDo sends a request, checks the status and decodes the body into dst.
func (s *orderServer) mustDo(tb testing.TB, method, path, token, body string, status int, dst any, headers ...string) map[string]any {
	tb.Helper()
	resp, out := s.do(tb, method, path, token, body, headers...)
	if resp.StatusCode != status {
		tb.Fatalf("%s %s: status %d, want %d; body %v", method, path, resp.StatusCode, status, out)
	}
	if dst != nil {
		b, _ := json.Marshal(out)
		if err := json.Unmarshal(b, dst); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// wantError checks status and the error body {"error":{"code","message"}}.
func (s *orderServer) wantError(tb testing.TB, method, path, token, body string, status int, code string, headers ...string) map[string]any {
	tb.Helper()
	out := s.mustDo(tb, method, path, token, body, status, nil, headers...)
	e, _ := out["error"].(map[string]any)
	if e == nil || e["code"] != code || e["message"] == "" || e["message"] == nil {
		tb.Fatalf("%s %s: body %v, want error code %s with a message", method, path, out, code)
	}
	return out
}

func shippedPlansFile() string { return filepath.Join("..", "data", "plans.json") }

func orderBody(p *companydocs.Profile, doc, plan string) string {
	return `{"company_profile_id":"` + p.ID + `","document_type":"` + doc + `","plan_id":"` + plan + `"}`
}

func TestPlansEndpoint(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	for _, path := range []string{"/api/v1/documents/plans/", "/api/v1/documents/plans"} {
		var resp struct{ Plans []companydocs.Plan }
		s.mustDo(t, "GET", path, "", "", http.StatusOK, &resp)
		if len(resp.Plans) == 0 || resp.Plans[0].ID == "" || resp.Plans[0].Price == "" {
			t.Errorf("GET %s: plans %+v", path, resp.Plans)
		}
	}
	empty := newOrderServer(t, filepath.Join(t.TempDir(), "absent.json"))
	empty.wantError(t, "GET", "/api/v1/documents/plans/", "", "", http.StatusServiceUnavailable, companydocs.EPLANMISSING)
}

func TestSessionEndpoints(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	var sess companydocs.Session
	s.mustDo(t, "POST", "/api/v1/auth/sessions", "", `{"api_key":"`+s.key+`"}`, http.StatusCreated, &sess)
	if !strings.HasPrefix(sess.Token, "cds_") || sess.ExpiresAt.IsZero() {
		t.Errorf("session = %+v", sess)
	}
	s.wantError(t, "POST", "/api/v1/auth/sessions/", "", `{"api_key":"cdk_wrong"}`, http.StatusUnauthorized, companydocs.EUNAUTHORIZED)
	s.wantError(t, "POST", "/api/v1/auth/sessions/", "", `{"api_key":""}`, http.StatusUnprocessableEntity, companydocs.EVALIDATION)
	s.wantError(t, "POST", "/api/v1/auth/sessions/", "", `{"key":"x"}`, http.StatusUnprocessableEntity, companydocs.EVALIDATION)
	s.wantError(t, "POST", "/api/v1/auth/sessions/", "", `api_key=x`, http.StatusUnsupportedMediaType, companydocs.EUNSUPPORTEDMEDIA, "Content-Type", "application/x-www-form-urlencoded")

	s.mustDo(t, "DELETE", "/api/v1/auth/sessions/current", sess.Token, "", http.StatusNoContent, nil)
	s.wantError(t, "GET", "/api/v1/documents/orders/", sess.Token, "", http.StatusUnauthorized, companydocs.EUNAUTHORIZED)
	s.wantError(t, "DELETE", "/api/v1/auth/sessions/current/", sess.Token, "", http.StatusUnauthorized, companydocs.EUNAUTHORIZED)
}

func TestEndpointsNeedASession(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	for _, r := range []struct{ method, path string }{
		{"POST", "/api/v1/documents/orders/preview/"}, {"POST", "/api/v1/documents/orders/preview"},
		{"POST", "/api/v1/documents/orders/"}, {"POST", "/api/v1/documents/orders"},
		{"GET", "/api/v1/documents/orders/"}, {"GET", "/api/v1/documents/orders/ord_x/"},
		{"DELETE", "/api/v1/auth/sessions/current"},
	} {
		for name, auth := range map[string]string{"none": "", "basic": "Basic YTpi", "empty bearer": "Bearer ", "unknown token": "Bearer cds_unknown", "two words": "Bearer a b"} {
			t.Run(r.method+" "+r.path+" "+name, func(t *testing.T) {
				var headers []string
				if auth != "" {
					headers = []string{"Authorization", auth}
				}
				body := ""
				if r.method == "POST" {
					body = orderBody(s.live, "AD", "ad-single")
				}
				resp, out := s.do(t, r.method, r.path, "", body, headers...)
				e, _ := out["error"].(map[string]any)
				if resp.StatusCode != http.StatusUnauthorized || e["code"] != companydocs.EUNAUTHORIZED {
					t.Errorf("status %d body %v, want 401 unauthorized", resp.StatusCode, out)
				}
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
				}
			})
		}
	}
}

func TestPreviewEndpoint(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	var p companydocs.Preview
	s.mustDo(t, "POST", "/api/v1/documents/orders/preview/", s.token, orderBody(s.live, "AD", "ad-single"), http.StatusOK, &p)
	if !p.OrderingEligible || p.EstimatedTotal != "4.50" || p.Currency != "EUR" || p.Company == nil || p.Company.Name != s.live.Name {
		t.Errorf("eligible preview = %+v", p)
	}
	s.mustDo(t, "POST", "/api/v1/documents/orders/preview", s.token, orderBody(s.removed, "CD", "cd-single"), http.StatusOK, &p)
	if p.OrderingEligible || len(p.Blockers) == 0 || p.Blockers[0].Code != ordering.BlockerCompanyRemoved {
		t.Errorf("removed company preview = %+v", p)
	}
	s.mustDo(t, "POST", "/api/v1/documents/orders/preview/", s.token, `{"document_type":"AD","plan_id":"ad-single"}`, http.StatusOK, &p)
	if p.OrderingEligible || p.Blockers[0].Code != ordering.BlockerProfileIDMissing {
		t.Errorf("preview without profile id = %+v", p)
	}
	for name, body := range map[string]string{
		"not JSON":                 `{"document_type":`,
		"array":                    `[]`,
		"empty":                    ``,
		"two objects":              `{"document_type":"AD","plan_id":"ad-single"} {}`,
		"number as document type":  `{"document_type":1,"plan_id":"ad-single"}`,
		"unknown document type":    `{"document_type":"XY","plan_id":"ad-single"}`,
		"missing plan":             `{"document_type":"AD"}`,
		"client-sent company name": `{"company_name":"Siemens AG","document_type":"AD","plan_id":"ad-single"}`,
	} {
		t.Run(name, func(t *testing.T) {
			out := s.wantError(t, "POST", "/api/v1/documents/orders/preview/", s.token, body, http.StatusUnprocessableEntity, companydocs.EVALIDATION)
			if name == "client-sent company name" && !strings.Contains(out["error"].(map[string]any)["message"].(string), "company_name") {
				t.Errorf("message does not name the unknown field: %v", out)
			}
		})
	}
}

func TestCreateOrderEndpoint(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	var o companydocs.Order
	resp, out := s.do(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "AD", "ad-single"), "Idempotency-Key", "click-1")
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, out)
	}
	b, _ := json.Marshal(out)
	json.Unmarshal(b, &o)
	if o.Status != "PREVIEW_READY" || o.WorkflowStatus != "started" || o.CompanyProfileID != s.live.ID || o.NextStep.Kind != "payment" || o.Company.Name != s.live.Name {
		t.Errorf("order = %+v", o)
	}
	if _, leaked := out["account"]; leaked || resp.Header.Get("Location") != "/api/v1/documents/orders/"+o.ID+"/" {
		t.Errorf("order body %v, Location %q", out, resp.Header.Get("Location"))
	}

	dup := s.wantError(t, "POST", "/api/v1/documents/orders", s.token, orderBody(s.live, "CD", "cd-single"), http.StatusConflict, companydocs.EDUPLICATEORDER, "Idempotency-Key", "click-1")
	if existing, _ := dup["order"].(map[string]any); existing == nil || existing["id"] != o.ID {
		t.Errorf("duplicate body %v does not carry order %s", dup, o.ID)
	}
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "AD", "ad-single"), http.StatusConflict, companydocs.EDUPLICATEORDER)
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.removed, "CD", "cd-single"), http.StatusUnprocessableEntity, companydocs.EVERIFIEDREQUIRED)
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token, `{"document_type":"AD","plan_id":"ad-single"}`, http.StatusUnprocessableEntity, companydocs.EVERIFIEDREQUIRED)
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "AD", "gold"), http.StatusUnprocessableEntity, companydocs.EVALIDATION)
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token2, orderBody(s.live, "AD", "subscription-basic"), http.StatusPaymentRequired, companydocs.EINSUFFICIENTFUNDS)
	s.wantError(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "AD", "ad-single"), http.StatusUnprocessableEntity, companydocs.EVALIDATION, "Idempotency-Key", strings.Repeat("k", 300))

	var sub companydocs.Order
	s.mustDo(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "CD", "subscription-basic"), http.StatusCreated, &sub)
	if sub.NextStep.Kind != "delivery" || sub.CreditsCharged != 1 {
		t.Errorf("subscription order = %+v", sub)
	}
}

func TestOrderListAndOwnership(t *testing.T) {
	s := newOrderServer(t, shippedPlansFile())
	var first, second companydocs.Order
	s.mustDo(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "AD", "ad-single"), http.StatusCreated, &first)
	s.mustDo(t, "POST", "/api/v1/documents/orders/", s.token, orderBody(s.live, "CD", "cd-single"), http.StatusCreated, &second)

	var page struct {
		Orders     []companydocs.Order
		NextCursor *string `json:"next_cursor"`
	}
	s.mustDo(t, "GET", "/api/v1/documents/orders/?limit=1", s.token, "", http.StatusOK, &page)
	if len(page.Orders) != 1 || page.Orders[0].ID != second.ID || page.NextCursor == nil {
		t.Fatalf("first page = %+v", page)
	}
	s.mustDo(t, "GET", "/api/v1/documents/orders?limit=1&cursor="+*page.NextCursor, s.token, "", http.StatusOK, &page)
	if len(page.Orders) != 1 || page.Orders[0].ID != first.ID || page.NextCursor != nil {
		t.Fatalf("second page = %+v", page)
	}
	out := s.mustDo(t, "GET", "/api/v1/documents/orders/", s.token2, "", http.StatusOK, nil)
	if orders, ok := out["orders"].([]any); !ok || len(orders) != 0 || out["next_cursor"] != nil {
		t.Errorf("other account's list = %v", out)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=%21%21"} {
		s.wantError(t, "GET", "/api/v1/documents/orders/?"+q, s.token, "", http.StatusUnprocessableEntity, companydocs.EVALIDATION)
	}

	var got companydocs.Order
	for _, path := range []string{"/api/v1/documents/orders/" + first.ID + "/", "/api/v1/documents/orders/" + first.ID} {
		s.mustDo(t, "GET", path, s.token, "", http.StatusOK, &got)
		if got.ID != first.ID || got.Company != first.Company {
			t.Errorf("GET %s = %+v", path, got)
		}
	}
	foreign := s.wantError(t, "GET", "/api/v1/documents/orders/"+first.ID+"/", s.token2, "", http.StatusNotFound, companydocs.ENOTFOUND)
	if b, _ := json.Marshal(foreign); strings.Contains(string(b), s.live.Name) || foreign["order"] != nil {
		t.Errorf("another account's order leaks: %s", b)
	}
	s.wantError(t, "GET", "/api/v1/documents/orders/ord_00000000000000000000000000/", s.token, "", http.StatusNotFound, companydocs.ENOTFOUND)
}
