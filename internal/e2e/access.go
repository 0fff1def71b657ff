package e2e

import (
	"net/http"
	"testing"
)

// AccessLogin opens a session with the API key key and returns its token.
func AccessLogin(t *testing.T, s *TestServer, key string) string {
	t.Helper()
	var sess struct{ Token string }
	s.MustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+key+`"}`)
	return sess.Token
}

// FlowProfile finds an orderable profile through search.
func (s *TestServer) FlowProfile(t *testing.T) string {
	t.Helper()
	for _, c := range s.Search(t, "Rheinbahn Düsseldorf") {
		if c.OrderingEligible {
			return c.ProfileID
		}
	}
	t.Fatal("no orderable candidate for Rheinbahn Düsseldorf among the fixtures")
	return ""
}
