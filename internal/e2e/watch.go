package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
)

// watchRecordCount is how many sample records generation A holds.
const watchRecordCount = 1500

// WatchCase is one watched real record and what a later generation does
// to it, as the register would.
type WatchCase struct {
	Name   string
	Record map[string]any                // as generation A holds it
	Edit   func(rec map[string]any)      // nil: the later generation drops it
	Fields []string                      // the changed fields the event reports
	Check  func(t *testing.T, ch Change) // the before and after of the fields
}

// Change is a company.changed event's data as a receiver reads it.
type Change struct {
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

// Fields returns the fields the change names, in its order.
func (c Change) Fields() []string {
	var out []string
	for _, f := range c.Changes {
		out = append(out, f.Field)
	}
	return out
}

func (c Change) field(name string) (before, after any) {
	for _, f := range c.Changes {
		if f.Field == name {
			return f.Before, f.After
		}
	}
	return nil, nil
}

// WatchSample returns the first watchRecordCount sample records, decoded.
func WatchSample(t *testing.T) []map[string]any {
	t.Helper()
	return DecodedSample(t, watchRecordCount)
}

// DecodedSample returns the first n records of the embedded sample,
// decoded.
func DecodedSample(t *testing.T, n int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range SampleLines(t, n) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// Watchable reports whether a record is a registered company with both
// printouts, a seat, an address and a current officer: one a client may
// watch, whose every kind of change can be shown.
func Watchable(rec map[string]any) bool {
	attrs, _ := rec["all_attributes"].(map[string]any)
	docs, _ := attrs["additional_data"].(map[string]any)
	officers, _ := rec["officers"].([]any)
	name, _ := rec["name"].(string)
	return rec["current_status"] == "currently registered" && docs["AD"] == true && docs["CD"] == true &&
		attrs["registered_office"] != "" && rec["registered_address"] != nil && len(officers) > 0 && len(currentOfficers(rec)) > 0 &&
		!strings.Contains(name, "i.L.") && !strings.Contains(strings.ToLower(name), "liquidation")
}

// PickWatchCases picks seven watchable real records: six watched (renamed,
// seat and address moved, managing director replaced, put into
// liquidation, struck from the data, unchanged) and one that lends its
// name, seat, address and officer to the edits.
func PickWatchCases(t *testing.T, recs []map[string]any) []WatchCase {
	t.Helper()
	var picked []map[string]any
	seen := map[string]bool{}
	for _, r := range recs {
		number, _ := r["company_number"].(string)
		if len(picked) == 6 && officeOf(r) == officeOf(picked[1]) {
			continue // the lender's seat must differ from the moved one's
		}
		if Watchable(r) && !seen[number] && len(picked) < 8 {
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
	return []WatchCase{
		{Name: "renamed", Record: picked[0], Edit: func(r map[string]any) { r["name"] = lender["name"] },
			Fields: []string{companydocs.FieldName}, Check: WantBeforeAfter(companydocs.FieldName, picked[0]["name"], lender["name"])},
		{Name: "moved", Record: picked[1], Edit: func(r map[string]any) {
			r["all_attributes"].(map[string]any)["registered_office"] = lenderAttrs["registered_office"]
			r["registered_address"] = lender["registered_address"]
		}, Fields: []string{companydocs.FieldSeat, companydocs.FieldAddress},
			Check: WantBeforeAfter(companydocs.FieldSeat, picked[1]["all_attributes"].(map[string]any)["registered_office"], lenderAttrs["registered_office"])},
		{Name: "director replaced", Record: picked[2], Edit: func(r map[string]any) {
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
		}, Fields: []string{companydocs.FieldOfficers}, Check: wantOfficers(picked[2], lenderOfficer)},
		{Name: "in liquidation", Record: picked[3], Edit: func(r map[string]any) { r["name"] = fmt.Sprint(r["name"], " i.L.") },
			Fields: []string{companydocs.FieldName, companydocs.FieldStatus},
			Check:  WantBeforeAfter(companydocs.FieldStatus, companydocs.ProfileStatusRegistered, companydocs.ProfileStatusInLiquidation)},
		{Name: "removed", Record: picked[4], Fields: []string{companydocs.FieldRemoved}, Check: func(t *testing.T, ch Change) {
			if before, after := ch.field(companydocs.FieldRemoved); after != nil || fmt.Sprint(before.(map[string]any)["name"]) != picked[4]["name"] || !ch.WatchEnded {
				t.Errorf("removed: %v -> %v, watch ended %v", before, after, ch.WatchEnded)
			}
		}},
		{Name: "unchanged", Record: picked[5], Edit: func(map[string]any) {}},
		{Name: "court changed", Record: picked[7], Edit: MoveToCourt, Fields: []string{companydocs.FieldRegister}, Check: func(t *testing.T, ch Change) {
			before, after := ch.field(companydocs.FieldRegister)
			if fmt.Sprint(before.(map[string]any)["profile_id"]) != ch.CompanyProfileID || fmt.Sprint(after.(map[string]any)["former_court"]) != fmt.Sprint(before.(map[string]any)["court"]) {
				t.Errorf("court changed: %v -> %v", before, after)
			}
		}},
	}
}

// MoveToCourt moves a record's entry to the München court, as the
// register records a move: "München früher Freiburg HRB 260632".
func MoveToCourt(r map[string]any) {
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

// WantBeforeAfter returns a check that a change shows field going from
// before to after.
func WantBeforeAfter(field string, before, after any) func(t *testing.T, ch Change) {
	return func(t *testing.T, ch Change) {
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
func wantOfficers(rec map[string]any, joined any) func(t *testing.T, ch Change) {
	return func(t *testing.T, ch Change) {
		t.Helper()
		before, after := ch.field(companydocs.FieldOfficers)
		left, _ := before.([]any)
		came, _ := after.([]any)
		if len(left) != len(currentOfficers(rec)) || len(came) != 1 || came[0].(map[string]any)["name"] != joined.(map[string]any)["name"] {
			t.Errorf("officers: left %v, joined %v", before, after)
		}
	}
}

// WriteGeneration writes the records, each case edited by edits (a case
// whose edit is nil left out), as a dump, and builds a generation of it.
func WriteGeneration(t *testing.T, dataDir string, recs []map[string]any, cases []WatchCase, edits map[string]func(map[string]any)) string {
	t.Helper()
	byNumber := map[string]WatchCase{}
	for _, c := range cases {
		byNumber[c.Record["company_number"].(string)] = c
	}
	var out []map[string]any
	for _, r := range recs {
		c, watched := byNumber[r["company_number"].(string)]
		if watched {
			edit, ok := edits[c.Name]
			if ok && edit == nil {
				continue
			}
			r = CloneRecord(r)
			if ok {
				edit(r)
			}
		}
		out = append(out, r)
	}
	return MustBuild(t, dataDir, 0, DumpFile(t, out)).ID
}

// DumpFile writes recs as a dump, a JSON line each, and returns its path.
func DumpFile(t *testing.T, recs []map[string]any) string {
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

// CloneRecord deep-copies a decoded record.
func CloneRecord(r map[string]any) map[string]any {
	raw, _ := json.Marshal(r)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// EditsOf are the edits of the cases, the later generation's.
func EditsOf(cases []WatchCase) map[string]func(map[string]any) {
	out := map[string]func(map[string]any){}
	for _, c := range cases {
		out[c.Name] = c.Edit
	}
	return out
}

// ServedProfileID finds the id of the profile s serves a decoded record
// under, by its register number and name, that want accepts.
func ServedProfileID(t *testing.T, s *TestServer, name string, record map[string]any, want func(*companydocs.Profile) bool) string {
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

// WatchServer starts a server on dir that sends webhooks to loopback.
func WatchServer(t *testing.T, dir string, storeFlags ...string) *TestServer {
	return StartServer(t, dir, append([]string{"--webhook-allow-http", "--webhook-allow-private", "--webhook-timeout", "2s",
		"--webhook-retry-base", "20ms"}, storeFlags...)...)
}
