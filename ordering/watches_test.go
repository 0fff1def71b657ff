package ordering

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"companydocs"
)

// fakeGeneration is an index generation of real profiles, some edited.
type fakeGeneration struct {
	id       string
	profiles fakeProfiles
}

func (g *fakeGeneration) ID() string { return g.id }
func (g *fakeGeneration) Profile(id string) (*companydocs.Profile, error) {
	return g.profiles.Profile(id)
}

// watchCase is one watched real profile and what generation B does to it.
type watchCase struct {
	name    string
	profile *companydocs.Profile         // as generation A holds it
	edit    func(p *companydocs.Profile) // nil: B drops the profile
	fields  []string                     // the changed fields B reports
}

// watchCases picks six real live profiles and edits five of them as the
// register would: renamed, seat moved, managing director replaced, put
// into liquidation, struck from the data; one unchanged. The fixture's
// profiles carry no officers, so the managing director of that case, in
// A and in B, is a real one of the sample (the end-to-end test of the
// server ingests real officers).
func watchCases(tb testing.TB, fx *fixture) []watchCase {
	tb.Helper()
	var picked []*companydocs.Profile
	for _, p := range fx.live {
		if p.Status() == companydocs.ProfileStatusRegistered && p.Seat != "" && len(picked) < 7 {
			picked = append(picked, p)
		}
	}
	if len(picked) < 7 {
		tb.Fatalf("the fixture has %d registered live profiles with a seat, want 7", len(picked))
	}
	other := picked[6] // lends a name and a seat
	withDirector := *picked[2]
	withDirector.Officers = []companydocs.Officer{{Name: "Karl Josef Dufner", FirstName: "Karl Josef", LastName: "Dufner", Position: "Geschäftsführer", City: "Biederbach", StartDate: "2015-12-22"}}
	return []watchCase{
		{"renamed", picked[0], func(p *companydocs.Profile) { p.Name = other.Name }, []string{companydocs.FieldName}},
		{"seat moved", picked[1], func(p *companydocs.Profile) { p.Seat = other.Seat }, []string{companydocs.FieldSeat}},
		{"officer replaced", &withDirector, func(p *companydocs.Profile) {
			p.Officers = []companydocs.Officer{{Name: "Karl Josef Dufner", Position: "Geschäftsführer", Dismissed: true},
				{Name: "Denny Fehrenbach", FirstName: "Denny", LastName: "Fehrenbach", Position: "Geschäftsführer", City: "Seelbach", StartDate: "2012-08-20"}}
		}, []string{companydocs.FieldOfficers}},
		{"in liquidation", picked[3], func(p *companydocs.Profile) { p.Name += " i.L." },
			[]string{companydocs.FieldName, companydocs.FieldStatus}},
		{"removed", picked[4], nil, []string{companydocs.FieldRemoved}},
		{"unchanged", picked[5], func(*companydocs.Profile) {}, nil},
	}
}

// generations returns A (the fixture) and B (A with the cases' edits).
func generations(fx *fixture, cases []watchCase, a, b string) (*fakeGeneration, *fakeGeneration) {
	genA := &fakeGeneration{id: a, profiles: fakeProfiles{}}
	genB := &fakeGeneration{id: b, profiles: fakeProfiles{}}
	for id, p := range fx.profiles {
		genA.profiles[id], genB.profiles[id] = p, p
	}
	for _, c := range cases {
		genA.profiles[c.profile.ID] = c.profile
		if c.edit == nil {
			delete(genB.profiles, c.profile.ID)
			continue
		}
		cp := *c.profile
		c.edit(&cp)
		genB.profiles[cp.ID] = &cp
	}
	return genA, genB
}

func watchPlans(tb testing.TB, limit int) *Plans {
	tb.Helper()
	plans, err := ParsePlans("test", fmt.Appendf(nil, `{"plans":[{"id":"sub","name":"Subscription","kind":"subscription","document_types":["AD","CD"],"currency":"EUR","price":"0.00","credit_cost":1,"watch_limit":%d}]}`, limit))
	if err != nil {
		tb.Fatal(err)
	}
	return plans
}

// TestWatchRules: only a verified, orderable profile is watched, once per
// account, up to the plan's limit; another account neither sees nor
// deletes the watch.
func TestWatchRules(t *testing.T) { forEachStore(t, testWatchRules) }

func testWatchRules(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, watchPlans(t, 2), Options{})
	acme, other := MustAccount(t, s, "acme", 0), MustAccount(t, s, "other", 0)
	if _, err := s.CreateAccountWithRole("ops", companydocs.RoleOperator, 0); err != nil {
		t.Fatal(err)
	}
	w, created, err := s.CreateWatch(ctx, acme, fx.live[0].ID)
	if err != nil || !created || w.CompanyProfileID != fx.live[0].ID || w.Company.Name != fx.live[0].Name {
		t.Fatalf("first watch = %+v, %v, %v", w, created, err)
	}
	again, created, err := s.CreateWatch(ctx, acme, fx.live[0].ID)
	if err != nil || created || again.ID != w.ID {
		t.Fatalf("watching again = %+v, %v, %v; want the watch %s", again, created, err, w.ID)
	}
	for _, c := range []struct {
		name, account, profile, code string
	}{
		{"removed company", acme, fx.removedCD.ID, companydocs.EVERIFIEDREQUIRED},
		{"unverified GLEIF record", acme, fx.unverified.ID, companydocs.EVERIFIEDREQUIRED},
		{"unknown id", acme, "dp_aaaaaaaaaaaaaaaaaaaa", companydocs.EVERIFIEDREQUIRED},
		{"empty id", acme, "", companydocs.EVERIFIEDREQUIRED},
		{"operator", "ops", fx.live[1].ID, companydocs.EFORBIDDEN},
	} {
		_, _, err := s.CreateWatch(ctx, c.account, c.profile)
		e := wantCode(t, err, c.code)
		if e.Message == "" {
			t.Errorf("%s: no sentence", c.name)
		}
	}
	if _, _, err := s.CreateWatch(ctx, acme, fx.live[1].ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.CreateWatch(ctx, acme, fx.live[2].ID)
	if e := wantCode(t, err, companydocs.EWATCHLIMIT); e.Message != "This account watches 2 companies, as many as its subscription allows (2); stop watching one first." {
		t.Errorf("limit sentence: %q", e.Message)
	}
	if list, _ := s.Watches.Watches(ctx, other); len(list) != 0 {
		t.Errorf("another account sees %d watches", len(list))
	}
	wantCode(t, s.DeleteWatch(ctx, other, w.ID), companydocs.ENOTFOUND)
	if err := s.DeleteWatch(ctx, acme, w.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateWatch(ctx, acme, fx.live[2].ID); err != nil {
		t.Errorf("after a delete the account is below its limit: %v", err)
	}
	if c, err := s.WatchCount(ctx, acme); err != nil || c != (companydocs.WatchCount{Count: 2, Limit: 2}) {
		t.Errorf("count = %+v, %v", c, err)
	}
	none := MustOpen(t, fx.profiles, shippedPlansWithoutWatches(t), Options{})
	MustAccount(t, none, "acme", 0)
	_, _, err = none.CreateWatch(ctx, "acme", fx.live[0].ID)
	wantCode(t, err, companydocs.EWATCHLIMIT)
}

// shippedPlansWithoutWatches is a plans file written before watches: its
// subscription plan has no watch_limit, and it stays valid.
func shippedPlansWithoutWatches(tb testing.TB) *Plans {
	tb.Helper()
	plans, err := ParsePlans("old", []byte(`{"plans":[{"id":"subscription-basic","name":"Subscription","kind":"subscription","document_types":["AD","CD"],"currency":"EUR","price":"0.00","credit_cost":1}]}`))
	if err != nil {
		tb.Fatal(err)
	}
	return plans
}

// TestCompareWatches: generation B of real records with real edits gives
// each watching account one event per changed profile, with the fields'
// before and after; comparing B again, on a second service over the same
// store at the same time, gives none more. A profile B lacks ends its
// watch.
func TestCompareWatches(t *testing.T) { forEachStore(t, testCompareWatches) }

func testCompareWatches(t *testing.T) {
	fx := realFixture(t)
	cases := watchCases(t, fx)
	genA, genB := generations(fx, cases, "gen-20260101T000000.000Z-aaaaaa", "gen-20260201T000000.000Z-bbbbbb")
	dir := t.TempDir()
	s, err := OpenAt(t, dir, fx.profiles, watchPlans(t, 10), Options{Generation: current(genA), SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	acme, other := MustAccount(t, s, "acme", 0), MustAccount(t, s, "other", 0)
	watchOf := map[string]string{} // watch id -> case name
	for _, c := range cases {
		for _, account := range []string{acme, other} {
			w, _, err := s.CreateWatch(ctx, account, c.profile.ID)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			watchOf[w.ID] = c.name
		}
	}
	// Two services compare B at once, as two nodes would.
	now := s.Orders.now
	second := &Watches{core: &core{store: s.store, plans: s.Orders.plans, now: now, ids: idGenerator{now: now}, eventIDs: idGenerator{now: now}}}
	var wg sync.WaitGroup
	runs := make([]WatchRun, 2)
	for i, o := range []*Watches{s.Watches, second} {
		wg.Go(func() {
			var err error
			if runs[i], err = o.CompareWatches(ctx, genB, nil, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := runs[0].Events + runs[1].Events; n != 10 {
		t.Errorf("the runs wrote %d events (%+v, %+v), want 10", n, runs[0], runs[1])
	}
	again, err := s.CompareWatches(ctx, genB, nil, nil)
	if err != nil || again.Compared != 0 || again.Events != 0 {
		t.Errorf("comparing B again: %+v, %v", again, err)
	}
	checkWatchEvents(t, storedEvents(t, s), cases, watchOf, genA.ID(), genB.ID(), map[string]string{acme: "", other: ""})
	list, err := s.Watches.Watches(ctx, acme)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list {
		c := caseNamed(cases, watchOf[w.ID])
		if w.Ended != (c.edit == nil) || w.Generation != genB.ID() || (w.LastChange == nil) != (c.fields == nil) {
			t.Errorf("%s: watch after B = %+v", c.name, w)
		}
	}
	if n, _ := s.CountWatches(ctx); n != 10 {
		t.Errorf("%d live watches, want 10 (two ended)", n)
	}
}

func caseNamed(cases []watchCase, name string) watchCase {
	for _, c := range cases {
		if c.name == name {
			return c
		}
	}
	return watchCase{}
}

// current makes Options.Generation answer gen.
func current(gen WatchGeneration) func() (WatchGeneration, func()) {
	return func() (WatchGeneration, func()) { return gen, func() {} }
}

// checkWatchEvents checks that the outbox holds exactly one
// company.changed event per watching account and changed case, with the
// generations and the fields' before and after.
func checkWatchEvents(t *testing.T, events []Event, cases []watchCase, watchOf map[string]string, before, after string, accounts map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range events {
		var ch companydocs.WatchChange
		if err := json.Unmarshal(e.Payload, &ch); err != nil {
			t.Fatal(err)
		}
		c := caseNamed(cases, watchOf[ch.WatchID])
		key := e.Account + "/" + c.name
		switch {
		case e.Type != companydocs.EventCompanyChanged || e.OrderID != "":
			t.Errorf("event %s: type %s, order %q", e.ID, e.Type, e.OrderID)
		case seen[key]:
			t.Errorf("%s: a second event", key)
		case ch.GenerationBefore != before || ch.GenerationAfter != after || ch.CompanyProfileID != c.profile.ID:
			t.Errorf("%s: event data %+v", key, ch)
		case ch.WatchEnded != (c.edit == nil):
			t.Errorf("%s: watch_ended %v", key, ch.WatchEnded)
		}
		if _, ok := accounts[e.Account]; !ok {
			t.Errorf("event for unexpected account %s", e.Account)
		}
		seen[key] = true
		var fields []string
		for _, f := range ch.Changes {
			fields = append(fields, f.Field)
		}
		if !slices.Equal(fields, c.fields) {
			t.Errorf("%s: changed fields %v, want %v", key, fields, c.fields)
		}
		checkBeforeAfter(t, key, c, ch.Changes)
	}
	for account := range accounts {
		for _, c := range cases {
			if c.fields != nil && !seen[account+"/"+c.name] {
				t.Errorf("%s/%s: no event", account, c.name)
			}
		}
	}
}

// checkBeforeAfter checks the values of the name and seat changes.
func checkBeforeAfter(t *testing.T, key string, c watchCase, changes []companydocs.FieldChange) {
	t.Helper()
	edited := *c.profile
	if c.edit != nil {
		c.edit(&edited)
	}
	for _, f := range changes {
		var before, after string
		switch f.Field {
		case companydocs.FieldName:
			before, after = c.profile.Name, edited.Name
		case companydocs.FieldSeat:
			before, after = c.profile.Seat, edited.Seat
		default:
			continue
		}
		if fmt.Sprint(f.Before) != before || fmt.Sprint(f.After) != after {
			t.Errorf("%s: %s %v -> %v, want %q -> %q", key, f.Field, f.Before, f.After, before, after)
		}
	}
}

// TestCompareWatchesSkippedGeneration: a node that never served B
// compares A's snapshot with C directly, and reports A -> C.
func TestCompareWatchesSkippedGeneration(t *testing.T) { forEachStore(t, testCompareWatchesSkipped) }

func testCompareWatchesSkipped(t *testing.T) {
	fx := realFixture(t)
	cases := watchCases(t, fx)
	genA, genC := generations(fx, cases, "gen-20260101T000000.000Z-aaaaaa", "gen-20260301T000000.000Z-cccccc")
	s := MustOpen(t, fx.profiles, watchPlans(t, 10), Options{Generation: current(genA)})
	acme := MustAccount(t, s, "acme", 0)
	watchOf := map[string]string{}
	for _, c := range cases {
		w, _, err := s.CreateWatch(ctx, acme, c.profile.ID)
		if err != nil {
			t.Fatal(err)
		}
		watchOf[w.ID] = c.name
	}
	run, err := s.CompareWatches(ctx, genC, nil, nil)
	if err != nil || run.Events != 5 || run.Removed != 1 || run.Compared != 6 {
		t.Fatalf("A -> C: %+v, %v", run, err)
	}
	checkWatchEvents(t, storedEvents(t, s), cases, watchOf, genA.ID(), genC.ID(), map[string]string{acme: ""})
	// An older generation swapped in late (a lagging node) changes nothing.
	if run, err := s.CompareWatches(ctx, genA, nil, nil); err != nil || run.Compared != 0 {
		t.Errorf("comparing the older A after C: %+v, %v", run, err)
	}
}

// TestWatchCreatedAcrossASwap: a watch read from generation A that
// commits after B was swapped in asks for a comparison (the one of B may
// have passed it by); one read and committed on the same generation does
// not.
func TestWatchCreatedAcrossASwap(t *testing.T) { forEachStore(t, testWatchCreatedAcrossASwap) }

func testWatchCreatedAcrossASwap(t *testing.T) {
	fx := realFixture(t)
	genA := &fakeGeneration{id: "gen-20260101T000000.000Z-aaaaaa", profiles: fx.profiles}
	genB := &fakeGeneration{id: "gen-20260201T000000.000Z-bbbbbb", profiles: fx.profiles}
	var mu sync.Mutex
	calls, behind := 0, 0
	swapAfterFirstRead := func() (WatchGeneration, func()) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 {
			return genA, func() {}
		}
		return genB, func() {}
	}
	s := MustOpen(t, fx.profiles, watchPlans(t, 10), Options{Generation: swapAfterFirstRead, OnWatchBehind: func() { behind++ }})
	acme := MustAccount(t, s, "acme", 0)
	w, _, err := s.CreateWatch(ctx, acme, fx.live[0].ID)
	if err != nil || w.Generation != genA.ID() || behind != 1 {
		t.Fatalf("watch read from A, committed on B: %+v, %v; comparisons asked %d, want 1", w, err, behind)
	}
	if _, _, err := s.CreateWatch(ctx, acme, fx.live[1].ID); err != nil || behind != 1 {
		t.Fatalf("watch read and committed on B: %v; comparisons asked %d, want still 1", err, behind)
	}
}

// changeRecord is a generation's change record as the comparison reads
// it: the profiles the cases change, against generation previous.
type changeRecord struct {
	previous string
	changed  map[string]bool
}

func (c changeRecord) Previous() string         { return c.previous }
func (c changeRecord) Changed(id string) bool   { return c.changed[id] }
func (c changeRecord) MovedTo(id string) string { return "" }
func (g *countingGeneration) ID() string        { return g.gen.ID() }
func (g *countingGeneration) Profile(id string) (*companydocs.Profile, error) {
	g.mu.Lock()
	g.lookups[id]++
	g.mu.Unlock()
	return g.gen.Profile(id)
}

// countingGeneration counts the profile look-ups of a generation.
type countingGeneration struct {
	gen     *fakeGeneration
	mu      sync.Mutex
	lookups map[string]int
}

// TestCompareWatchesWithChangeRecord: with B's change record, watches
// compared with A look up only the profiles the record lists and report
// what they would without it; a watch of the same profile compared with
// an older generation still looks its profile up.
func TestCompareWatchesWithChangeRecord(t *testing.T) {
	forEachStore(t, testCompareWatchesWithChangeRecord)
}

func testCompareWatchesWithChangeRecord(t *testing.T) {
	fx := realFixture(t)
	cases := watchCases(t, fx)
	genA, genB := generations(fx, cases, "gen-20260101T000000.000Z-aaaaaa", "gen-20260201T000000.000Z-bbbbbb")
	older := &fakeGeneration{id: "gen-20251201T000000.000Z-000000", profiles: genA.profiles}
	record := changeRecord{previous: genA.ID(), changed: map[string]bool{}}
	for _, c := range cases {
		if c.fields != nil {
			record.changed[c.profile.ID] = true
		}
	}
	var current WatchGeneration = genA
	s := MustOpen(t, fx.profiles, watchPlans(t, 10), Options{Generation: func() (WatchGeneration, func()) { return current, func() {} }})
	acme, other := MustAccount(t, s, "acme", 0), MustAccount(t, s, "other", 0)
	watchOf := map[string]string{}
	for _, c := range cases {
		w, _, err := s.CreateWatch(ctx, acme, c.profile.ID)
		if err != nil {
			t.Fatal(err)
		}
		watchOf[w.ID] = c.name
	}
	current = older // the other account's watch of the unchanged profile was made on an older node
	unchanged := cases[len(cases)-1]
	w, _, err := s.CreateWatch(ctx, other, unchanged.profile.ID)
	if err != nil || w.Generation != older.ID() {
		t.Fatalf("watch on the older generation: %+v, %v", w, err)
	}
	watchOf[w.ID] = unchanged.name
	counting := &countingGeneration{gen: genB, lookups: map[string]int{}}
	run, err := s.CompareWatches(ctx, counting, record, nil)
	if err != nil || run.Events != 5 || run.Compared != len(cases)+1 {
		t.Fatalf("compare with the change record: %+v, %v", run, err)
	}
	for _, c := range cases {
		if want := map[bool]int{true: 1, false: 0}[c.fields != nil || c.name == unchanged.name]; counting.lookups[c.profile.ID] != want {
			t.Errorf("%s: %d look-ups, want %d", c.name, counting.lookups[c.profile.ID], want)
		}
	}
	checkWatchEvents(t, storedEvents(t, s), cases, watchOf, genA.ID(), genB.ID(), map[string]string{acme: ""})
}
