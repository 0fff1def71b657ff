package webhooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/e2e"
)

// profileIDOf finds the profile id of a case's record in the generation
// being served, by its register number and name.
func profileIDOf(t *testing.T, s *e2e.TestServer, c e2e.WatchCase) string {
	t.Helper()
	return e2e.ServedProfileID(t, s, c.Name, c.Record, (*companydocs.Profile).OrderingEligible)
}

// watchAll watches every case's profile for the account and returns
// watch id -> case.
func watchAll(t *testing.T, s *e2e.TestServer, token string, cases []e2e.WatchCase, into map[string]e2e.WatchCase) {
	t.Helper()
	for _, c := range cases {
		var w companydocs.Watch
		body := map[string]string{"company_profile_id": profileIDOf(t, s, c)}
		if status, raw := s.Call(t, "POST", "/api/v1/watches/", token, body, &w); status != http.StatusCreated {
			t.Fatalf("watch %s: %d %s", c.Name, status, raw)
		}
		if status, raw := s.Call(t, "POST", "/api/v1/watches/", token, body, nil); status != http.StatusOK || !strings.Contains(string(raw), w.ID) {
			t.Fatalf("watch %s again: %d %s, want 200 with %s", c.Name, status, raw, w.ID)
		}
		into[w.ID] = c
	}
}

// checkWatchDeliveries waits for one company.changed event per changed
// case at each path, then checks that no more come and each carries the
// generations and the fields' before and after.
func checkWatchDeliveries(t *testing.T, rcv *e2e.Receiver, paths []string, cases []e2e.WatchCase, watches map[string]e2e.WatchCase, before, after string) {
	t.Helper()
	want := 0
	for _, c := range cases {
		if c.Fields != nil {
			want++
		}
	}
	for _, path := range paths {
		e2e.Eventually(t, fmt.Sprintf("%d events at %s", want, path), func() bool { return len(rcv.Delivered(path)) >= want })
	}
	time.Sleep(time.Second) // a second event, if any, would come now
	for _, path := range paths {
		hits := rcv.Delivered(path)
		if len(hits) != want || rcv.Count(path) != want {
			t.Errorf("%s: %d deliveries (%d requests), want %d", path, len(hits), rcv.Count(path), want)
		}
		got := map[string]bool{}
		for _, h := range hits {
			raw, _ := json.Marshal(h.Order)
			var ch e2e.Change
			if err := json.Unmarshal(raw, &ch); err != nil {
				t.Fatal(err)
			}
			c, ok := watches[ch.WatchID]
			switch {
			case h.Typ != companydocs.EventCompanyChanged || !ok:
				t.Errorf("%s: event %s of watch %s", path, h.Typ, ch.WatchID)
				continue
			case got[c.Name]:
				t.Errorf("%s: a second event for %s", path, c.Name)
			case ch.GenerationBefore != before || ch.GenerationAfter != after:
				t.Errorf("%s: %s compared %s with %s, want %s with %s", path, c.Name, ch.GenerationBefore, ch.GenerationAfter, before, after)
			case !slices.Equal(ch.Fields(), c.Fields):
				t.Errorf("%s: %s changed %v, want %v", path, c.Name, ch.Fields(), c.Fields)
			}
			got[c.Name] = true
			if c.Check != nil {
				c.Check(t, ch)
			}
		}
	}
}

// TestWatchesEndToEnd: generation A of real records, two accounts watch
// six companies each, generation B edits five as the register would;
// the serving node swaps B in and each account's endpoint gets exactly
// one signed company.changed event per changed company, with the fields'
// before and after, and sees the last change in its list.
func TestWatchesEndToEnd(t *testing.T) { e2e.ForEachServerStore(t, testWatchesEndToEnd) }

func testWatchesEndToEnd(t *testing.T, storeFlags ...string) {
	recs := e2e.WatchSample(t)
	cases := e2e.PickWatchCases(t, recs)
	dir := t.TempDir()
	genA := e2e.WriteGeneration(t, dir, recs, cases, nil)
	s := e2e.WatchServer(t, dir, storeFlags...)
	rcv := e2e.NewReceiver(t)
	tokens := []string{s.Session(t, "watcher-1", 0), s.Session(t, "watcher-2", 0)}
	paths := []string{"/watcher-1", "/watcher-2"}
	watches := map[string]e2e.WatchCase{}
	for i, token := range tokens {
		rcv.Register(t, s, token, paths[i], "ok")
		watchAll(t, s, token, cases, watches)
	}
	genB := e2e.WriteGeneration(t, dir, recs, cases, e2e.EditsOf(cases))
	checkWatchDeliveries(t, rcv, paths, cases, watches, genA, genB)

	var list struct{ Watches []companydocs.Watch }
	s.Call(t, "GET", "/api/v1/watches/", tokens[0], nil, &list)
	if len(list.Watches) != len(cases) {
		t.Fatalf("the list holds %d watches, want %d", len(list.Watches), len(cases))
	}
	for _, w := range list.Watches {
		c := watches[w.ID]
		changed := w.LastChange != nil && w.LastChange.GenerationAfter == genB
		if changed != (c.Fields != nil) || w.Ended != (c.Edit == nil) || w.Generation != genB {
			t.Errorf("%s: listed as %+v", c.Name, w)
		}
		if c.Name == "court changed" {
			moved := e2e.CloneRecord(c.Record)
			e2e.MoveToCourt(moved)
			if id := e2e.ProfileIDOfRecord(t, moved); w.CompanyProfileID != id || w.Company.CourtCode != "D2601V" {
				t.Errorf("the watch of the moved entry watches %s at %s, want %s at D2601V", w.CompanyProfileID, w.Company.CourtCode, id)
			}
		}
	}
	var other struct{ Watches []companydocs.Watch }
	s.Call(t, "GET", "/api/v1/watches/", tokens[1], nil, &other)
	if status, _ := s.Call(t, "DELETE", "/api/v1/watches/"+other.Watches[0].ID, tokens[0], nil, nil); status != http.StatusNotFound {
		t.Errorf("deleting another account's watch: %d, want 404", status)
	}
	var account companydocs.AccountSummary
	s.Call(t, "GET", "/api/v1/account/", tokens[0], nil, &account)
	if account.Watches != (companydocs.WatchCount{Count: len(cases) - 1, Limit: 25}) {
		t.Errorf("the account shows %+v, want %d watches (one ended) of 25", account.Watches, len(cases)-1)
	}
	for _, m := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"companydocs_watches", nil, float64(2 * (len(cases) - 1))},
		{"companydocs_watch_comparisons_total", nil, float64(2 * len(cases))},
		{"companydocs_watch_events_total", nil, 12},
		{"companydocs_watch_changes_total", nil, 2 * 8},
		{"companydocs_watch_changed_total", []string{"outcome", "ended"}, 2},
	} {
		if got, ok := s.Metric(t, m.name, m.labels...); !ok || got != m.want {
			t.Errorf("%s%v = %v (found %v), want %v", m.name, m.labels, got, ok, m.want)
		}
	}
	s.CheckAgainstOpenAPI(t)
}

// TestWatchesSkippedGeneration: a node that was down while B was
// published compares A with C at its next start; the events report A ->
// C, the renamed company's name as A and C hold it.
func TestWatchesSkippedGeneration(t *testing.T) {
	e2e.ForEachServerStore(t, testWatchesSkippedGeneration)
}

func testWatchesSkippedGeneration(t *testing.T, storeFlags ...string) {
	recs := e2e.WatchSample(t)
	cases := e2e.PickWatchCases(t, recs)
	dir := t.TempDir()
	genA := e2e.WriteGeneration(t, dir, recs, cases, nil)
	s := e2e.WatchServer(t, dir, storeFlags...)
	rcv := e2e.NewReceiver(t)
	token := s.Session(t, "watcher", 0)
	rcv.Register(t, s, token, "/watcher", "ok")
	watches := map[string]e2e.WatchCase{}
	watchAll(t, s, token, cases, watches)
	if err := s.Shutdown(); err != nil {
		t.Fatal(err)
	}
	e2e.WriteGeneration(t, dir, recs, cases, e2e.EditsOf(cases)) // B, never served
	edits := e2e.EditsOf(cases)
	edits["renamed"] = func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " Verwaltungs GmbH") }
	cases[0].Check = e2e.WantBeforeAfter(companydocs.FieldName, cases[0].Record["name"], fmt.Sprint(cases[0].Record["name"], " Verwaltungs GmbH"))
	genC := e2e.WriteGeneration(t, dir, recs, cases, edits)
	for id, c := range watches {
		if c.Name == "renamed" {
			watches[id] = cases[0]
		}
	}
	e2e.WatchServer(t, dir, storeFlags...)
	checkWatchDeliveries(t, rcv, []string{"/watcher"}, cases, watches, genA, genC)
}
