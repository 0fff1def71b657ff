package httpapi

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"companydocs"
	"companydocs/resolver"

	"github.com/prometheus/client_golang/prometheus"
)

// newTestServer makes a server with deps, filling in what a test does not
// give: a searcher that answers service_unavailable, an Ordering that no
// request of the test reaches, always ready, fresh metrics, no log.
func newTestServer(tb testing.TB, deps Deps) *Server {
	tb.Helper()
	if deps.Searcher == nil {
		deps.Searcher = unavailableSearcher{}
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
	s, err := NewServer(DefaultConfig(), deps)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

type unavailableSearcher struct{}

func (unavailableSearcher) Search(context.Context, resolver.Request) (*resolver.Result, error) {
	return nil, companydocs.Errorf(companydocs.EUNAVAILABLE, "This test serves no index.")
}

// unreachableOrdering is an Ordering whose methods the tests that use it
// never call: a call would panic and answer 500.
type unreachableOrdering struct{ Ordering }

func TestNewServerNamesMissingDependencies(t *testing.T) {
	_, err := NewServer(DefaultConfig(), Deps{Searcher: unavailableSearcher{}})
	if err == nil {
		t.Fatal("a server without Ordering, Ready, Metrics and Logger was made")
	}
	for _, name := range []string{"Ordering", "Ready", "Metrics", "Logger"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}
