package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"
)

// SearchResult is the answer of a search.
type SearchResult struct {
	Candidates    []companydocs.Candidate `json:"candidates"`
	Understanding resolver.Understanding  `json:"query_understanding"`
}

// ErrorResult is an error answer, with the order it names if any.
type ErrorResult struct {
	Error struct{ Code, Message string } `json:"error"`
	Order *companydocs.Order             `json:"order"`
}

// FlowServer serves 2,000 sample records plus the 665 real fixture records,
// which hold Rheinbahn AG (Düsseldorf HRB 562).
func FlowServer(t *testing.T, flags ...string) (*TestServer, string) {
	dir := t.TempDir()
	MustBuild(t, dir, 2000, SampleFile(t), OffeneRegister(t, "fixtures_665.jsonl"))
	return StartServer(t, dir, flags...), dir
}

// ForEachServerStore runs fn against a server on orders.db and against
// one on a fresh PostgreSQL database, passing the flags that choose the
// store.
func ForEachServerStore(t *testing.T, fn func(t *testing.T, storeFlags ...string)) {
	t.Run("bbolt", func(t *testing.T) { fn(t) })
	t.Run("postgres", func(t *testing.T) {
		_, url := StartTestCluster(t)
		fn(t, "--store", url)
	})
}

// FlowSearch returns candidates and query understanding of a search.
func (s *TestServer) FlowSearch(t *testing.T, query string) SearchResult {
	t.Helper()
	var res SearchResult
	s.MustJSON(t, http.StatusOK, &res, "POST", "/api/v1/documents/companies/search/", `{"query": `+jsonString(query)+`}`)
	return res
}

// Call sends body (a string, or a value encoded as JSON) with a bearer
// token, decodes the answer into out and returns the status and body.
func (s *TestServer) Call(t *testing.T, method, path, token string, body any, out any, headers ...string) (int, []byte) {
	t.Helper()
	text, ok := body.(string)
	if !ok && body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		text = string(b)
	}
	if token != "" {
		headers = append(headers, "Authorization", "Bearer "+token)
	}
	status, raw, _ := s.Do(t, method, path, text, headers...)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
	return status, raw
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// Session creates the client account name with credits and returns the
// token of a session for it.
func (s *TestServer) Session(t *testing.T, name string, credits int64) string {
	t.Helper()
	key, err := s.Accounts.CreateAccount(name, credits)
	if err != nil {
		t.Fatal(err)
	}
	var sess companydocs.Session
	if status, raw := s.Call(t, "POST", "/api/v1/auth/sessions/", "", map[string]string{"api_key": key}, &sess); status != http.StatusCreated {
		t.Fatalf("create session: %d %s", status, raw)
	}
	return sess.Token
}
