package index

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
)

func TestBuilderSinkSeesUnflushedPuts(t *testing.T) {
	ps := loadRealProfiles(t)[:50]
	dataDir := t.TempDir()
	b, err := NewBuilder(dataDir, BuilderOptions{BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	for _, p := range ps {
		if err := b.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("get before flush", func(t *testing.T) {
		for _, p := range ps {
			got, err := b.Get(p.ID)
			if err != nil || got == nil || got.Name != p.Name || got.Ref != p.Ref {
				t.Fatalf("Get(%s) = %+v, %v; want %q", p.ID, got, err, p.Name)
			}
		}
		if got, err := b.Get("dp_absent"); got != nil || err != nil {
			t.Fatalf("Get(absent) = %v, %v; want nil, nil", got, err)
		}
	})
	t.Run("by number before flush", func(t *testing.T) {
		p := ps[7]
		got, err := b.ByNumber(p.Ref.Type, p.Ref.Number)
		if err != nil || !containsID(got, p.ID) {
			t.Fatalf("ByNumber(%s %s) = %v, %v; want %s among them", p.Ref.Type, p.Ref.Number, ids(got), err, p.ID)
		}
		for _, q := range got {
			if q.Ref.Type != p.Ref.Type || q.Ref.Number != p.Ref.Number {
				t.Errorf("ByNumber returned %s %s", q.Ref.Type, q.Ref.Number)
			}
		}
	})
	t.Run("replace moves the number entry", func(t *testing.T) {
		p := *ps[3]
		oldNumber := p.Ref.Number
		p.Ref.Number = "99999999"
		p.Name = "Ersetzt " + p.Name
		if err := b.Put(&p); err != nil {
			t.Fatal(err)
		}
		if got, _ := b.ByNumber(p.Ref.Type, oldNumber); containsID(got, p.ID) {
			t.Errorf("old number %s still lists the replaced profile", oldNumber)
		}
		got, err := b.ByNumber(p.Ref.Type, "99999999")
		if err != nil || len(got) != 1 || got[0].Name != p.Name {
			t.Errorf("ByNumber(new) = %v, %v", ids(got), err)
		}
		if b.Count() != len(ps) {
			t.Errorf("Count = %d after a replace, want %d", b.Count(), len(ps))
		}
	})
	t.Run("abort leaves nothing behind", func(t *testing.T) {
		dir := b.Dir()
		if err := b.Abort(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("build dir %s still there after Abort: %v", dir, err)
		}
		if _, err := readCurrent(dataDir); !errors.Is(err, ErrNoGeneration) {
			t.Errorf("CURRENT after Abort: %v", err)
		}
		if err := b.Put(ps[0]); err == nil {
			t.Error("Put after Abort succeeded")
		}
	})
}

// Puts are seen after their batch is flushed, also after the profile
// store's pages were released from memory (after every batch: 75 times
// here).
func TestBuilderSeesFlushedPuts(t *testing.T) {
	ps := loadRealProfiles(t)[:300]
	b, err := NewBuilder(t.TempDir(), BuilderOptions{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	for _, p := range ps {
		if err := b.Put(p); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range ps {
		got, err := b.Get(p.ID)
		if err != nil || got == nil || got.ID != p.ID || got.Name != p.Name || got.Ref != p.Ref {
			t.Fatalf("Get(%s) after flushes = %v, %v", p.ID, got, err)
		}
	}
}

func TestCommitPublishesGeneration(t *testing.T) {
	ps := loadRealProfiles(t)
	g := sharedGeneration(t)
	dataDir, m := sharedDir, g.Meta()
	if m.Profiles != len(ps) || m.Version != IndexVersion || !strings.HasPrefix(m.ID, genPrefix) {
		t.Fatalf("meta = %+v, want %d profiles of version %d", m, len(ps), IndexVersion)
	}
	entries, _ := os.ReadDir(indexDir(dataDir))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), buildingPrefix) || strings.HasPrefix(e.Name(), ".CURRENT") {
			t.Errorf("leftover %s after commit", e.Name())
		}
	}
	if cur, err := readCurrent(dataDir); err != nil || cur != m.ID {
		t.Fatalf("CURRENT = %q, %v; want %s", cur, err, m.ID)
	}
	if g.Count() != len(ps) {
		t.Fatalf("opened %s with %d profiles, want %d", g.ID(), g.Count(), len(ps))
	}
	if docs, err := g.idx.DocCount(); err != nil || int(docs) != len(ps) {
		t.Fatalf("bleve holds %d documents (%v), want %d", docs, err, len(ps))
	}
	for i := 0; i < len(ps); i += 97 {
		got, err := g.Profile(ps[i].ID)
		if err != nil || got == nil || got.Name != ps[i].Name || got.Ref != ps[i].Ref || len(got.Officers) != len(ps[i].Officers) {
			t.Fatalf("Profile(%s) = %+v, %v; want %q", ps[i].ID, got, err, ps[i].Name)
		}
	}
	t.Run("by number lists every court and suffix", func(t *testing.T) {
		key, want := sharedNumber(ps)
		if len(want) < 2 {
			t.Skip("no register number shared by two entries in the sample")
		}
		got, err := g.ByNumber(key.Type, key.Number)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(ids(got), ",") != strings.Join(want, ",") {
			t.Errorf("ByNumber(%s %s) = %v, want %v", key.Type, key.Number, ids(got), want)
		}
	})
}

// sharedNumber finds the register type and number carried by the most
// entries of ps and returns their sorted ids.
func sharedNumber(ps []*companydocs.Profile) (register.Ref, []string) {
	by := map[string][]string{}
	refs := map[string]register.Ref{}
	for _, p := range ps {
		k := numberKey(p.Ref.Type, p.Ref.Number)
		by[k] = append(by[k], p.ID)
		refs[k] = p.Ref
	}
	var best string
	for k, v := range by {
		if len(v) > len(by[best]) || (len(v) == len(by[best]) && k < best) {
			best = k
		}
	}
	sort.Strings(by[best])
	return refs[best], by[best]
}

func TestBuildLock(t *testing.T) {
	dataDir := t.TempDir()
	b1, err := NewBuilder(dataDir, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBuilder(dataDir, BuilderOptions{}); !errors.Is(err, ErrBuildInProgress) {
		t.Fatalf("second builder: %v, want ErrBuildInProgress", err)
	}
	// The first build's directory must survive the refused second builder.
	if _, err := os.Stat(b1.Dir()); err != nil {
		t.Fatalf("running build's directory removed: %v", err)
	}
	if err := b1.Abort(); err != nil {
		t.Fatal(err)
	}
	b2, err := NewBuilder(dataDir, BuilderOptions{})
	if err != nil {
		t.Fatalf("builder after abort: %v", err)
	}
	b2.Abort()
}

func TestKilledBuildLeftoversRemoved(t *testing.T) {
	dataDir := t.TempDir()
	leftover := filepath.Join(indexDir(dataDir), buildingPrefix+"killed")
	if err := os.MkdirAll(filepath.Join(leftover, bleveDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(leftover, profilesName), []byte("half written"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := NewBuilder(dataDir, BuilderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	if _, err := os.Stat(leftover); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("leftover of a killed build still there: %v", err)
	}
}

func TestPruneKeepsNewestAndOpenGenerations(t *testing.T) {
	ps := loadRealProfiles(t)[:200]
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, ps)
	held, err := Open(filepath.Join(indexDir(dataDir), first.ID))
	if err != nil {
		t.Fatal(err)
	}
	second := mustBuild(t, dataDir, ps)
	third := mustBuild(t, dataDir, ps)
	names, _ := generationNames(dataDir)
	if want := []string{first.ID, second.ID, third.ID}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("with the first generation open: %v, want %v", names, want)
	}
	if err := held.Close(); err != nil {
		t.Fatal(err)
	}
	fourth := mustBuild(t, dataDir, ps)
	names, _ = generationNames(dataDir)
	if want := []string{third.ID, fourth.ID}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("generations %v, want %v", names, want)
	}
	if cur, _ := readCurrent(dataDir); cur != fourth.ID {
		t.Fatalf("CURRENT = %s, want %s", cur, fourth.ID)
	}
}

func TestProfileIDsStableAcrossBuilds(t *testing.T) {
	ps := loadRealProfiles(t)[:500]
	a, b := storedIDs(t, ps), storedIDs(t, ps)
	if len(a) != len(ps) || strings.Join(a, ",") != strings.Join(b, ",") {
		t.Fatalf("two builds of the same input stored different ids (%d vs %d)", len(a), len(b))
	}
}

func storedIDs(t *testing.T, ps []*companydocs.Profile) []string {
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	g := mustOpenCurrent(t, dataDir)
	var out []string
	g.store.view(func(t storeTx) error {
		c := t.cursor()
		for k, _ := c.first(); k != nil; k, _ = c.next() {
			out = append(out, string(k))
		}
		return nil
	})
	return out
}

func TestOpenVersions(t *testing.T) {
	dataDir := t.TempDir()
	m := mustBuild(t, dataDir, loadRealProfiles(t)[:20])
	dir := filepath.Join(indexDir(dataDir), m.ID)
	for _, tc := range []struct {
		version int
		opens   bool
	}{{IndexVersion + 1, false}, {oldestReadableVersion - 1, false}, {oldestReadableVersion, true}, {IndexVersion, true}} {
		m.Version = tc.version
		if err := writeMeta(dir, m); err != nil {
			t.Fatal(err)
		}
		g, err := Open(dir)
		if !tc.opens {
			if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "re-run ingest") {
				t.Errorf("Open of version %d: %v, want ErrVersion", tc.version, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open of version %d: %v", tc.version, err)
			continue
		}
		g.Close()
	}
}

func TestLookupsByLEIAndDiscovery(t *testing.T) {
	ps := loadRealProfiles(t)[:200]
	enriched := *ps[10]
	lei := register.LEI("213800QILIUD4ROSUO03") // Deutsche Bank Europe GmbH, GLEIF golden copy sample
	enriched.LEIs = []companydocs.LEILink{{LEI: lei, Method: "test"}}
	disc := &companydocs.Profile{
		ID: companydocs.DiscoveryID("39120012QMNN2NSCP866"), Source: companydocs.SourceDiscovery,
		Name: "Deutsche Factoring Bank GmbH & Co. KG", Seat: "Bremen",
		Ref:  register.Ref{Type: register.HRA, Number: "15633"},
		LEIs: []companydocs.LEILink{{LEI: "39120012QMNN2NSCP866", Method: "discovery"}},
	}
	verified := &companydocs.Profile{
		ID: companydocs.DiscoveryID("5299000J2N45DDNE4Y28"), Source: companydocs.SourceDiscovery, Verified: true,
		Name: "Deutsche WertpapierService Bank AG", Seat: "Frankfurt am Main",
		Ref:  register.Ref{Court: "F1103", Type: register.HRB, Number: "56913"},
		LEIs: []companydocs.LEILink{{LEI: "5299000J2N45DDNE4Y28", Method: "discovery"}},
	}
	input := append(append([]*companydocs.Profile{}, ps...), &enriched, disc, verified)
	dataDir := t.TempDir()
	m := mustBuild(t, dataDir, input)
	if m.Discovery != 2 || m.WithLEI != 3 || m.Profiles != len(ps)+2 {
		t.Errorf("meta counts %+v", m)
	}
	g := mustOpenCurrent(t, dataDir)
	got, err := g.ByLEI(lei)
	if err != nil || len(got) != 1 || got[0].ID != enriched.ID {
		t.Fatalf("ByLEI = %v, %v; want [%s]", ids(got), err, enriched.ID)
	}
	if got, _ := g.ByLEI("529900T8BM49AURSDO55"); len(got) != 0 {
		t.Errorf("ByLEI(unknown) = %v", ids(got))
	}
	base, form := nameParts(disc.Name)
	q := companydocs.TextQuery{NameTerms: base, LegalFormTerms: form.Words}
	hits, err := g.SearchText(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	if containsID(hitProfiles(hits), disc.ID) {
		t.Error("discovery profile returned without Discover")
	}
	q.Discover = true
	hits, _ = g.SearchText(t.Context(), q)
	if len(hits) == 0 || hits[0].Profile.ID != disc.ID {
		t.Errorf("with Discover the discovery profile should rank first: %v", ids(hitProfiles(hits)))
	}
	// a verified discovery profile names a register entry: found without
	// Discover, like a registry-cache profile
	base, form = nameParts(verified.Name)
	hits, err = g.SearchText(t.Context(), companydocs.TextQuery{NameTerms: base, LegalFormTerms: form.Words})
	if err != nil || len(hits) == 0 || hits[0].Profile.ID != verified.ID {
		t.Errorf("verified discovery profile without Discover: %v, %v; want %s first", ids(hitProfiles(hits)), err, verified.ID)
	}
}

func containsID(ps []*companydocs.Profile, id string) bool {
	for _, p := range ps {
		if p.ID == id {
			return true
		}
	}
	return false
}

func ids(ps []*companydocs.Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ID)
	}
	sort.Strings(out)
	return out
}

func hitProfiles(hits []companydocs.Hit) []*companydocs.Profile {
	var out []*companydocs.Profile
	for _, h := range hits {
		out = append(out, h.Profile)
	}
	return out
}
