package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/register"
)

// watchRecordCount is how many sample records generation A holds.
const watchRecordCount = 1500

// watchCase is one watched real record and what a later generation does
// to it, as the register would.
type watchCase struct {
	name   string
	record map[string]any                // as generation A holds it
	edit   func(rec map[string]any)      // nil: the later generation drops it
	fields []string                      // the changed fields the event reports
	check  func(t *testing.T, ch change) // the before and after of the fields
}

// change is a company.changed event's data as a receiver reads it.
type change struct {
	WatchID          string `json:"watch_id"`
	CompanyProfileID string `json:"company_profile_id"`
	GenerationBefore string `json:"generation_before"`
	GenerationAfter  string `json:"generation_after"`
	WatchEnded       bool   `json:"watch_ended"`
	Changes          []struct {
		Field  string `json:"field"`
		Before any    `json:"before"`
		After  any    `json:"after"`
	} `json:"changes"`
}

func (c change) fields() []string {
	var out []string
	for _, f := range c.Changes {
		out = append(out, f.Field)
	}
	return out
}

func (c change) field(name string) (before, after any) {
	for _, f := range c.Changes {
		if f.Field == name {
			return f.Before, f.After
		}
	}
	return nil, nil
}

// watchSample returns the first watchRecordCount sample records, decoded.
func watchSample(t *testing.T) []map[string]any {
	t.Helper()
	return decodedSample(t, watchRecordCount)
}

// decodedSample returns the first n records of the embedded sample,
// decoded.
func decodedSample(t *testing.T, n int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range sampleLines(t, n) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// watchable reports whether a record is a registered company with both
// printouts, a seat, an address and a current officer: one a client may
// watch, whose every kind of change can be shown.
func watchable(rec map[string]any) bool {
	attrs, _ := rec["all_attributes"].(map[string]any)
	docs, _ := attrs["additional_data"].(map[string]any)
	officers, _ := rec["officers"].([]any)
	name, _ := rec["name"].(string)
	return rec["current_status"] == "currently registered" && docs["AD"] == true && docs["CD"] == true &&
		attrs["registered_office"] != "" && rec["registered_address"] != nil && len(officers) > 0 && len(currentOfficers(rec)) > 0 &&
		!strings.Contains(name, "i.L.") && !strings.Contains(strings.ToLower(name), "liquidation")
}

// pickWatchCases picks seven watchable real records: six watched (renamed,
// seat and address moved, managing director replaced, put into
// liquidation, struck from the data, unchanged) and one that lends its
// name, seat, address and officer to the edits.
func pickWatchCases(t *testing.T, recs []map[string]any) []watchCase {
	t.Helper()
	var picked []map[string]any
	seen := map[string]bool{}
	for _, r := range recs {
		number, _ := r["company_number"].(string)
		if len(picked) == 6 && officeOf(r) == officeOf(picked[1]) {
			continue // the lender's seat must differ from the moved one's
		}
		if watchable(r) && !seen[number] && len(picked) < 8 {
			seen[number] = true
			picked = append(picked, r)
		}
	}
	if len(picked) < 8 {
		t.Fatalf("only %d watchable records in the sample's first %d", len(picked), watchRecordCount)
	}

	lender := picked[6]
	lenderAttrs := lender["all_attributes"].(map[string]any)
	lenderOfficer := currentOfficers(lender)[0]
	return []watchCase{
		{name: "renamed", record: picked[0], edit: func(r map[string]any) { r["name"] = lender["name"] },
			fields: []string{companydocs.FieldName}, check: wantBeforeAfter(companydocs.FieldName, picked[0]["name"], lender["name"])},
		{name: "moved", record: picked[1], edit: func(r map[string]any) {
			r["all_attributes"].(map[string]any)["registered_office"] = lenderAttrs["registered_office"]
			r["registered_address"] = lender["registered_address"]
		}, fields: []string{companydocs.FieldSeat, companydocs.FieldAddress},
			check: wantBeforeAfter(companydocs.FieldSeat, picked[1]["all_attributes"].(map[string]any)["registered_office"], lenderAttrs["registered_office"])},
		{name: "director replaced", record: picked[2], edit: func(r map[string]any) {
			var officers []any
			for _, o := range r["officers"].([]any) {
				left := map[string]any{}
				for k, v := range o.(map[string]any) {
					left[k] = v
				}
				left["end_date"] = "2026-01-15"
				officers = append(officers, left)
			}
			r["officers"] = append(officers, lenderOfficer)
		}, fields: []string{companydocs.FieldOfficers}, check: wantOfficers(picked[2], lenderOfficer)},
		{name: "in liquidation", record: picked[3], edit: func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " i.L.") },
			fields: []string{companydocs.FieldName, companydocs.FieldStatus},
			check:  wantBeforeAfter(companydocs.FieldStatus, companydocs.ProfileStatusRegistered, companydocs.ProfileStatusInLiquidation)},
		{name: "removed", record: picked[4], fields: []string{companydocs.FieldRemoved}, check: func(t *testing.T, ch change) {
			if before, after := ch.field(companydocs.FieldRemoved); after != nil || fmt.Sprint(before.(map[string]any)["name"]) != picked[4]["name"] || !ch.WatchEnded {
				t.Errorf("removed: %v -> %v, watch ended %v", before, after, ch.WatchEnded)
			}
		}},
		{name: "unchanged", record: picked[5], edit: func(map[string]any) {}},
		{name: "court changed", record: picked[7], edit: moveToCourt, fields: []string{companydocs.FieldRegister}, check: func(t *testing.T, ch change) {
			before, after := ch.field(companydocs.FieldRegister)
			if fmt.Sprint(before.(map[string]any)["profile_id"]) != ch.CompanyProfileID || fmt.Sprint(after.(map[string]any)["former_court"]) != fmt.Sprint(before.(map[string]any)["court"]) {
				t.Errorf("court changed: %v -> %v", before, after)
			}
		}},
	}
}

// moveToCourt moves a record's entry to the München court, as the
// register records a move: "München früher Freiburg HRB 260632".
func moveToCourt(r map[string]any) {
	number := r["company_number"].(string)
	court, rest, _ := strings.Cut(number, "_")
	to := "D2601V" // München
	if court == to {
		to = "K1101R" // Hamburg
	}
	r["company_number"] = to + "_" + court + "_" + rest
	attrs := r["all_attributes"].(map[string]any)
	attrs["native_company_number"] = fmt.Sprint("München früher ", attrs["registrar"], " ", attrs["_registerArt"], " ", attrs["_registerNummer"])
	attrs["registrar"] = "München"
}

func officeOf(r map[string]any) string {
	return fmt.Sprint(r["all_attributes"].(map[string]any)["registered_office"])
}

func wantBeforeAfter(field string, before, after any) func(t *testing.T, ch change) {
	return func(t *testing.T, ch change) {
		t.Helper()
		if b, a := ch.field(field); fmt.Sprint(b) != fmt.Sprint(before) || fmt.Sprint(a) != fmt.Sprint(after) {
			t.Errorf("%s: %v -> %v, want %v -> %v", field, b, a, before, after)
		}
	}
}

// currentOfficers are the officers of a record who have not left.
func currentOfficers(rec map[string]any) []any {
	var out []any
	for _, o := range rec["officers"].([]any) {
		o := o.(map[string]any)
		other, _ := o["other_attributes"].(map[string]any)
		if o["end_date"] == nil && other["dismissed"] != true {
			out = append(out, o)
		}
	}
	return out
}

// wantOfficers checks that every officer of rec left and the lender's
// joined.
func wantOfficers(rec map[string]any, joined any) func(t *testing.T, ch change) {
	return func(t *testing.T, ch change) {
		t.Helper()
		before, after := ch.field(companydocs.FieldOfficers)
		left, _ := before.([]any)
		came, _ := after.([]any)
		if len(left) != len(currentOfficers(rec)) || len(came) != 1 || came[0].(map[string]any)["name"] != joined.(map[string]any)["name"] {
			t.Errorf("officers: left %v, joined %v", before, after)
		}
	}
}

// writeGeneration writes the records, each case edited by edits (a case
// whose edit is nil left out), as a dump, and builds a generation of it.
func writeGeneration(t *testing.T, dataDir string, recs []map[string]any, cases []watchCase, edits map[string]func(map[string]any)) string {
	t.Helper()
	byNumber := map[string]watchCase{}
	for _, c := range cases {
		byNumber[c.record["company_number"].(string)] = c
	}
	var out []map[string]any
	for _, r := range recs {
		c, watched := byNumber[r["company_number"].(string)]
		if watched {
			edit, ok := edits[c.name]
			if ok && edit == nil {
				continue
			}
			r = cloneRecord(r)
			if ok {
				edit(r)
			}
		}
		out = append(out, r)
	}
	return mustBuild(t, dataDir, 0, dumpFile(t, out)).ID
}

// dumpFile writes recs as a dump, a JSON line each, and returns its path.
func dumpFile(t *testing.T, recs []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	path := filepath.Join(t.TempDir(), "dump.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cloneRecord deep-copies a decoded record.
func cloneRecord(r map[string]any) map[string]any {
	raw, _ := json.Marshal(r)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// editsOf are the edits of the cases, the later generation's.
func editsOf(cases []watchCase) map[string]func(map[string]any) {
	out := map[string]func(map[string]any){}
	for _, c := range cases {
		out[c.name] = c.edit
	}
	return out
}

// profileIDOf finds the profile id of a case's record in the generation
// being served, by its register number and name.
func profileIDOf(t *testing.T, s *testServer, c watchCase) string {
	t.Helper()
	return servedProfileID(t, s, c.name, c.record, (*companydocs.Profile).OrderingEligible)
}

// servedProfileID finds the id of the profile s serves a decoded record
// under, by its register number and name, that want accepts.
func servedProfileID(t *testing.T, s *testServer, name string, record map[string]any, want func(*companydocs.Profile) bool) string {
	t.Helper()
	attrs := record["all_attributes"].(map[string]any)
	ps, err := s.Live.ByNumber(register.Type(attrs["_registerArt"].(string)), attrs["_registerNummer"].(string))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Name == record["name"] && want(p) {
			return p.ID
		}
	}
	t.Fatalf("%s: %s is not served as wanted", name, record["name"])
	return ""
}

// watchAll watches every case's profile for the account and returns
// watch id -> case.
func watchAll(t *testing.T, s *testServer, token string, cases []watchCase, into map[string]watchCase) {
	t.Helper()
	for _, c := range cases {
		var w companydocs.Watch
		body := map[string]string{"company_profile_id": profileIDOf(t, s, c)}
		if status, raw := s.call(t, "POST", "/api/v1/watches/", token, body, &w); status != http.StatusCreated {
			t.Fatalf("watch %s: %d %s", c.name, status, raw)
		}
		if status, raw := s.call(t, "POST", "/api/v1/watches/", token, body, nil); status != http.StatusOK || !strings.Contains(string(raw), w.ID) {
			t.Fatalf("watch %s again: %d %s, want 200 with %s", c.name, status, raw, w.ID)
		}
		into[w.ID] = c
	}
}

// checkWatchDeliveries waits for one company.changed event per changed
// case at each path, then checks that no more come and each carries the
// generations and the fields' before and after.
func checkWatchDeliveries(t *testing.T, rcv *receiver, paths []string, cases []watchCase, watches map[string]watchCase, before, after string) {
	t.Helper()
	want := 0
	for _, c := range cases {
		if c.fields != nil {
			want++
		}
	}
	for _, path := range paths {
		eventually(t, fmt.Sprintf("%d events at %s", want, path), func() bool { return len(rcv.delivered(path)) >= want })
	}
	time.Sleep(time.Second) // a second event, if any, would come now
	for _, path := range paths {
		hits := rcv.delivered(path)
		if len(hits) != want || rcv.count(path) != want {
			t.Errorf("%s: %d deliveries (%d requests), want %d", path, len(hits), rcv.count(path), want)
		}
		got := map[string]bool{}
		for _, h := range hits {
			raw, _ := json.Marshal(h.order)
			var ch change
			if err := json.Unmarshal(raw, &ch); err != nil {
				t.Fatal(err)
			}
			c, ok := watches[ch.WatchID]
			switch {
			case h.typ != companydocs.EventCompanyChanged || !ok:
				t.Errorf("%s: event %s of watch %s", path, h.typ, ch.WatchID)
				continue
			case got[c.name]:
				t.Errorf("%s: a second event for %s", path, c.name)
			case ch.GenerationBefore != before || ch.GenerationAfter != after:
				t.Errorf("%s: %s compared %s with %s, want %s with %s", path, c.name, ch.GenerationBefore, ch.GenerationAfter, before, after)
			case !slices.Equal(ch.fields(), c.fields):
				t.Errorf("%s: %s changed %v, want %v", path, c.name, ch.fields(), c.fields)
			}
			got[c.name] = true
			if c.check != nil {
				c.check(t, ch)
			}
		}
	}
}

// watchServer starts a server on dir that sends webhooks to loopback.
func watchServer(t *testing.T, dir string, storeFlags ...string) *testServer {
	return startServer(t, dir, append([]string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "2s",
		"--webhook-retry-base", "20ms"}, storeFlags...)...)
}

// TestWatchesEndToEnd: generation A of real records, two accounts watch
// six companies each, generation B edits five as the register would;
// the serving node swaps B in and each account's endpoint gets exactly
// one signed company.changed event per changed company, with the fields'
// before and after, and sees the last change in its list.
func TestWatchesEndToEnd(t *testing.T) { forEachServerStore(t, testWatchesEndToEnd) }

func testWatchesEndToEnd(t *testing.T, storeFlags ...string) {
	recs := watchSample(t)
	cases := pickWatchCases(t, recs)
	dir := t.TempDir()
	genA := writeGeneration(t, dir, recs, cases, nil)
	s := watchServer(t, dir, storeFlags...)
	rcv := newReceiver(t)
	tokens := []string{s.session(t, "watcher-1", 0), s.session(t, "watcher-2", 0)}
	paths := []string{"/watcher-1", "/watcher-2"}
	watches := map[string]watchCase{}
	for i, token := range tokens {
		rcv.register(t, s, token, paths[i], "ok")
		watchAll(t, s, token, cases, watches)
	}
	genB := writeGeneration(t, dir, recs, cases, editsOf(cases))
	checkWatchDeliveries(t, rcv, paths, cases, watches, genA, genB)

	var list struct{ Watches []companydocs.Watch }
	s.call(t, "GET", "/api/v1/watches/", tokens[0], nil, &list)
	if len(list.Watches) != len(cases) {
		t.Fatalf("the list holds %d watches, want %d", len(list.Watches), len(cases))
	}
	for _, w := range list.Watches {
		c := watches[w.ID]
		changed := w.LastChange != nil && w.LastChange.GenerationAfter == genB
		if changed != (c.fields != nil) || w.Ended != (c.edit == nil) || w.Generation != genB {
			t.Errorf("%s: listed as %+v", c.name, w)
		}
		if c.name == "court changed" {
			moved := cloneRecord(c.record)
			moveToCourt(moved)
			if id := profileIDOfRecord(t, moved); w.CompanyProfileID != id || w.Company.CourtCode != "D2601V" {
				t.Errorf("the watch of the moved entry watches %s at %s, want %s at D2601V", w.CompanyProfileID, w.Company.CourtCode, id)
			}
		}
	}
	var other struct{ Watches []companydocs.Watch }
	s.call(t, "GET", "/api/v1/watches/", tokens[1], nil, &other)
	if status, _ := s.call(t, "DELETE", "/api/v1/watches/"+other.Watches[0].ID, tokens[0], nil, nil); status != http.StatusNotFound {
		t.Errorf("deleting another account's watch: %d, want 404", status)
	}
	var account companydocs.AccountSummary
	s.call(t, "GET", "/api/v1/account/", tokens[0], nil, &account)
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
		if got, ok := s.metric(t, m.name, m.labels...); !ok || got != m.want {
			t.Errorf("%s%v = %v (found %v), want %v", m.name, m.labels, got, ok, m.want)
		}
	}
	s.checkAgainstOpenAPI(t)
}

// TestWatchesSkippedGeneration: a node that was down while B was
// published compares A with C at its next start; the events report A ->
// C, the renamed company's name as A and C hold it.
func TestWatchesSkippedGeneration(t *testing.T) { forEachServerStore(t, testWatchesSkippedGeneration) }

func testWatchesSkippedGeneration(t *testing.T, storeFlags ...string) {
	recs := watchSample(t)
	cases := pickWatchCases(t, recs)
	dir := t.TempDir()
	genA := writeGeneration(t, dir, recs, cases, nil)
	s := watchServer(t, dir, storeFlags...)
	rcv := newReceiver(t)
	token := s.session(t, "watcher", 0)
	rcv.register(t, s, token, "/watcher", "ok")
	watches := map[string]watchCase{}
	watchAll(t, s, token, cases, watches)
	if err := s.shutdown(); err != nil {
		t.Fatal(err)
	}
	writeGeneration(t, dir, recs, cases, editsOf(cases)) // B, never served
	edits := editsOf(cases)
	edits["renamed"] = func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " Verwaltungs GmbH") }
	cases[0].check = wantBeforeAfter(companydocs.FieldName, cases[0].record["name"], fmt.Sprint(cases[0].record["name"], " Verwaltungs GmbH"))
	genC := writeGeneration(t, dir, recs, cases, edits)
	for id, c := range watches {
		if c.name == "renamed" {
			watches[id] = cases[0]
		}
	}
	watchServer(t, dir, storeFlags...)
	checkWatchDeliveries(t, rcv, []string{"/watcher"}, cases, watches, genA, genC)
}
