package ingest

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs"
	"companydocs/register"

	"companydocs/internal/realdata"
)

// sampleFile is the committed real sample (see testdata/make_sample.py):
// 3,564 OffeneRegister lines with 3,564 distinct company numbers.
const sampleFile = "testdata/sample.jsonl.bz2"

func fixturesFile(t testing.TB) string {
	return realdata.Path(t, "offeneregister", "fixtures_665.jsonl")
}

func gleifAPIFile(t testing.TB) string {
	return realdata.Path(t, "gleif", "lei_records_api.jsonl")
}

func gleifCSVFile(t testing.TB) string {
	return realdata.Path(t, "gleif", "lei_records_de_goldencopy.csv")
}

func inputs(paths ...string) []Input {
	in := make([]Input, len(paths))
	for i, p := range paths {
		in[i] = Input{Path: p}
	}
	return in
}

var shared struct {
	once sync.Once
	sink *memSink
	sum  *Summary
	err  error
}

// fullRun ingests the sample, the fixtures and both GLEIF files once for
// every test that only looks at the result (profiles come out of the sink
// as copies, so tests cannot disturb each other).
func fullRun(t testing.TB) (*memSink, *Summary) {
	t.Helper()
	paths := inputs(sampleFile, fixturesFile(t), gleifAPIFile(t), gleifCSVFile(t))
	shared.once.Do(func() {
		shared.sink = newMemSink()
		shared.sum, shared.err = Run(context.Background(), paths, shared.sink, Options{})
	})
	if shared.err != nil || !shared.sum.Balanced() {
		t.Fatalf("Run: %v\n%s", shared.err, shared.sum)
	}
	return shared.sink, shared.sum
}

func mustRun(t testing.TB, sink Sink, opts Options, paths ...string) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), inputs(paths...), sink, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !sum.Balanced() {
		t.Fatalf("summary does not account for every record:\n%s", sum)
	}
	return sum
}

func profileByNumber(t testing.TB, companyNumber string) string {
	t.Helper()
	ref, err := register.ParseCompanyNumber(companyNumber)
	if err != nil {
		t.Fatalf("ParseCompanyNumber(%q): %v", companyNumber, err)
	}
	return companydocs.ProfileID(ref)
}

func TestRunRegistryCountsEveryLine(t *testing.T) {
	// fixtures_665.jsonl repeats 24 records whose chunk copies are in the
	// sample: 3,564 + 665 lines, 4,205 distinct company numbers (counted
	// independently over the raw lines).
	sink, sum := fullRun(t)
	want := RegistryCounts{Read: 4229, Indexed: 4205, Merged: 24, Skipped: 0}
	if sum.Registry != want {
		t.Errorf("registry counts = %+v, want %+v", sum.Registry, want)
	}
	if n := sum.Reason(KindMerged, ReasonDuplicateEntry); n != 24 {
		t.Errorf("merged duplicate register entries = %d, want 24", n)
	}
	registry := 0
	for _, id := range sink.ids() {
		if sink.mustGet(t, id).Source == companydocs.SourceRegistryCache {
			registry++
		}
	}
	if registry != 4205 {
		t.Errorf("sink holds %d registry profiles, want 4205", registry)
	}
	// The first duplicate is the fixtures copy of chunk 1's B1204_HRB290027
	// (fixtures line 101); the summary names that place.
	rs := sum.reasonIndex[KindMerged+"\x00"+ReasonDuplicateEntry]
	if len(rs.Examples) != 5 || !strings.HasSuffix(rs.Examples[0].File, "fixtures_665.jsonl") || rs.Examples[0].Line != 101 {
		t.Errorf("first merge examples = %+v, want 5 starting at fixtures_665.jsonl:101", rs.Examples)
	}
	if len(sum.Files) != 4 || sum.Files[0].Compression != CompressionBzip2 || sum.Files[0].Format != FormatOffeneRegister || sum.Files[0].Records != 3564 {
		t.Errorf("file stats = %+v", sum.Files)
	}
	out := sum.String()
	for _, s := range []string{"read 4229", "indexed 4205", "merged 24", "duplicate register entry", "fixtures_665.jsonl:101"} {
		if !strings.Contains(out, s) {
			t.Errorf("summary output lacks %q:\n%s", s, out)
		}
	}
}

func TestOffeneRegisterRecordsHandChecked(t *testing.T) {
	sink, _ := fullRun(t)
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	all := []companydocs.DocumentType{"AD", "CD", "HD", "DK", "SI", "UT", "VÖ"}

	t.Run("complete live GmbH with officer and previous name", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "B1204_HRB260632"))
		wantRef := register.Ref{Court: "B1204", Type: register.HRB, Number: "260632"}
		if p.Ref != wantRef || p.Name != "Nutzfahrzeugtechnik Dufner GmbH" || p.LegalForm != "GmbH" ||
			p.Seat != "Teningen" || p.Address != "Siemensstraße 10, 79331 Teningen" || p.FederalState != "Baden-Württemberg" ||
			p.Removed || !p.Verified || p.Source != companydocs.SourceRegistryCache || !p.RetrievedAt.Equal(at("2018-07-28T03:16:34Z")) {
			t.Errorf("profile = %+v", p)
		}
		if !reflect.DeepEqual(p.Documents, all) || !reflect.DeepEqual(p.PreviousNames, []string{"DITTON GmbH"}) {
			t.Errorf("documents %v, previous names %v", p.Documents, p.PreviousNames)
		}
		wantOfficer := companydocs.Officer{Name: "Karl Josef Dufner", FirstName: "Karl Josef", LastName: "Dufner", Position: "Geschäftsführer", City: "Biederbach", StartDate: "2015-12-22"}
		if len(p.Officers) != 1 || p.Officers[0] != wantOfficer {
			t.Errorf("officers = %+v", p.Officers)
		}
		if !p.OrderingEligible() {
			t.Error("a verified live entry holding AD and CD must be eligible for ordering")
		}
	})
	t.Run("removed entry without address or orderable documents", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "B1204_HRB260641"))
		if p.Name != "GeVo Zahntechnik GmbH" || !p.Removed || p.Address != "" || p.Seat != "Emmendingen" || p.OrderingEligible() {
			t.Errorf("profile = %+v", p)
		}
		if want := []companydocs.DocumentType{"HD", "DK", "UT", "VÖ"}; !reflect.DeepEqual(p.Documents, want) {
			t.Errorf("documents = %v, want %v", p.Documents, want)
		}
	})
	t.Run("dismissed officer", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "B1204_HRB260642"))
		want := companydocs.Officer{Name: "Gisela Lucia geborene Geng Fenn", FirstName: "Gisela Lucia geborene Geng", LastName: "Fenn", Position: "Geschäftsführer", City: "Freiburg im Breisgau", EndDate: "2015-12-07", Dismissed: true}
		if len(p.Officers) != 4 || p.Officers[0] != want || p.Officers[3].Name != "Matthias Egler" || p.Officers[3].Dismissed {
			t.Errorf("officers = %+v", p.Officers)
		}
	})
	t.Run("Kiel HRB 53 with three suffixes is three entries", func(t *testing.T) {
		ids := map[string]bool{}
		for _, suffix := range []string{"EC", "KI", "RD"} {
			p := sink.mustGet(t, profileByNumber(t, "X1517R_HRB53"+suffix))
			if p.Ref.Suffix != suffix || p.Ref.Number != "53" || !p.Verified {
				t.Errorf("%s: ref %+v verified %v", suffix, p.Ref, p.Verified)
			}
			ids[p.ID] = true
		}
		if len(ids) != 3 {
			t.Errorf("ids = %v, want 3 distinct", ids)
		}
	})
	t.Run("former court", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "W1215_W1104_HRB573"))
		if p.Ref.Court != "W1215" || p.Ref.FormerCourt != "W1104" || p.Name != "Ludwig Fischer GmbH Tief- und Straßenbau" || !p.Removed {
			t.Errorf("profile = %+v", p)
		}
		if live := sink.mustGet(t, profileByNumber(t, "W1215_HRB573")); live.ID == p.ID || live.Removed {
			t.Errorf("Stendal HRB 573 (live) = %+v", live)
		}
	})
	t.Run("name with a line break and doubled spaces is collapsed", func(t *testing.T) {
		if p := sink.mustGet(t, profileByNumber(t, "F1103R_HRB54")); p.Name != "Allgemeine Bankgesellschaft Aktiengesellschhaft" {
			t.Errorf("name = %q", p.Name)
		}
		if p := sink.mustGet(t, profileByNumber(t, "F1103R_HRB57")); p.Name != "B M P Berlin Musik Produktion Gesellschaft mit beschränkter Haftung" || p.LegalForm != "GmbH" {
			t.Errorf("name = %q, legal form %q", p.Name, p.LegalForm)
		}
	})
	t.Run("UG from the fixtures", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "K1101R_HRB150148"))
		if p.Name != "olly UG (haftungsbeschränkt)" || p.Seat != "Hamburg" || p.Address != "Waidmannstraße 1, 22769 Hamburg" || p.Ref.Court != "K1101R" {
			t.Errorf("profile = %+v", p)
		}
		if !strings.HasPrefix(p.LegalForm, "UG") {
			t.Errorf("legal form = %q, want UG (haftungsbeschränkt)", p.LegalForm)
		}
	})
	t.Run("abbreviated street keeps its full stop", func(t *testing.T) {
		if p := sink.mustGet(t, profileByNumber(t, "R1101_HRB81092")); p.Address != "Oststr." || p.Name != "BLUECHILLED Verwaltungs GmbH" {
			t.Errorf("profile = %+v", p)
		}
	})
	t.Run("court that is also its own former court", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "H1101_H1101_HRB18423"))
		if p.Name != "Mittelständische Beteiligungsgesellschaft Bremen mbH" || p.FederalState != "Bremen" || p.Ref.Court != "H1101" {
			t.Errorf("profile = %+v", p)
		}
	})
	t.Run("duplicate keeps one profile", func(t *testing.T) {
		p := sink.mustGet(t, profileByNumber(t, "B1204_HRB290027"))
		if p.Ref.Number != "290027" || !p.RetrievedAt.Equal(at("2018-07-28T04:17:51Z")) {
			t.Errorf("profile = %+v", p)
		}
	})
}

func TestMergeDuplicateKeepsLaterRetrieval(t *testing.T) {
	older := &companydocs.Profile{ID: "x", Name: "Old", RetrievedAt: time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC),
		LEIs: []companydocs.LEILink{{LEI: "0SK1ILSPWNVBNQWU0W18", Method: LinkMethod}}}
	newer := &companydocs.Profile{ID: "x", Name: "New", RetrievedAt: time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC), Documents: []companydocs.DocumentType{"HD"}}
	for name, got := range map[string]*companydocs.Profile{
		"newer read last":  mergeDuplicate(cloneProfile(older), cloneProfile(newer)),
		"newer read first": mergeDuplicate(cloneProfile(newer), cloneProfile(older)),
	} {
		if got.Name != "New" || len(got.LEIs) != 1 || !reflect.DeepEqual(got.Documents, newer.Documents) {
			t.Errorf("%s: merged = %+v", name, got)
		}
	}
	tie := cloneProfile(newer)
	tie.Name = "Read later"
	if got := mergeDuplicate(cloneProfile(newer), tie); got.Name != "Read later" {
		t.Errorf("on a tie the later line must win, got %q", got.Name)
	}
}

func cloneProfile(p *companydocs.Profile) *companydocs.Profile {
	c := *p
	return &c
}

func TestCompanyNumberFallbackToAttributes(t *testing.T) {
	// Real Kiel line (X1517R_HRB53KI) with its company_number removed: the
	// identity is rebuilt from _registerArt, _registerNummer, the suffix and
	// the registrar's name.
	line := `{"all_attributes": {"_registerArt": "HRB", "_registerNummer": "53", "_registerNummerSuffix": "KI", "additional_data": {"AD": false, "CD": false, "DK": false, "HD": true, "SI": false, "UT": false, "VÖ": false}, "federal_state": "Schleswig-Holstein", "native_company_number": "Kiel HRB 53 KI", "registered_office": "Kiel", "registrar": "Kiel"}, "company_number": "", "current_status": "removed", "jurisdiction_code": "de", "name": "x", "retrieved_at": "2018-06-19T12:00:27Z"}`
	p, err := DecodeOffeneRegisterLine([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := register.ParseCompanyNumber("X1517R_HRB53KI")
	if p.Ref != ref || p.ID != companydocs.ProfileID(ref) || !p.Verified {
		t.Errorf("ref %+v (id %s), want %+v", p.Ref, p.ID, ref)
	}
	for _, tt := range []struct{ line, reason string }{
		{strings.Replace(line, `"registrar": "Kiel"`, `"registrar": "Atlantis"`, 1), ReasonUnknownCourt},
		{strings.Replace(line, `"_registerArt": "HRB"`, `"_registerArt": ""`, 1), ReasonNoRegisterRef},
		{strings.Replace(strings.Replace(line, `"company_number": ""`, `"company_number": "X1517R_HRB53KI"`, 1), `"name": "x"`, `"name": " \n "`, 1), ReasonNoName},
		{line[:200], ReasonInvalidJSON},
	} {
		if _, err := DecodeOffeneRegisterLine([]byte(tt.line)); err == nil || !strings.HasPrefix(err.Error(), tt.reason) {
			t.Errorf("err = %v, want reason %q", err, tt.reason)
		}
	}
}
