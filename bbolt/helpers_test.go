package bbolt

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"companydocs"
	"companydocs/data"
	"companydocs/internal/realprofiles"
	"companydocs/ordering"
)

var ctx = context.Background()

// fixture holds real registry profiles that can be ordered: verified,
// registered, AD and CD held.
type fixture struct {
	profiles profiles
	live     []*companydocs.Profile
}

type profiles map[string]*companydocs.Profile

func (p profiles) Profile(id string) (*companydocs.Profile, error) {
	if q := p[id]; q != nil {
		cp := *q
		return &cp, nil
	}
	return nil, nil
}

func realFixture(tb testing.TB) *fixture {
	tb.Helper()
	fx := &fixture{profiles: profiles{}}
	for _, p := range realprofiles.Registry(tb) {
		if fx.profiles[p.ID] == nil && !p.Removed && p.HasDocument(companydocs.DocumentAD) && p.HasDocument(companydocs.DocumentCD) {
			fx.profiles[p.ID] = p
			fx.live = append(fx.live, p)
		}
	}
	if len(fx.live) < 10 {
		tb.Fatalf("only %d orderable fixture profiles", len(fx.live))
	}
	return fx
}

func shippedPlans(tb testing.TB) *ordering.Plans {
	tb.Helper()
	plans, err := ordering.ParsePlans(data.PlansName, data.Plans)
	if err != nil {
		tb.Fatal(err)
	}
	return plans
}

func request(p *companydocs.Profile, t companydocs.DocumentType, plan string) companydocs.OrderRequest {
	return companydocs.OrderRequest{CompanyProfileID: p.ID, DocumentType: t, PlanID: plan}
}

// service is the ordering service over a bbolt file, with the file's own
// check and counts at hand.
type service struct {
	*ordering.Accounts
	*ordering.Orders
	*ordering.Webhooks
	*ordering.Watches
	*ordering.Payments
	db *DB
}

// Close stops the session sweep, then closes the file.
func (s *service) Close() error {
	s.Accounts.Close()
	return s.db.Close()
}

func (s *service) Check() error          { return s.db.Check() }
func (s *service) Stats() (Stats, error) { return s.db.Stats() }

// openService opens the file at path and the ordering service over it,
// with the documents beside it and without the background sweep.
func openService(path string, p ordering.Profiles, plans *ordering.Plans, now func() time.Time) (*service, error) {
	db, err := Open(path, Options{})
	if err != nil {
		return nil, err
	}
	docs, err := OpenDocuments(db, filepath.Join(filepath.Dir(path), ordering.DocumentsDir))
	if err != nil {
		db.Close()
		return nil, err
	}
	opts := ordering.Options{Documents: docs, SweepInterval: -1, Now: now}
	svc, err := ordering.New(db, p, plans, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &service{Accounts: ordering.NewAccounts(db, opts), Orders: svc.Orders, Webhooks: svc.Webhooks, Watches: svc.Watches, Payments: svc.Payments, db: db}, nil
}

// mustService is openService on a new file in a temporary directory,
// checked and closed when the test ends.
func mustService(tb testing.TB, p ordering.Profiles, plans *ordering.Plans, now func() time.Time) *service {
	tb.Helper()
	s, err := openService(filepath.Join(tb.TempDir(), DatabaseFile), p, plans, now)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Check(); err != nil {
			tb.Errorf("database check: %v", err)
		}
		s.Close()
	})
	return s
}
