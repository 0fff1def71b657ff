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
	"companydocs/metrics"
	"companydocs/resolver"

	"github.com/gofiber/fiber/v2"
)

// newTestServer makes a server with deps, filling in what a test does not
// give: a searcher that answers service_unavailable, ordering services
// that no request of the test reaches, always ready, fresh metrics, no log.
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
	if deps.Orders == nil {
		deps.Orders = unreachableOrders{}
	}
	if deps.Payments == nil {
		deps.Payments = unreachablePayments{}
	}
	if deps.Webhooks == nil {
		deps.Webhooks = unreachableWebhooks{}
	}
	if deps.Watches == nil {
		deps.Watches = unreachableWatches{}
	}
	if deps.Ready == nil {
		deps.Ready = func() []string { return nil }
	}
	if deps.Metrics == nil {
		deps.Metrics = metrics.New().HTTP
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

// unreachableOrders is Orders whose methods the tests that use it never
// call: a call would panic and answer 500. The same for the other
// ordering services.
type (
	unreachableOrders   struct{ Orders }
	unreachablePayments struct{ Payments }
	unreachableWebhooks struct{ hooks Webhooks }
	unreachableWatches  struct{ watches Watches }
)

func (u unreachableWebhooks) CreateWebhook(ctx context.Context, account, url, description string) (*companydocs.WebhookEndpoint, error) {
	return u.hooks.CreateWebhook(ctx, account, url, description)
}

func (u unreachableWebhooks) Webhooks(ctx context.Context, account string) ([]companydocs.WebhookEndpoint, error) {
	return u.hooks.Webhooks(ctx, account)
}

func (u unreachableWebhooks) DeleteWebhook(ctx context.Context, account, id string) error {
	return u.hooks.DeleteWebhook(ctx, account, id)
}

func (u unreachableWebhooks) WebhookDeliveries(ctx context.Context, account, id string) ([]companydocs.WebhookDelivery, error) {
	return u.hooks.WebhookDeliveries(ctx, account, id)
}

func (u unreachableWatches) CreateWatch(ctx context.Context, account, profileID string) (*companydocs.Watch, bool, error) {
	return u.watches.CreateWatch(ctx, account, profileID)
}

func (u unreachableWatches) Watches(ctx context.Context, account string) ([]companydocs.Watch, error) {
	return u.watches.Watches(ctx, account)
}

func (u unreachableWatches) DeleteWatch(ctx context.Context, account, id string) error {
	return u.watches.DeleteWatch(ctx, account, id)
}

// unreachableSessions is the same for Sessions.
type unreachableSessions struct{ Sessions }

func TestNewServerNamesMissingDependencies(t *testing.T) {
	_, err := NewServer(DefaultConfig(), Deps{Searcher: unavailableSearcher{}})
	if err == nil {
		t.Fatal("a server without Profiles, Sessions, Orders, Payments, Webhooks, Watches, Ready, Metrics and Logger was made")
	}
	for _, name := range []string{"Profiles", "Sessions", "Orders", "Payments", "Webhooks", "Watches", "Ready", "Metrics", "Logger"} {
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

// metricValue reads a counter of reg by its name (without the namespace)
// and its label pairs (name, value ...); 0 when the series was never
// counted.
func metricValue(tb testing.TB, reg *metrics.Registry, name string, labels ...string) float64 {
	tb.Helper()
	families, err := reg.Prometheus.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != companydocs.MetricsNamespace+"_"+name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			pairs := m.GetLabel()
			if len(pairs)*2 != len(labels) {
				continue
			}
			for i, p := range pairs {
				if p.GetName() != labels[2*i] || p.GetValue() != labels[2*i+1] {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
