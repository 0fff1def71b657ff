package index

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// chunk53Profiles reads the whole real chunk 53 (5,727 records).
func chunk53Profiles(t *testing.T) []*companydocs.Profile {
	t.Helper()
	ps := readChunk(t, "ocdata.chunk53.jsonl.bz2", 5727)
	if len(ps) < 5000 {
		t.Fatalf("only %d profiles in chunk 53", len(ps))
	}
	return ps
}

func refOf(t *testing.T, companyNumber string) register.Ref {
	t.Helper()
	ref, err := register.ParseCompanyNumber(companyNumber)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// cloneProfiles copies the profiles deeply enough for the edits below.
func cloneProfiles(ps []*companydocs.Profile) []*companydocs.Profile {
	out := make([]*companydocs.Profile, len(ps))
	for i, p := range ps {
		c := *p
		c.Officers = append([]companydocs.Officer(nil), p.Officers...)
		c.PreviousNames = append([]string(nil), p.PreviousNames...)
		out[i] = &c
	}
	return out
}

// realEdits builds generation A from chunk 53 and generation B from A's
// profiles with the register's kinds of edits, and returns both with the
// expected entries keyed by profile id of A.
func realEdits(t *testing.T) (a, b []*companydocs.Profile, want map[string][]companydocs.FieldChange) {
	a = cloneProfiles(chunk53Profiles(t))
	byID := map[string]*companydocs.Profile{}
	for _, p := range a {
		byID[p.ID] = p
	}
	find := func(ps []*companydocs.Profile, number string) *companydocs.Profile {
		id := companydocs.ProfileID(refOf(t, number))
		for _, p := range ps {
			if p.ID == id {
				return p
			}
		}
		t.Fatalf("no profile %s in chunk 53", number)
		return nil
	}
	// In A, Wegner Consult GmbH is still registered in Aschaffenburg.
	wegner := find(a, "M1405_HRB8959")
	aschaffenburg := register.Ref{Court: "D4102V", Type: register.HRB, Number: "8959"}
	wegner.Ref, wegner.ID = aschaffenburg, companydocs.ProfileID(aschaffenburg)

	b = cloneProfiles(a)
	want = map[string][]companydocs.FieldChange{}
	// Renamed, the old name kept as a previous name.
	p := find(b, "M1405_HRB8956")
	p.Name, p.PreviousNames = "H.A. Service UG (haftungsbeschränkt)", []string{p.Name}
	want[p.ID] = []companydocs.FieldChange{
		{Field: "name", Before: "H.A. Dienstleistungen UG (haftungsbeschränkt)", After: "H.A. Service UG (haftungsbeschränkt)"},
		{Field: "previous_names", Before: []string{}, After: []string{"H.A. Dienstleistungen UG (haftungsbeschränkt)"}},
	}
	// Its managing director replaced.
	p = find(b, "M1405_HRB8957")
	p.Officers = []companydocs.Officer{{Name: "Harun Yilmaz", Position: "Geschäftsführer"}}
	want[p.ID] = []companydocs.FieldChange{{Field: "officers",
		Before: []companydocs.OfficerValue{{Name: "Chris Müller", Role: "Geschäftsführer"}},
		After:  []companydocs.OfficerValue{{Name: "Harun Yilmaz", Role: "Geschäftsführer"}}}}
	// Put into liquidation: the register adds "i.L." to the name.
	p = find(b, "M1405_HRB8958")
	p.Name = "HAGEPA Friedberg GmbH i.L."
	want[p.ID] = []companydocs.FieldChange{
		{Field: "name", Before: "HAGEPA Friedberg GmbH", After: "HAGEPA Friedberg GmbH i.L."},
		{Field: "status", Before: "registered", After: "in_liquidation"},
	}
	// Moved to Friedberg, recorded as "Friedberg früher Aschaffenburg HRB
	// 8959": a new register identity, hence a new profile id.
	p = find(b, "D4102V_HRB8959")
	moved := register.Ref{Court: "M1405", FormerCourt: "D4102V", Type: register.HRB, Number: "8959"}
	p.Ref, p.ID = moved, companydocs.ProfileID(moved)
	want[companydocs.ProfileID(aschaffenburg)] = []companydocs.FieldChange{{Field: "register",
		Before: companydocs.RegisterValue{ProfileID: companydocs.ProfileID(aschaffenburg), Court: "D4102V", CourtName: "Aschaffenburg",
			Type: "HRB", Number: "8959", Text: "Aschaffenburg HRB 8959"},
		After: companydocs.RegisterValue{ProfileID: p.ID, Court: "M1405", CourtName: "Friedberg", FormerCourt: "D4102V",
			Type: "HRB", Number: "8959", Text: "Friedberg früher Aschaffenburg HRB 8959"}}}
	// Struck off the register.
	p = find(b, "M1405_HRB8961")
	p.Removed = true
	want[p.ID] = []companydocs.FieldChange{{Field: "status", Before: "registered", After: "removed"}}
	// Unchanged but for white space the register dump added.
	p = find(b, "M1406_HRA4926")
	p.Name = "  Hansel  Dachdecker- und Schindlergeschäft KG "
	// No longer in the dump at all.
	gone := find(b, "M1405_HRB8960")
	want[gone.ID] = []companydocs.FieldChange{{Field: "removed", Before: companydocs.RemovedValue{
		Name: "RES Rhine Expert Services GmbH", Status: "registered",
		Register: companydocs.RegisterValue{ProfileID: gone.ID, Court: "M1405", CourtName: "Friedberg", Type: "HRB", Number: "8960", Text: "Friedberg HRB 8960"}}}}
	var kept []*companydocs.Profile
	for _, q := range b {
		if q != gone {
			kept = append(kept, q)
		}
	}
	return a, kept, want
}

// recordedChanges reads every entry of the current generation's change
// record as JSON.
func recordedChanges(t *testing.T, dataDir string) (*ChangeSet, map[string]string) {
	t.Helper()
	g := mustOpenCurrent(t, dataDir)
	cs, err := g.Changes()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = cs.Each(func(id string, changes []companydocs.FieldChange) error {
		b, err := json.Marshal(changes)
		got[id] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return cs, got
}

func TestChangeRecordOfRealEdits(t *testing.T) {
	a, b, want := realEdits(t)
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, a)
	if first.Changes == nil || first.Changes.Previous != "" || first.Changes.Note != NoteNoPrevious || first.Changes.Profiles != 0 {
		t.Errorf("first generation's change summary %+v, want none with note %q", first.Changes, NoteNoPrevious)
	}
	cs, got := recordedChanges(t, dataDir)
	if cs.Previous() != "" || len(got) != 0 {
		t.Errorf("first generation: previous %q, %d entries; want none", cs.Previous(), len(got))
	}

	second := mustBuild(t, dataDir, b)
	cs, got = recordedChanges(t, dataDir)
	if cs.Previous() != first.ID {
		t.Errorf("compared with %q, want %s", cs.Previous(), first.ID)
	}
	wantJSON := map[string]string{}
	for id, changes := range want {
		b, err := json.Marshal(changes)
		if err != nil {
			t.Fatal(err)
		}
		wantJSON[id] = string(b)
	}
	if !reflect.DeepEqual(got, wantJSON) {
		for id := range wantJSON {
			if got[id] != wantJSON[id] {
				t.Errorf("entry of %s:\n got %s\nwant %s", id, got[id], wantJSON[id])
			}
		}
		for id := range got {
			if _, ok := wantJSON[id]; !ok {
				t.Errorf("unexpected entry of %s: %s", id, got[id])
			}
		}
	}
	wantSum := ChangeSummary{Previous: first.ID, Profiles: 6, Added: 1,
		ByField: map[string]int{"name": 2, "previous_names": 1, "officers": 1, "status": 2, "register": 1, "removed": 1}}
	if !reflect.DeepEqual(*second.Changes, wantSum) || !reflect.DeepEqual(cs.Summary(), wantSum) {
		t.Errorf("summary in meta.json %+v, in the record %+v; want %+v", *second.Changes, cs.Summary(), wantSum)
	}
	for id := range want {
		if !cs.Changed(id) {
			t.Errorf("Changed(%s) = false", id)
		}
	}
	unchanged := companydocs.ProfileID(refOf(t, "M1406_HRA4926"))
	if changes, ok, err := cs.Lookup(unchanged); ok || err != nil || cs.Changed(unchanged) {
		t.Errorf("Lookup of the unchanged profile: %v, %v, %v", changes, ok, err)
	}
}

func TestChangeRecordOfTheSameRecordsIsEmpty(t *testing.T) {
	ps := chunk53Profiles(t)
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, ps)
	second := mustBuild(t, dataDir, ps)
	cs, got := recordedChanges(t, dataDir)
	if cs.Previous() != first.ID || len(got) != 0 {
		t.Errorf("same records again: compared with %q (want %s), %d entries (want 0): %v", cs.Previous(), first.ID, len(got), got)
	}
	if s := second.Changes; s == nil || s.Profiles != 0 || s.Added != 0 || len(s.ByField) != 0 {
		t.Errorf("summary %+v, want nothing changed", s)
	}
}

// TestDamagedChangeRecord flips a byte of the change record: the
// generation is still opened and served, and Changes reports the damage.
func TestDamagedChangeRecord(t *testing.T) {
	a, b, _ := realEdits(t)
	dataDir := t.TempDir()
	mustBuild(t, dataDir, a)
	second := mustBuild(t, dataDir, b)
	path := filepath.Join(indexDir(dataDir), second.ID, changesName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatalf("a damaged change record kept the generation from serving: %v", err)
	}
	defer live.Close()
	if id, _, _ := live.Current(); id != second.ID {
		t.Fatalf("serving %s, want %s", id, second.ID)
	}
	id := companydocs.ProfileID(refOf(t, "M1405_HRB8958"))
	if p, err := live.Profile(id); err != nil || p == nil || p.Name != "HAGEPA Friedberg GmbH i.L." {
		t.Fatalf("profile lookup on the generation with a damaged change record: %v, %v", p, err)
	}
	g, release := live.Acquire()
	defer release()
	cs, err := g.Changes()
	if !errors.Is(err, ErrChangesDamaged) || cs != nil {
		t.Fatalf("Changes of a damaged record: %v, %v; want ErrChangesDamaged", cs, err)
	}
	t.Logf("reported: %v", err)
	if _, err2 := g.Changes(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Changes: %v", err2)
	}
}

func TestNoChangeRecord(t *testing.T) {
	ps := chunk53Profiles(t)[:300]
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	bld, err := NewBuilder(dataDir, BuilderOptions{NoChanges: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := bld.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	m, err := bld.Commit(Meta{Sources: []string{"test"}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Changes != nil {
		t.Errorf("meta.json summarises changes %+v without a record", m.Changes)
	}
	g := mustOpenCurrent(t, dataDir)
	if _, err := os.Stat(filepath.Join(g.Dir(), changesName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("change record written with NoChanges: %v", err)
	}
	if cs, err := g.Changes(); !errors.Is(err, ErrNoChanges) || cs != nil {
		t.Errorf("Changes without a record: %v, %v; want ErrNoChanges", cs, err)
	}
}

// TestChangeRecordPreviousUnreadable damages the previous generation's
// profile store: the new generation is still published, and its record
// says why it holds nothing.
func TestChangeRecordPreviousUnreadable(t *testing.T) {
	ps := chunk53Profiles(t)[:300]
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, ps)
	path := filepath.Join(indexDir(dataDir), first.ID, profilesName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	second := mustBuild(t, dataDir, ps)
	cs, got := recordedChanges(t, dataDir)
	if cs.Previous() != "" || len(got) != 0 || second.Changes.Note == "" {
		t.Errorf("previous %q, %d entries, note %q; want none and a note", cs.Previous(), len(got), second.Changes.Note)
	}
	t.Logf("note: %s", second.Changes.Note)
}

// BenchmarkCompareStores measures the comparison of two profile stores of
// the real chunk 53 (5,727 records): "same" holds the same profiles (equal
// bytes, nothing decoded), "refreshed" the same profiles retrieved a day
// later (every profile decoded and compared, none changed), as a dump of
// the next day would be.
func BenchmarkCompareStores(b *testing.B) {
	ps := readChunk(b, "ocdata.chunk53.jsonl.bz2", 5727)
	refreshed := make([]*companydocs.Profile, len(ps))
	for i, p := range ps {
		c := *p
		c.RetrievedAt = c.RetrievedAt.Add(24 * time.Hour)
		refreshed[i] = &c
	}
	for _, bc := range []struct {
		name string
		next []*companydocs.Profile
	}{{"same", ps}, {"refreshed", refreshed}} {
		b.Run(bc.name, func(b *testing.B) {
			dataDir := b.TempDir()
			first := mustBuild(b, dataDir, ps)
			second := mustBuild(b, dataDir, bc.next)
			prev, closePrev, err := openPreviousStore(filepath.Join(indexDir(dataDir), first.ID))
			if err != nil {
				b.Fatal(err)
			}
			defer closePrev()
			next, err := bolt.Open(filepath.Join(indexDir(dataDir), second.ID, profilesName), 0o444, &bolt.Options{ReadOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			defer next.Close()
			out, err := bolt.Open(filepath.Join(b.TempDir(), changesName), 0o644, &bolt.Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer out.Close()
			if err := out.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucketChanges); return err }); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				w := &changeWriter{out: out, sum: ChangeSummary{ByField: map[string]int{}}}
				if err := compareStores(prev, next, nil, w); err != nil {
					b.Fatal(err)
				}
				if w.sum.Profiles != 0 {
					b.Fatalf("%d profiles changed", w.sum.Profiles)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ps))/1000, "µs/profile")
		})
	}
}

// BenchmarkChangeRecordOfGenerations compares the two newest generations of
// the data directory $COMPANYDOCS_CHANGES_DATA_DIR (made by scripts/bench.sh
// changes, say) as the commit of the newer one did, and reports the time
// per profile of the newer one.
func BenchmarkChangeRecordOfGenerations(b *testing.B) {
	dataDir := os.Getenv("COMPANYDOCS_CHANGES_DATA_DIR")
	if dataDir == "" {
		msg := "set COMPANYDOCS_CHANGES_DATA_DIR to a data directory with two generations"
		if os.Getenv("CI") == "true" {
			b.Fatal(msg)
		}
		b.Skip(msg)
	}
	names, err := generationNames(dataDir)
	if err != nil || len(names) < 2 {
		b.Fatalf("need two generations in %s: %v %v", dataDir, names, err)
	}
	prev, next := names[len(names)-2], filepath.Join(indexDir(dataDir), names[len(names)-1])
	meta, err := ReadMeta(next)
	if err != nil {
		b.Fatal(err)
	}
	var sum ChangeSummary
	for range b.N {
		dir := b.TempDir()
		if err := os.Link(filepath.Join(next, profilesName), filepath.Join(dir, profilesName)); err != nil {
			b.Fatal(err)
		}
		if sum, err = writeChanges(dir, dataDir, prev, "", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*meta.Profiles)/1000, "µs/profile")
	b.Logf("%s against %s: %d entries %v, %d new", names[len(names)-1], prev, sum.Profiles, sum.ByField, sum.Added)
}
