package orders

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/internal/e2e"
	"companydocs/ordering"
	"companydocs/postgres"

	"github.com/jackc/pgx/v5"
)

// accessEndpoint is one route with a request that is valid for the
// account that owns ownOrder.
type accessEndpoint struct {
	method, path, body string
	public             bool
}

// TestAccessControl tries every endpoint with no token, malformed tokens,
// an unknown, an expired and a revoked token, and another account's token:
// public endpoints stay public, gated ones answer 401 with a challenge,
// another account's order is 404 without its content. Then no key or
// token is in any log line, metric, error message or in the store
// (orders.db, or every table of the PostgreSQL database).
func TestAccessControl(t *testing.T) { e2e.ForEachServerStore(t, testAccessControl) }

func testAccessControl(t *testing.T, storeFlags ...string) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 0, e2e.OffeneRegister(t, "fixtures_665.jsonl"))
	store := accessStore{dir: dir}
	if len(storeFlags) == 2 {
		store.url = storeFlags[1]
	}
	keyA, keyB, expired := store.accounts(t)
	s := e2e.StartServer(t, dir, append([]string{"--log-level", "debug"}, storeFlags...)...)
	tokenA, tokenB, revoked := e2e.AccessLogin(t, s, keyA), e2e.AccessLogin(t, s, keyB), e2e.AccessLogin(t, s, keyB)
	s.MustJSON(t, http.StatusNoContent, nil, "DELETE", "/api/v1/auth/sessions/current", "", "Authorization", "Bearer "+revoked)

	profile := s.FlowProfile(t)
	var own struct {
		ID               string
		CompanyProfileID string `json:"company_profile_id"`
	}
	s.MustJSON(t, http.StatusCreated, &own, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(profile, "AD", "ad-single"), "Authorization", "Bearer "+tokenA)

	endpoints := []accessEndpoint{
		{"GET", "/healthz", "", true},
		{"GET", "/readyz", "", true},
		{"GET", "/", "", true},
		{"GET", "/metrics", "", true},
		{"GET", "/api/v1/openapi.json", "", true},
		{"GET", "/api/v1/documents/plans/", "", true},
		{"POST", "/api/v1/documents/companies/search/", `{"query":"Rheinbahn"}`, true},
		{"POST", "/api/v1/documents/orders/preview/", e2e.OrderJSON(profile, "CD", "cd-single"), false},
		{"POST", "/api/v1/documents/orders/", e2e.OrderJSON(profile, "CD", "cd-single"), false},
		{"GET", "/api/v1/documents/orders/", "", false},
		{"GET", "/api/v1/documents/orders/" + own.ID + "/", "", false},
		{"DELETE", "/api/v1/auth/sessions/current", "", false},
		{"GET", "/api/v1/account", "", false},
		{"GET", "/api/v1/account/", "", false},
	}
	clientOnly := append(endpoints[7:11:11],
		accessEndpoint{"POST", "/api/v1/documents/orders/" + own.ID + "/cancel", "", false},
		accessEndpoint{"GET", "/api/v1/documents/orders/" + own.ID + "/document", "", false})
	operatorOnly := operatorEndpoints(own.ID)
	endpoints = append(append(endpoints, clientOnly[4:]...), operatorOnly...)
	bad := map[string]string{
		"no token":                  "",
		"empty bearer":              "Bearer ",
		"basic scheme":              "Basic " + base64.StdEncoding.EncodeToString([]byte("alpha:"+keyA)),
		"two tokens":                "Bearer " + tokenA + " " + tokenA,
		"API key as token":          "Bearer " + keyA,
		"token without scheme":      tokenA,
		"truncated token":           "Bearer " + tokenA[:len(tokenA)-1],
		"token with a changed char": "Bearer " + flipLast(tokenA),
		"unknown token":             "Bearer cds_" + strings.Repeat("A", 43),
		"expired token":             "Bearer " + expired,
		"revoked token":             "Bearer " + revoked,
	}
	tried := 0
	for _, ep := range endpoints {
		for name, header := range bad {
			t.Run(ep.method+" "+ep.path+" "+name, func(t *testing.T) {
				headers := []string{}
				if ep.method == "PUT" {
					headers = append(headers, "Content-Type", "application/pdf") // the upload's
				}
				if header != "" {
					headers = append(headers, "Authorization", header)
				}
				status, body, h := s.Do(t, ep.method, ep.path, ep.body, headers...)
				switch {
				case ep.public && status >= 400:
					t.Errorf("public endpoint: status %d %s", status, body)
				case !ep.public && status != http.StatusUnauthorized:
					t.Errorf("status %d, want 401: %s", status, body)
				case !ep.public && !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer"):
					t.Errorf("401 without a Bearer challenge: %q", h.Get("WWW-Authenticate"))
				case !ep.public && !bytes.Contains(body, []byte(`"code":"unauthorized"`)):
					t.Errorf("401 body %s", body)
				}
			})
			tried++
		}
	}
	checkRoles(t, s, tokenA, clientOnly, operatorOnly)
	checkOtherAccount(t, s, tokenA, tokenB, own.ID, own.CompanyProfileID)
	checkNoSecrets(t, s, store.contents(t), []string{keyA, keyB, tokenA, tokenB, revoked, expired})
	t.Logf("access control: %d endpoint x credential combinations tried", tried)
}

// operatorEndpoints are the operator routes, with valid requests.
func operatorEndpoints(id string) []accessEndpoint {
	base := "/api/v1/operator/orders/"
	return []accessEndpoint{
		{"GET", base, "", false},
		{"GET", base + "?status=PAID", "", false},
		{"GET", base + id + "/", "", false},
		{"POST", base + id + "/pay", "", false},
		{"POST", base + id + "/request", "", false},
		{"PUT", base + id + "/document", "%PDF-1.4 x", false},
		{"POST", base + id + "/fail", `{"reason":"r"}`, false},
		{"POST", base + id + "/cancel", "", false},
	}
}

// checkRoles: a client token on every operator route, and an operator
// token on every client-only route, is 403 forbidden, and changes nothing.
func checkRoles(t *testing.T, s *e2e.TestServer, clientToken string, clientOnly, operatorOnly []accessEndpoint) {
	t.Helper()
	if _, err := s.Accounts.CreateAccountWithRole("ops", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	key, err := s.Accounts.CreateAccountWithRole("ops2", companydocs.RoleOperator, 0)
	if err != nil {
		t.Fatal(err)
	}
	opToken := e2e.AccessLogin(t, s, key)
	try := func(token string, eps []accessEndpoint) {
		for _, ep := range eps {
			headers := []string{"Authorization", "Bearer " + token}
			if ep.method == "PUT" {
				headers = append(headers, "Content-Type", "application/pdf")
			}
			status, body, _ := s.Do(t, ep.method, ep.path, ep.body, headers...)
			if status != http.StatusForbidden || !bytes.Contains(body, []byte(`"code":"forbidden"`)) {
				t.Errorf("%s %s with the wrong role: %d %s, want 403 forbidden", ep.method, ep.path, status, body)
			}
		}
	}
	try(clientToken, operatorOnly)
	try(opToken, clientOnly)
}

// accessAccounts creates two accounts, and a session of the second that
// expired yesterday, in the order database before the server opens it.
// accessStore is the order store of the access test: orders.db in dir,
// or the PostgreSQL database at url.
type accessStore struct{ dir, url string }

// accounts makes two client accounts and a session of the second that
// expired, made with a clock a day and a half behind.
func (st accessStore) accounts(t *testing.T) (keyA, keyB, expired string) {
	t.Helper()
	opts := ordering.Options{Now: func() time.Time { return time.Now().Add(-36 * time.Hour) }, SweepInterval: -1}
	var accounts *ordering.Accounts
	if st.url == "" {
		svc, _ := e2e.OpenOrderService(t, st.dir, opts)
		defer svc.Close()
		accounts = svc.Accounts
	} else {
		db, err := postgres.Open(context.Background(), st.url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		accounts = ordering.NewAccounts(db, opts)
	}
	var err error
	if keyA, err = accounts.CreateAccount("alpha", 10); err != nil {
		t.Fatal(err)
	}
	if keyB, err = accounts.CreateAccount("beta", 10); err != nil {
		t.Fatal(err)
	}
	sess, err := accounts.CreateSession(context.Background(), keyB)
	if err != nil {
		t.Fatal(err)
	}
	if !sess.ExpiresAt.Before(time.Now()) {
		t.Fatalf("the session made yesterday expires at %v", sess.ExpiresAt)
	}
	return keyA, keyB, sess.Token
}

// contents returns what the store holds: the bytes of orders.db, or the
// text of every row of every table (bytea as hex).
func (st accessStore) contents(t *testing.T) []byte {
	t.Helper()
	if st.url == "" {
		b, err := os.ReadFile(filepath.Join(st.dir, bbolt.DatabaseFile))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, st.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT quote_ident(table_name) FROM information_schema.tables WHERE table_schema = 'public'")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for _, table := range tables {
		var text string
		if err := conn.QueryRow(ctx, "SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM "+table+" t").Scan(&text); err != nil {
			t.Fatal(err)
		}
		all.WriteString(text)
	}
	return all.Bytes()
}

func flipLast(s string) string {
	last := s[len(s)-1]
	if last == 'A' {
		return s[:len(s)-1] + "B"
	}
	return s[:len(s)-1] + "A"
}

// checkOtherAccount checks that beta neither sees nor learns anything of
// alpha's order, and that ending beta's session leaves alpha's working.
func checkOtherAccount(t *testing.T, s *e2e.TestServer, tokenA, tokenB, orderID, profileID string) {
	t.Helper()
	authB := []string{"Authorization", "Bearer " + tokenB}
	status, body, _ := s.Do(t, "GET", "/api/v1/documents/orders/"+orderID+"/", "", authB...)
	_, missing, _ := s.Do(t, "GET", "/api/v1/documents/orders/ord_0000000000000000000000000a/", "", authB...)
	if status != http.StatusNotFound || bytes.Contains(body, []byte(profileID)) || bytes.Contains(body, []byte(`"order"`)) {
		t.Errorf("another account's order: status %d body %s, want 404 without content", status, body)
	}
	same := strings.ReplaceAll(string(missing), "ord_0000000000000000000000000a", orderID)
	if string(body) != same {
		t.Errorf("another account's order answers %s, a missing one %s: they differ beyond the id", body, missing)
	}
	_, list, _ := s.Do(t, "GET", "/api/v1/documents/orders/", "", authB...)
	if bytes.Contains(list, []byte(orderID)) {
		t.Errorf("another account's list shows the order: %s", list)
	}
	// The same company, document and plan is no duplicate across accounts.
	s.MustJSON(t, http.StatusCreated, nil, "POST", "/api/v1/documents/orders/", e2e.OrderJSON(profileID, "AD", "ad-single"), authB...)
	s.MustJSON(t, http.StatusNoContent, nil, "DELETE", "/api/v1/auth/sessions/current", "", authB...)
	s.MustJSON(t, http.StatusOK, nil, "GET", "/api/v1/documents/orders/"+orderID+"/", "", "Authorization", "Bearer "+tokenA)
}

// checkNoSecrets looks for every key and token (whole, and without its
// prefix) in the logs, /metrics, every response body and header seen,
// and orders.db; the database must hold the hash of each key instead.
func checkNoSecrets(t *testing.T, s *e2e.TestServer, db []byte, secrets []string) {
	t.Helper()
	_, metrics, _ := s.Do(t, "GET", "/metrics", "")
	places := map[string][]byte{"logs": []byte(s.Logs.String()), "metrics": metrics, "the store": db}
	s.Mu.Lock()
	for _, ex := range s.Exchanges {
		if strings.HasPrefix(ex.Path, "/api/v1/auth/sessions") && ex.Method == "POST" {
			continue // the answer that hands out a token
		}
		var hdr bytes.Buffer
		ex.RespHeader.Write(&hdr)
		places["answer to "+ex.Method+" "+ex.Path] = append(append(places["answer to "+ex.Method+" "+ex.Path], ex.RespBody...), hdr.Bytes()...)
	}
	s.Mu.Unlock()
	for _, secret := range secrets {
		_, bare, _ := strings.Cut(secret, "_")
		for where, text := range places {
			if bytes.Contains(text, []byte(secret)) || bytes.Contains(text, []byte(bare)) {
				i := bytes.Index(text, []byte(bare))
				t.Errorf("%s contains a secret (%.8s...) after %q", where, secret, text[max(0, i-200):i])
			}
		}
	}
	for _, key := range secrets[:2] {
		h := sha256.Sum256([]byte(key))
		if !bytes.Contains(db, h[:]) && !bytes.Contains(db, []byte(hex.EncodeToString(h[:]))) {
			t.Errorf("the store does not hold the hash of key %.8s...: how is it stored?", key)
		}
	}
}
