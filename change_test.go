package companydocs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"companydocs"
	"companydocs/ingest"
	"companydocs/internal/realdata"
	"companydocs/register"
)

// wegnerNumber is a real record of chunk 53: Wegner Consult GmbH, which
// moved on 2019-01-22 from Aschaffenburg HRB 9416 to Friedberg HRB 8959,
// when its managing director Klaus Färber (dismissed) was replaced by
// Jürgen Thilo Hans von Zehmen.
const wegnerNumber = "M1405_HRB8959"

// rawRecord returns the OffeneRegister record with company_number number
// from chunk 53 as decoded JSON, to be edited the way the register edits it.
func rawRecord(t *testing.T, number string) map[string]any {
	t.Helper()
	sc := bufio.NewScanner(realdata.Open(t, realdata.Chunk(t, "ocdata.chunk53.jsonl.bz2", 5727)))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	needle := []byte(`"company_number": "` + number + `"`)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), needle) {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	t.Fatalf("no record %s in chunk 53 (%v)", number, sc.Err())
	return nil
}

// profileOf decodes an edited record the way ingest does.
func profileOf(t *testing.T, rec map[string]any) *companydocs.Profile {
	t.Helper()
	line, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ingest.DecodeOffeneRegisterLine(line)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func officers(rec map[string]any) []any { return rec["officers"].([]any) }

func officer(rec map[string]any, i int) map[string]any { return officers(rec)[i].(map[string]any) }

func attributes(rec map[string]any) map[string]any { return rec["all_attributes"].(map[string]any) }

func TestProfileChangesRealRecord(t *testing.T) {
	wegner := func(t *testing.T) *companydocs.Profile { return profileOf(t, rawRecord(t, wegnerNumber)) }
	edited := func(t *testing.T, edit func(rec map[string]any)) *companydocs.Profile {
		rec := rawRecord(t, wegnerNumber)
		edit(rec)
		return profileOf(t, rec)
	}
	friedberg := companydocs.RegisterValue{
		ProfileID: companydocs.ProfileID(register.Ref{Court: "M1405", Type: register.HRB, Number: "8959"}),
		Court:     "M1405", CourtName: "Friedberg", Type: register.HRB, Number: "8959", Text: "Friedberg HRB 8959",
	}
	tests := []struct {
		name          string
		before, after func(t *testing.T) *companydocs.Profile
		want          []companydocs.FieldChange
	}{
		{
			name:   "the same record again",
			before: wegner, after: wegner,
		},
		{
			name:   "officers reordered and white space added",
			before: wegner,
			after: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					o := officers(rec)
					o[0], o[1] = o[1], o[0]
					rec["name"] = "  Wegner   Consult GmbH "
					attributes(rec)["registered_office"] = "Schotten "
				})
			},
		},
		{
			name:   "renamed",
			before: wegner,
			after: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					rec["name"] = "Wegner Beratung GmbH"
					rec["previous_names"] = []any{map[string]any{"company_name": "Wegner Consult GmbH"}}
				})
			},
			want: []companydocs.FieldChange{
				{Field: "name", Before: "Wegner Consult GmbH", After: "Wegner Beratung GmbH"},
				{Field: "previous_names", Before: []string{}, After: []string{"Wegner Consult GmbH"}},
			},
		},
		{
			// As it happened: the entry of Aschaffenburg HRB 9416 went to
			// Friedberg HRB 8959 when the seat moved to Schotten.
			name: "moved to another court",
			before: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					rec["company_number"] = "D4102V_HRB9416"
					attributes(rec)["registrar"] = "Aschaffenburg"
					attributes(rec)["_registerNummer"] = "9416"
				})
			},
			after: wegner,
			want: []companydocs.FieldChange{
				{Field: "register", Before: companydocs.RegisterValue{
					ProfileID: companydocs.ProfileID(register.Ref{Court: "D4102V", Type: register.HRB, Number: "9416"}),
					Court:     "D4102V", CourtName: "Aschaffenburg", Type: register.HRB, Number: "9416", Text: "Aschaffenburg HRB 9416",
				}, After: friedberg},
			},
		},
		{
			// As it happened: Klaus Färber was dismissed on 2019-01-22 and
			// Jürgen Thilo Hans von Zehmen appointed.
			name: "managing director replaced",
			before: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					färber := officer(rec, 0)
					delete(färber, "end_date")
					delete(färber["other_attributes"].(map[string]any), "dismissed")
					rec["officers"] = officers(rec)[:1]
				})
			},
			after: wegner,
			want: []companydocs.FieldChange{
				{Field: "officers",
					Before: []companydocs.OfficerValue{{Name: "Klaus Färber", Role: "Geschäftsführer"}},
					After:  []companydocs.OfficerValue{{Name: "Jürgen Thilo Hans von Zehmen", Role: "Geschäftsführer"}}},
			},
		},
		{
			name:   "put into liquidation",
			before: wegner,
			after: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					rec["name"] = "Wegner Consult GmbH i.L."
					officer(rec, 1)["position"] = "Liquidator"
				})
			},
			want: []companydocs.FieldChange{
				{Field: "name", Before: "Wegner Consult GmbH", After: "Wegner Consult GmbH i.L."},
				{Field: "status", Before: "registered", After: "in_liquidation"},
				{Field: "officers",
					Before: []companydocs.OfficerValue{{Name: "Jürgen Thilo Hans von Zehmen", Role: "Geschäftsführer"}},
					After:  []companydocs.OfficerValue{{Name: "Jürgen Thilo Hans von Zehmen", Role: "Liquidator"}}},
			},
		},
		{
			name:   "struck off, current printout gone",
			before: wegner,
			after: func(t *testing.T) *companydocs.Profile {
				return edited(t, func(rec map[string]any) {
					rec["current_status"] = "removed"
					attributes(rec)["additional_data"].(map[string]any)["AD"] = false
				})
			},
			want: []companydocs.FieldChange{
				{Field: "status", Before: "registered", After: "removed"},
				{Field: "documents",
					Before: []companydocs.DocumentType{"AD", "CD", "DK", "SI", "UT"},
					After:  []companydocs.DocumentType{"CD", "DK", "SI", "UT"}},
			},
		},
		{
			name:   "LEI linked",
			before: wegner,
			after: func(t *testing.T) *companydocs.Profile {
				p := wegner(t)
				p.LEIs = []companydocs.LEILink{{LEI: "529900T8BM49AURSDO55", Method: "ra_code+register_number", Status: "ISSUED"}}
				return p
			},
			want: []companydocs.FieldChange{
				{Field: "lei", Before: []companydocs.LEIValue{}, After: []companydocs.LEIValue{{LEI: "529900T8BM49AURSDO55", Status: "ISSUED"}}},
			},
		},
		{
			name:   "no longer in the index",
			before: wegner,
			after:  func(*testing.T) *companydocs.Profile { return nil },
			want: []companydocs.FieldChange{
				{Field: "removed", Before: companydocs.RemovedValue{Name: "Wegner Consult GmbH", Register: friedberg, Status: "registered"}},
			},
		},
		{
			name:   "new in the index",
			before: func(*testing.T) *companydocs.Profile { return nil },
			after:  wegner,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := companydocs.ProfileChanges(tt.before(t), tt.after(t))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

// TestFieldChangeJSON locks the JSON a webhook event carries.
func TestFieldChangeJSON(t *testing.T) {
	before := profileOf(t, rawRecord(t, wegnerNumber))
	rec := rawRecord(t, wegnerNumber)
	rec["name"] = "Wegner Consult GmbH in Liquidation"
	officer(rec, 1)["end_date"] = "2019-06-01"
	changes := companydocs.ProfileChanges(before, profileOf(t, rec))
	got, err := json.Marshal(changes)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"field":"name","before":"Wegner Consult GmbH","after":"Wegner Consult GmbH in Liquidation"},` +
		`{"field":"status","before":"registered","after":"in_liquidation"},` +
		`{"field":"officers","before":[{"name":"Jürgen Thilo Hans von Zehmen","role":"Geschäftsführer"}],"after":[]}]`
	if string(got) != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
}

func TestProfileStatusRealNames(t *testing.T) {
	tests := []struct {
		name    string
		removed bool
		want    string
	}{
		{"Guhr Kieswerke GmbH i.L.", false, "in_liquidation"},
		{"EFH Eisenhandelsgesellschaft mbH i. L.", false, "in_liquidation"},
		{"Huber und Joas GmbH Malergeschäft in Liquidation.", false, "in_liquidation"},
		{"Spiegler Bremstechnik Abwicklungsgesellschaft mbH in Insolvenz", false, "in_insolvency"},
		{"Johann Münzer Abwicklungs GmbH i. I.", false, "in_insolvency"},
		{"Kommanditgesellschaft Petrolan Flüssiggas GmbH i.L. & Co. Abwicklungsgesellschaft", false, "registered"},
		{"Liquidations-Posten GmbH", false, "registered"},
		{"Wegner Consult GmbH", true, "removed"},
	}
	for _, tt := range tests {
		p := &companydocs.Profile{Name: tt.name, Removed: tt.removed}
		if got := p.Status(); got != tt.want {
			t.Errorf("Status of %q (removed %v) = %q, want %q", tt.name, tt.removed, got, tt.want)
		}
	}
}
