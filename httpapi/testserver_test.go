package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// newTestServer makes a server with deps, filling in what a test does not
// give: a searcher that answers service_unavailable, an Ordering that no
// request of the test reaches, always ready, fresh metrics, no log.
func newTestServer(tb testing.TB, deps Deps) *Server {
	tb.Helper()
	return newTestServerWith(tb, DefaultConfig(), deps)
}

// newTestServerWith is newTestServer with config.
func newTestServerWith(tb testing.TB, config Config, deps Deps) *Server {
	tb.Helper()
	if deps.Searcher == nil {
		deps.Searcher = unavailableSearcher{}
	}
	if deps.Sessions == nil {
		deps.Sessions = unreachableSessions{}
	}
	if deps.Profiles == nil {
		deps.Profiles = unavailableSearcher{}
	}
	if deps.Ordering == nil {
		deps.Ordering = unreachableOrdering{}
	}
	if deps.Ready == nil {
		deps.Ready = func() []string { return nil }
	}
	if deps.Metrics == nil {
		deps.Metrics = NewMetrics(prometheus.NewRegistry())
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := NewServer(config, deps)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

type unavailableSearcher struct{}

func (unavailableSearcher) Profiles(context.Context, []string) (map[string]*companydocs.Profile, error) {
	return nil, &companydocs.Error{Code: companydocs.EUNAVAILABLE, Message: "This test serves no index."}
}

func (unavailableSearcher) Search(context.Context, resolver.Request) (*resolver.Result, error) {
	return nil, &companydocs.Error{Code: companydocs.EUNAVAILABLE, Message: "This test serves no index."}
}

// unreachableOrdering is an Ordering whose methods the tests that use it
// never call: a call would panic and answer 500.
type unreachableOrdering struct{ Ordering }

// unreachableSessions is the same for Sessions.
type unreachableSessions struct{ Sessions }

func TestNewServerNamesMissingDependencies(t *testing.T) {
	_, err := NewServer(DefaultConfig(), Deps{Searcher: unavailableSearcher{}})
	if err == nil {
		t.Fatal("a server without Profiles, Sessions, Ordering, Ready, Metrics and Logger was made")
	}
	for _, name := range []string{"Profiles", "Sessions", "Ordering", "Ready", "Metrics", "Logger"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

// An error whose message asks for an action gets the route that does it:
// the domain's sentence names the action, the HTTP layer the route.
func TestErrorsGetTheirRouteHint(t *testing.T) {
	s := newTestServer(t, Deps{})
	s.app.Get("/hinted", func(*fiber.Ctx) error {
		return (&companydocs.Error{Code: companydocs.EUNAUTHORIZED, Message: "This session was ended."}).WithHint(companydocs.HintCreateSession)
	})
	resp, err := s.app.Test(httptest.NewRequest(http.MethodGet, "/hinted", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "This session was ended. POST /api/v1/auth/sessions/") {
		t.Errorf("the answer lacks the route hint: %s", body)
	}
}
