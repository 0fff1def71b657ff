package index

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"companydocs/messages"

	"github.com/vmihailenco/msgpack/v5"
	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// fullProfile sets every field of companydocs.Profile, nested ones included.
func fullProfile() *companydocs.Profile {
	return &companydocs.Profile{
		ID:     "dc_2d6swowb3idyd452lbnq",
		Source: companydocs.SourceDiscovery,
		Ref:    register.Ref{Court: "D2601", FormerCourt: "D2603", Type: register.HRB, Number: "158855", Suffix: "B"},
		Name:   "Müller & Söhne Bau GmbH & Co. KG", LegalForm: "GmbH & Co. KG",
		Seat: "München", Address: "Leopoldstraße 1, 80802 München", FederalState: "Bayern",
		Officers: []companydocs.Officer{{Name: "Anna Maria Schmidt", FirstName: "Anna Maria", LastName: "Schmidt",
			Position: "Geschäftsführerin", City: "Köln", StartDate: "2015-01-01", EndDate: "2019-12-31", Dismissed: true}},
		PreviousNames: []string{"Müller Bau GmbH"},
		Removed:       true,
		Documents:     []companydocs.DocumentType{companydocs.DocumentAD, companydocs.DocumentCD},
		LEIs:          []companydocs.LEILink{{LEI: "1595V5RSFXE206C87Y17", LegalName: "Müller & Söhne", Method: "gleif_record", Status: "ISSUED"}},
		Verified:      true,
		Discovery: &companydocs.Discovery{ValidationSources: "PARTIALLY_CORROBORATED", RegistrationStatus: "ISSUED",
			EntityStatus: "ACTIVE", RegistrationRaw: "RA000224 HRB 35630", Missing: []companydocs.VerificationGap{
				{Code: companydocs.GapNotFullyCorroborated, Params: companydocs.GapParams{ValidationSources: "PARTIALLY_CORROBORATED"}},
				{Code: companydocs.GapSeveralRegisterEntries, Params: companydocs.GapParams{Court: "München", RegisterNumber: "HRB 1", Entries: 2, Live: 1, Listed: []string{`München HRB 1 "A GmbH"`}}},
				{Code: companydocs.GapRegisterNameDiffers, Params: companydocs.GapParams{GLEIFName: "A", Entry: "München HRB 1", Name: "B", Percent: 40, RACode: "RA000224",
					Reference: "HRB 1", Status: "LAPSED", Text: "t"}},
			}},
		RetrievedAt: time.Date(2026, 5, 1, 16, 16, 26, 0, time.UTC),
	}
}

// TestProfileRoundTrip decodes every encoded profile to what was stored:
// a profile with every field set, and real records.
func TestProfileRoundTrip(t *testing.T) {
	ps := append([]*companydocs.Profile{fullProfile(), {ID: "dp_empty"}}, readChunk(t, "ocdata.chunk13.jsonl.bz2", 3000)...)
	for _, p := range ps {
		v, err := encodeProfile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeProfile(p.ID, v)
		if err != nil {
			t.Fatalf("%s: %v", p.ID, err)
		}
		if !reflect.DeepEqual(got, p) {
			t.Fatalf("%s: round trip changed the profile:\n got %+v\nwant %+v", p.ID, got, p)
		}
	}
}

// TestProfileEncodingSmaller checks what the format is for: values much
// smaller than the JSON of IndexVersion 4, on real records.
func TestProfileEncodingSmaller(t *testing.T) {
	var packed, plain int
	for _, p := range readChunk(t, "ocdata.chunk13.jsonl.bz2", 3000) {
		v, err := encodeProfile(p)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(p)
		packed, plain = packed+len(v), plain+len(j)
	}
	if 2*packed > plain {
		t.Errorf("encoded profiles take %d bytes, JSON %d: expected less than half", packed, plain)
	}
}

// TestDecodeJSONProfile reads a value of an IndexVersion 4 generation.
func TestDecodeJSONProfile(t *testing.T) {
	want := fullProfile()
	v, _ := json.Marshal(want)
	got, err := decodeProfile(want.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// TestDecodeOlderGaps reads the gaps of generations before IndexVersion 7,
// English sentences, as described gaps that say the same: the MessagePack
// of versions 5 and 6 and the JSON of version 4.
func TestDecodeOlderGaps(t *testing.T) {
	sentences := []string{"registration authority RA000737 is not a known German register court", "no register reference"}
	want := fullProfile()
	want.Discovery.Missing = []companydocs.VerificationGap{companydocs.DescribedGap(sentences[0]), companydocs.DescribedGap(sentences[1])}
	// version 6: the profile's fields in order, Missing a []string
	old := *want
	old.ID = ""
	v6 := struct {
		ID, Source                                   string
		Ref                                          register.Ref
		Name, LegalForm, Seat, Address, FederalState string
		Officers                                     []companydocs.Officer
		PreviousNames                                []string
		Removed                                      bool
		Documents                                    []companydocs.DocumentType
		LEIs                                         []companydocs.LEILink
		Verified                                     bool
		Discovery                                    struct {
			ValidationSources, RegistrationStatus, EntityStatus, RegistrationRaw string
			Missing                                                              []string
		}
		RetrievedAt time.Time
	}{old.ID, old.Source, old.Ref, old.Name, old.LegalForm, old.Seat, old.Address, old.FederalState, old.Officers, old.PreviousNames,
		old.Removed, old.Documents, old.LEIs, old.Verified, struct {
			ValidationSources, RegistrationStatus, EntityStatus, RegistrationRaw string
			Missing                                                              []string
		}{
			old.Discovery.ValidationSources, old.Discovery.RegistrationStatus, old.Discovery.EntityStatus, old.Discovery.RegistrationRaw, sentences}, old.RetrievedAt}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(true)
	enc.UseCompactInts(true)
	if err := enc.Encode(&v6); err != nil {
		t.Fatal(err)
	}
	v4, _ := json.Marshal(map[string]any{"discovery": map[string]any{"missing": sentences}})
	for name, value := range map[string][]byte{"version 6": buf.Bytes(), "version 4": v4} {
		got, err := decodeProfile(want.ID, value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got.Discovery.Missing, want.Discovery.Missing) || companydocs.GapsTextIn(messages.English, got.Discovery.Missing) != strings.Join(sentences, "; ") {
			t.Errorf("%s: gaps %#v, want %#v", name, got.Discovery.Missing, want.Discovery.Missing)
		}
		if name == "version 6" && !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v\nwant %+v", name, got, want)
		}
	}
}

// profileLayout is the field order of companydocs.Profile that the stored
// values of IndexVersion 7 and 8 follow (MessagePack arrays carry no field
// names). Versions 5 and 6 differ in Discovery.Missing only, a []string
// (TestDecodeOlderGaps).
const profileLayout = `Profile{ID string, Source string, Ref Ref{Court string, FormerCourt string, Type Type string, Number string, Suffix string}, Name string, LegalForm string, Seat string, Address string, FederalState string, Officers []Officer{Name string, FirstName string, LastName string, Position string, City string, StartDate string, EndDate string, Dismissed bool}, PreviousNames []string, Removed bool, Documents []DocumentType string, LEIs []LEILink{LEI LEI string, LegalName string, Method string, Status string}, Verified bool, Discovery *Discovery{ValidationSources string, RegistrationStatus string, EntityStatus string, RegistrationRaw string, Missing []VerificationGap{Code string, Params GapParams{RACode string, Reference string, ValidationSources string, Status string, Court string, RegisterNumber string, Entries int, Live int, Listed []string, GLEIFName string, Entry string, Name string, Percent int, Text string}}}, RetrievedAt Time}`

// TestProfileLayout fails when companydocs.Profile changes shape: stored
// values would then decode into the wrong fields. Bump IndexVersion and
// update profileLayout together.
func TestProfileLayout(t *testing.T) {
	if IndexVersion != 11 {
		t.Fatalf("IndexVersion is %d: check that profileLayout is the layout of that version, then update this test", IndexVersion)
	}
	if got := layoutOf(reflect.TypeOf(companydocs.Profile{})); got != profileLayout {
		t.Errorf("companydocs.Profile changed shape; stored profiles follow its field order, so bump IndexVersion and set profileLayout to\n%s", got)
	}
}

func layoutOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + layoutOf(t.Elem())
	case reflect.Slice:
		return "[]" + layoutOf(t.Elem())
	case reflect.Struct:
		if t == reflect.TypeOf(time.Time{}) {
			return "Time"
		}
		fields := make([]string, t.NumField())
		for i := range fields {
			f := t.Field(i)
			fields[i] = f.Name + " " + layoutOf(f.Type)
		}
		return fmt.Sprintf("%s{%s}", t.Name(), strings.Join(fields, ", "))
	}
	if t.Name() != t.Kind().String() {
		return t.Name() + " " + t.Kind().String()
	}
	return t.Name()
}

// TestCommitCompactsProfileStore checks that the published profile store
// has full pages: the build inserts in hash order, which leaves about a
// third of every leaf page empty.
func TestCommitCompactsProfileStore(t *testing.T) {
	dataDir := t.TempDir()
	mustBuild(t, dataDir, loadRealProfiles(t)[:3000])
	g := mustOpenCurrent(t, dataDir)
	err := g.store.dbs[0].View(func(tx *bolt.Tx) error {
		st := tx.Bucket(bucketProfiles).Stats()
		if fill := float64(st.LeafInuse) / float64(st.LeafAlloc); fill < 0.9 {
			t.Errorf("profile pages %.0f%% full, want at least 90%% after compaction", 100*fill)
		}
		if st.KeyN != 3000 {
			t.Errorf("%d profiles stored, want 3000", st.KeyN)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompactionCopiesEveryEntry checks that the compaction copies every
// bucket entry unchanged when it takes many write transactions (and
// releases the source's pages after each).
func TestCompactionCopiesEveryEntry(t *testing.T) {
	dataDir := t.TempDir()
	b, err := NewBuilder(dataDir, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	for _, p := range loadRealProfiles(t)[:2000] {
		if err := b.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.tx.Commit(); err != nil {
		t.Fatal(err)
	}
	b.tx = nil
	if err := b.db.Close(); err != nil {
		t.Fatal(err)
	}
	b.db = nil
	before := storeEntries(t, filepath.Join(b.dir, profilesName))
	if err := compactProfiles(b.dir, 4<<10); err != nil {
		t.Fatal(err)
	}
	after := storeEntries(t, filepath.Join(b.dir, profilesName))
	for _, name := range [][]byte{bucketProfiles, bucketNumbers} {
		if len(before[string(name)]) < 2000 {
			t.Fatalf("bucket %s holds %d entries before the compaction, want 2000", name, len(before[string(name)]))
		}
	}
	for name, entries := range before {
		if !reflect.DeepEqual(entries, after[name]) {
			t.Errorf("bucket %s: %d entries before the compaction, %d after, or values differ", name, len(entries), len(after[name]))
		}
	}
}

// storeEntries reads every entry of every bucket of the store at path.
func storeEntries(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o444, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]map[string]string{}
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			entries := map[string]string{}
			out[string(name)] = entries
			return b.ForEach(func(k, v []byte) error {
				entries[string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCommitMergesIntoOneSegment checks that a build of many batches is
// published as one segment: every further segment costs each search a
// dictionary lookup and a typo expansion more.
func TestCommitMergesIntoOneSegment(t *testing.T) {
	dataDir := t.TempDir()
	ps := loadRealProfiles(t)
	m := mustBuildBatches(t, dataDir, ps, 200)
	used, err := snapshotFiles(filepath.Join(indexDir(dataDir), m.ID, bleveDirName))
	if err != nil || len(used) != 1 {
		t.Fatalf("%d profiles in batches of 200 published as %d segments (%v), want 1", len(ps), len(used), err)
	}
}

// TestRemoveObsoleteSegments checks that the segment files a published
// index does not use are deleted (scorch removes merged-away segments in
// the background and may not have done so by Close) and that the index
// still reads the same afterwards.
func TestRemoveObsoleteSegments(t *testing.T) {
	dataDir := t.TempDir()
	m := mustBuild(t, dataDir, loadRealProfiles(t)[:500])
	dir := filepath.Join(indexDir(dataDir), m.ID, bleveDirName)
	used, err := snapshotFiles(dir)
	if err != nil || len(used) == 0 {
		t.Fatalf("segments of the published index: %v, %v", used, err)
	}
	var live string
	for f := range used {
		live = f
	}
	stray := filepath.Join(filepath.Dir(live), "0000000000ff.zap")
	data, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := removeObsoleteSegments(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("unused segment file %s kept: %v", stray, err)
	}
	for f := range used {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("segment in use removed: %v", err)
		}
	}
	g := mustOpenCurrent(t, dataDir)
	if n, err := g.idx.DocCount(); err != nil || int(n) != m.Profiles {
		t.Errorf("after the cleanup the index holds %d documents (%v), want %d", n, err, m.Profiles)
	}
}

// TestReadProfileAgreesWithUnmarshal checks the hand-written reader of a
// profile value against the reflective decoder that wrote it: the same
// profile from every value (nil and empty slices told apart, the strings
// of a value that is the start of a longer slice), and an error, not a
// panic, from every cut-off value.
func TestReadProfileAgreesWithUnmarshal(t *testing.T) {
	empty := fullProfile()
	empty.Officers, empty.PreviousNames, empty.Documents, empty.LEIs = []companydocs.Officer{}, []string{}, []companydocs.DocumentType{}, []companydocs.LEILink{}
	empty.Discovery = &companydocs.Discovery{Missing: []companydocs.VerificationGap{}}
	ps := append([]*companydocs.Profile{fullProfile(), empty, {ID: "dp_empty"}}, readChunk(t, "ocdata.chunk13.jsonl.bz2", 3000)...)
	for _, p := range ps {
		v, err := encodeProfile(p)
		if err != nil {
			t.Fatal(err)
		}
		var want, got companydocs.Profile
		if err := msgpack.Unmarshal(v, &want); err != nil {
			t.Fatal(err)
		}
		want.RetrievedAt = want.RetrievedAt.UTC()
		// the value at the start of a longer slice, as bbolt hands it out
		if err := readProfile(append(v, "trailing bytes"...)[:len(v)], &got); err != nil {
			t.Fatalf("%s: %v", p.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: read\n%+v\nunmarshalled\n%+v", p.ID, got, want)
		}
	}
	v, _ := encodeProfile(fullProfile())
	for n := range v {
		if err := readProfile(v[:n], new(companydocs.Profile)); err == nil {
			t.Errorf("the first %d of %d bytes read as a profile", n, len(v))
		}
	}
}

// FuzzReadProfile feeds the profile reader damaged values: it returns an
// error or a profile, never panics or allocates what the value cannot
// hold, and where Unmarshal reads a profile it reads the same one.
func FuzzReadProfile(f *testing.F) {
	for _, p := range []*companydocs.Profile{fullProfile(), {ID: "dp_empty"}} {
		v, err := encodeProfile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(v)
	}
	// 16 fields: two empty strings, no register reference, five empty
	// strings, then officers claiming 2^32-1 entries
	f.Add([]byte{0xdc, 0x00, 0x10, 0xa0, 0xa0, 0xc0, 0xa0, 0xa0, 0xa0, 0xa0, 0xa0, 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, v []byte) {
		var got companydocs.Profile
		if err := readProfile(v, &got); err != nil {
			return
		}
		var want companydocs.Profile
		if err := msgpack.Unmarshal(v, &want); err != nil {
			return // compared where both read a profile
		}
		want.RetrievedAt = want.RetrievedAt.UTC()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read\n%+v\nunmarshalled\n%+v", got, want)
		}
	})
}
