package bench

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"companydocs"
	"companydocs/register"

	"companydocs/internal/realdata"
)

type setKey struct {
	seed    uint64
	workers int
}

var (
	setsMu sync.Mutex
	sets   = map[setKey]*QuerySet{}
)

// buildSmallSet builds (once per seed and worker count) a query set from
// the small real chunk and the fixture records.
func buildSmallSet(tb testing.TB, seed uint64, workers int) *QuerySet {
	tb.Helper()
	setsMu.Lock()
	defer setsMu.Unlock()
	if set := sets[setKey{seed, workers}]; set != nil {
		return set
	}
	set, err := BuildQuerySet([]string{smallChunk(tb), realdata.Path(tb, "offeneregister", "fixtures_665.jsonl")}, QueryOptions{
		Seed: seed, PerKind: 25, Workers: workers, Orderable: 50,
		GLEIF: []string{realdata.Path(tb, "gleif", "lei_records_de_goldencopy.csv"), realdata.Path(tb, "gleif", "lei_records_api.jsonl")},
	})
	if err != nil {
		tb.Fatal(err)
	}
	sets[setKey{seed, workers}] = set
	return set
}

func TestQuerySetIsDeterministic(t *testing.T) {
	a, b := buildSmallSet(t, 5, 1), buildSmallSet(t, 5, 3)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same corpus and seed gave different query sets with 1 and 3 workers")
	}
	if c := buildSmallSet(t, 6, 2); reflect.DeepEqual(a.Queries, c.Queries) {
		t.Fatal("seeds 5 and 6 gave the same query set")
	}
}

func TestQuerySetLabelsPointAtTheRightRecords(t *testing.T) {
	set := buildSmallSet(t, 5, 1)
	byID := map[string]*Record{}
	for _, r := range realRecords(t) {
		ref, err := register.ParseCompanyNumber(r.CompanyNumber)
		if err == nil {
			byID[companydocs.ProfileID(ref)] = r
		}
	}
	kinds := map[string]int{}
	for _, q := range set.Queries {
		kinds[q.Kind]++
		if q.Want == "" || q.Kind == KindLEIDiscovery {
			continue
		}
		r := byID[q.Want]
		if r == nil {
			continue // a fixture record
		}
		checkLabel(t, q, r)
	}
	for _, k := range []string{KindRegister, KindNameExact, KindNameTypo, KindNameForm, KindNameCity, KindOfficer, KindShort, KindDirector, KindAddress, KindNoise, KindPasteRegister, KindPasteText} {
		if kinds[k] != 25 {
			t.Errorf("%d queries of kind %s, want 25", kinds[k], k)
		}
	}
	if kinds[KindFormerName] == 0 || kinds[KindLEIPrefix] != kinds[KindLEI] {
		t.Errorf("%d former-name queries, %d LEI queries with a label for %d without", kinds[KindFormerName], kinds[KindLEIPrefix], kinds[KindLEI])
	}
	if kinds[KindLEI]+kinds[KindLEIDiscovery] == 0 {
		t.Error("no LEI query: the GLEIF files should give some")
	}
	if len(set.Orderable) != 50 {
		t.Errorf("%d orderable profiles, want 50", len(set.Orderable))
	}
}

// checkLabel checks that a query was made from the record it names.
func checkLabel(t *testing.T, q Query, r *Record) {
	t.Helper()
	if q.WantName != r.Name {
		t.Errorf("%s %q: want_name %q, record name %q", q.Kind, q.Query, q.WantName, r.Name)
	}
	switch q.Kind {
	case KindNameExact:
		if q.Query != r.Name {
			t.Errorf("name_exact %q is not the name %q", q.Query, r.Name)
		}
	case KindNameTypo:
		if q.Query == r.Name || len(q.Query) < len(r.Name)-2 || len(q.Query) > len(r.Name)+2 {
			t.Errorf("name_typo %q is not one edit away from %q", q.Query, r.Name)
		}
	case KindNameCity:
		if !strings.HasSuffix(q.Query, " "+r.AllAttributes.RegisteredOffice) {
			t.Errorf("name_city %q does not end in the seat %q", q.Query, r.AllAttributes.RegisteredOffice)
		}
	case KindRegister:
		got, err := register.ParseRef(q.Query)
		want, _ := register.ParseCompanyNumber(r.CompanyNumber)
		if err != nil || registerKey(got.Court, got.Type, got.Number) != registerKey(want.Court, want.Type, want.Number) {
			t.Errorf("register query %q parses to %+v (%v), record is %s", q.Query, got, err, r.CompanyNumber)
		}
	case KindFormerName:
		if !slices.ContainsFunc(r.PreviousNames, func(p PreviousName) bool { return p.CompanyName == q.Query }) {
			t.Errorf("former_name %q is none of %+v", q.Query, r.PreviousNames)
		}
	case KindAddress:
		if !strings.HasPrefix(r.RegisteredAddress, q.Query) {
			t.Errorf("address %q is not the address %q", q.Query, r.RegisteredAddress)
		}
	case KindPasteRegister, KindPasteText:
		ref, _ := register.ParseCompanyNumber(r.CompanyNumber)
		lines := strings.Split(q.Query, "\n")
		if !slices.Contains(lines, r.Name) || len(lines) < 4 {
			t.Errorf("%s %q has no line with the name %q, or under four lines", q.Kind, q.Query, r.Name)
		}
		if got := strings.Contains(q.Query, ref.NumberKey()); got != (q.Kind == KindPasteRegister) {
			t.Errorf("%s %q: register number %q in it: %v", q.Kind, q.Query, ref.NumberKey(), got)
		}
	case KindDirector:
		if !slices.ContainsFunc(r.Officers, func(o Officer) bool {
			return o.OtherAttributes.Firstname+" "+o.OtherAttributes.Lastname == q.Query
		}) {
			t.Errorf("director %q is no officer of %q", q.Query, r.Name)
		}
	}
}
