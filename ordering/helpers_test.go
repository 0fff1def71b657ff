package ordering

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/internal/realprofiles"
)

// fixture holds real profiles sorted into the cases the gate tells apart.
type fixture struct {
	profiles   fakeProfiles
	live       []*companydocs.Profile // currently registered, AD and CD held
	removedCD  *companydocs.Profile   // removed, CD held, AD not
	removedNo  *companydocs.Profile   // removed, neither AD nor CD
	unverified *companydocs.Profile   // GLEIF record not in the registry cache
}

type fakeProfiles map[string]*companydocs.Profile

func (f fakeProfiles) Profile(id string) (*companydocs.Profile, error) {
	p := f[id]
	if p == nil {
		return nil, nil
	}
	cp := *p
	return &cp, nil
}

var (
	fixtureOnce sync.Once
	fixtureData *fixture
	fixtureErr  error
)

// realFixture sorts the 665 OffeneRegister fixture records and one GLEIF
// record (package realdata) once per test binary.
func realFixture(tb testing.TB) *fixture {
	tb.Helper()
	registry, discovery := realprofiles.Registry(tb), realprofiles.Discovery(tb)
	fixtureOnce.Do(func() { fixtureData, fixtureErr = sortFixture(registry, discovery) })
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureData
}

func sortFixture(registry []*companydocs.Profile, unverified *companydocs.Profile) (*fixture, error) {
	fx := &fixture{profiles: fakeProfiles{}}
	for _, p := range registry {
		fx.add(p)
	}
	fx.unverified = unverified
	fx.profiles[unverified.ID] = unverified
	if len(fx.live) < 10 || fx.removedCD == nil || fx.removedNo == nil {
		return nil, errors.New("fixture records lack a case the tests need")
	}
	return fx, nil
}

func (fx *fixture) add(p *companydocs.Profile) {
	if fx.profiles[p.ID] != nil {
		return // a register identity seen twice in the dump: keep the first
	}
	fx.profiles[p.ID] = p
	ad, cd := p.HasDocument(companydocs.DocumentAD), p.HasDocument(companydocs.DocumentCD)
	switch {
	case !p.Removed && ad && cd:
		fx.live = append(fx.live, p)
	case p.Removed && !ad && cd && fx.removedCD == nil:
		fx.removedCD = p
	case p.Removed && !ad && !cd && fx.removedNo == nil:
		fx.removedNo = p
	}
}

// shippedPlans loads the example plans file of the repository.
func shippedPlans(tb testing.TB) *Plans {
	tb.Helper()
	path := filepath.Join("..", "data", "plans.json")
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	plans, err := ParsePlans(path, data)
	if err != nil {
		tb.Fatal(err)
	}
	if plans.Len() == 0 {
		tb.Fatal("data/plans.json holds no plan")
	}
	return plans
}

// TestStores opens the stores the tests run against, by name: each
// opens the store kept in dir, empty the first time; after Close, opening
// dir again finds what was committed (a database store keys a database or
// schema of its own by dir). The stores register themselves in
// stores_test.go (package ordering_test, which may import them without an
// import cycle; its init runs before the tests): adding a store there is
// one line, and every test that uses forEachStore runs against it as a
// subtest named after it: the rules' tests (orders, lifecycle, roles,
// sessions, webhooks) and the store contract of store_test.go.
var TestStores = map[string]func(dir string) (Store, error){}

// TestDocuments opens the documents of a store TestStores opened, by the
// same name, with dir the documents directory beside it (the store
// package's own Documents, as serve wires it).
var TestDocuments = map[string]func(store Store, dir string) (Documents, error){}

// forEachStore runs fn as a subtest per registered store, named after it.
func forEachStore(t *testing.T, fn func(t *testing.T)) {
	t.Helper()
	if len(TestStores) == 0 {
		t.Fatal("no store registered in TestStores (see stores_test.go)")
	}
	for _, name := range slices.Sorted(maps.Keys(TestStores)) {
		t.Run(name, fn)
	}
}

// openStore opens the store kept in dir with the store of the subtest
// forEachStore runs (the second element of the test's name).
func openStore(tb testing.TB, dir string) (Store, error) {
	tb.Helper()
	parts := strings.Split(tb.Name(), "/")
	if len(parts) < 2 || TestStores[parts[1]] == nil {
		tb.Fatalf("test %s does not run under forEachStore", tb.Name())
	}
	return TestStores[parts[1]](dir)
}

// openDocuments opens the documents of store, a store of the subtest
// forEachStore runs, kept in dir.
func openDocuments(tb testing.TB, store Store, dir string) (Documents, error) {
	tb.Helper()
	parts := strings.Split(tb.Name(), "/")
	return TestDocuments[parts[1]](store, dir)
}

// service is Accounts and the ordering services over one store, as
// serve wires them.
type service struct {
	*Accounts
	*Orders
	*Payments
	*Webhooks
	*Watches
	store   Store
	docs    Documents
	docsDir string // where the documents of a store that keeps them as files are
}

// Close stops the session sweep, then closes the store.
func (s *service) Close() error {
	s.Accounts.Close()
	return s.store.Close()
}

// OpenAt makes a service over the store kept in dir, with the documents
// in dir too; reopening dir after Close finds what was committed.
func OpenAt(tb testing.TB, dir string, profiles Profiles, plans *Plans, opts Options) (*service, error) {
	tb.Helper()
	store, err := openStore(tb, dir)
	if err != nil {
		return nil, err
	}
	docsDir := filepath.Join(dir, DocumentsDir)
	docs, err := openDocuments(tb, store, docsDir)
	if err != nil {
		store.Close()
		return nil, err
	}
	opts.Documents = docs
	svc, err := New(store, profiles, plans, opts)
	if err != nil {
		store.Close()
		return nil, err
	}
	return newService(NewAccounts(store, opts), svc, store, docs, docsDir), nil
}

func newService(a *Accounts, svc *Services, store Store, docs Documents, docsDir string) *service {
	return &service{Accounts: a, Orders: svc.Orders, Payments: svc.Payments, Webhooks: svc.Webhooks, Watches: svc.Watches,
		store: store, docs: docs, docsDir: docsDir}
}

// checker is what a store offers to check its consistency (bbolt: its
// page and record check).
type checker interface{ Check() error }

// mustCheck runs the store's own check, if it has one, and the document
// check.
func mustCheck(tb testing.TB, s *service) {
	tb.Helper()
	if c, ok := s.store.(checker); ok {
		if err := c.Check(); err != nil {
			tb.Errorf("store check: %v", err)
		}
	}
	if err := s.CheckDocuments(context.Background()); err != nil {
		tb.Errorf("document check: %v", err)
	}
}

// MustOpen opens a service on a temporary directory and checks the
// store's consistency when the test ends. The background sweep is off
// unless opts asks for it: bbolt's check races with its commits.
func MustOpen(tb testing.TB, profiles Profiles, plans *Plans, opts Options) *service {
	tb.Helper()
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	s, err := OpenAt(tb, tb.TempDir(), profiles, plans, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		mustCheck(tb, s)
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

// MustAccount creates an account and returns its name.
func MustAccount(tb testing.TB, s *service, name string, credits int64) string {
	tb.Helper()
	if _, err := s.CreateAccount(name, credits); err != nil {
		tb.Fatal(err)
	}
	return name
}

func request(p *companydocs.Profile, t companydocs.DocumentType, plan string) companydocs.OrderRequest {
	return companydocs.OrderRequest{CompanyProfileID: p.ID, DocumentType: t, PlanID: plan}
}

func wantCode(tb testing.TB, err error, code string) *companydocs.Error {
	tb.Helper()
	var e *companydocs.Error
	if !errors.As(err, &e) || e.Code != code {
		tb.Fatalf("error = %v, want code %s", err, code)
	}
	return e
}

var ctx = context.Background()

// storedEvents returns every event in the outbox, in id order, read in
// one snapshot.
func storedEvents(tb testing.TB, s *service) []Event {
	tb.Helper()
	var events []Event
	err := s.store.View(context.Background(), func(tx Tx) (err error) {
		events, err = tx.Events("", 100000)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return events
}
