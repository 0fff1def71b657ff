package ordering

import (
	"companydocs/internal/realdata"

	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
)

// sharedData finds the shared real-data directory by walking up from the
// package directory, or skips the test.
func sharedData(tb testing.TB) string {
	tb.Helper()
	return realdata.Dir(tb)
}

// ocRecord is the part of an OffeneRegister record the tests need.
type ocRecord struct {
	CompanyNumber string `json:"company_number"`
	Name          string `json:"name"`
	CurrentStatus string `json:"current_status"`
	Attributes    struct {
		RegisterArt      string          `json:"_registerArt"`
		RegisterNummer   string          `json:"_registerNummer"`
		RegisteredOffice string          `json:"registered_office"`
		AdditionalData   map[string]bool `json:"additional_data"`
	} `json:"all_attributes"`
}

// profileOf turns a real record into a registry-cache profile: court code
// and former court from company_number, type and number from the
// attributes, suffix = what follows the number in company_number.
func profileOf(r ocRecord) *companydocs.Profile {
	parts := strings.Split(r.CompanyNumber, "_")
	ref := companydocs.RegisterRef{Court: parts[0], Type: companydocs.RegisterType(r.Attributes.RegisterArt), Number: r.Attributes.RegisterNummer}
	if len(parts) == 3 {
		ref.FormerCourt = parts[1]
	}
	last := parts[len(parts)-1]
	if i := strings.Index(last, ref.Number); i >= 0 {
		ref.Suffix = last[i+len(ref.Number):]
	}
	p := &companydocs.Profile{
		ID: companydocs.ProfileID(ref), Source: companydocs.SourceRegistryCache, Ref: ref,
		Name: r.Name, Seat: r.Attributes.RegisteredOffice, Verified: true,
		Removed: r.CurrentStatus == "removed",
	}
	for _, t := range knownDocumentTypes {
		if r.Attributes.AdditionalData[string(t)] {
			p.Documents = append(p.Documents, t)
		}
	}
	return p
}

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

// realFixture loads the 665 OffeneRegister fixture records and one GLEIF
// record once per test binary.
func realFixture(tb testing.TB) *fixture {
	tb.Helper()
	dir := sharedData(tb)
	fixtureOnce.Do(func() { fixtureData, fixtureErr = loadFixture(dir) })
	if fixtureErr != nil {
		tb.Fatal(fixtureErr)
	}
	return fixtureData
}

func loadFixture(dir string) (*fixture, error) {
	f, err := os.Open(filepath.Join(dir, "offeneregister", "fixtures_665.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fx := &fixture{profiles: fakeProfiles{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r ocRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, err
		}
		fx.add(profileOf(r))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	u, err := loadUnverified(dir)
	if err != nil {
		return nil, err
	}
	fx.unverified = u
	fx.profiles[u.ID] = u
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

// loadUnverified makes a discovery profile from the first real GLEIF
// record; discovery profiles start unverified until corroborated.
func loadUnverified(dir string) (*companydocs.Profile, error) {
	f, err := os.Open(filepath.Join(dir, "gleif", "lei_records_de_goldencopy.csv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	row := rows[1]
	lei := companydocs.LEI(row[col["LEI"]])
	return &companydocs.Profile{
		ID: companydocs.DiscoveryID(lei), Source: companydocs.SourceDiscovery,
		Name: row[col["Entity.LegalName"]], Seat: row[col["Entity.LegalAddress.City"]],
		Discovery: &companydocs.Discovery{
			ValidationSources: row[col["Registration.ValidationSources"]],
			Missing:           []string{"its register reference was not matched to a register entry"},
		},
	}, nil
}

// clock is an adjustable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// shippedPlans loads the example plans file of the repository.
func shippedPlans(tb testing.TB) *Plans {
	tb.Helper()
	plans, err := LoadPlans(filepath.Join("..", "data", "plans.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if plans.Len() == 0 {
		tb.Fatal("data/plans.json holds no plan")
	}
	return plans
}

// MustOpen opens a service on a temporary directory and checks the
// database file's consistency when the test ends. The background sweep is
// off unless opts asks for it: bbolt's check races with its commits.
func MustOpen(tb testing.TB, profiles Profiles, plans *Plans, opts Options) *Service {
	tb.Helper()
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	s, err := Open(filepath.Join(tb.TempDir(), DatabaseFile), profiles, plans, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Check(); err != nil {
			tb.Errorf("database check: %v", err)
		}
		if err := s.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return s
}

// MustAccount creates an account and returns its name.
func MustAccount(tb testing.TB, s *Service, name string, credits int64) string {
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

func readFile(tb testing.TB, path string) string {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
