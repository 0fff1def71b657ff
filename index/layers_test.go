package index

import (
	"fmt"
	"hash/maphash"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// TestLayeredProfilesAsFullBuild builds A of chunk 53, B of its real
// edits on A and C of further edits on B (a profile renamed again, one
// of B's changed ones removed, the one B removed back, an LEI given in B
// and taken in C, one given in C), incrementally in one data directory and
// in full in another: B's profile store is a layer on A's profiles.db, C's
// a second layer on B's files, all shared, and they hold exactly the
// profiles of the full builds:
// every id, every field, every lookup by register number and by LEI,
// the counts, the store a following node opens, and C's change record,
// which compares with layered B.
func TestLayeredProfilesAsFullBuild(t *testing.T) {
	defer func(n int) { maxProfileLayers = n }(maxProfileLayers)
	maxProfileLayers = 10 // a stack of two layers, not one merged
	a, b, _ := realEdits(t)
	lei := register.LEI("529900T8BM49AURSDO55")
	b[7].LEIs = []companydocs.LEILink{{LEI: lei, Method: "test"}}
	// an LEI of A that B takes away: the base lists it, no layer does
	takeLEI(t, a, b, "5299000J2N45DDNE4Y28")
	// a register number of A that B changes: the base lists it, no layer does
	takeNumber(t, a, b)
	c := layerEdits(t, a, b, lei)
	incDir, fullDir := t.TempDir(), t.TempDir()
	prev := mustBuild(t, incDir, a)
	mustBuild(t, fullDir, a)
	for i, ps := range [][]*companydocs.Profile{b, c} {
		inc := mustBuildWith(t, incDir, ps, incrementalOpts)
		full := mustBuildWith(t, fullDir, ps, BuilderOptions{BatchSize: 700})
		var want []string
		for n := range i + 1 {
			want = append(want, layerName(n+1))
		}
		if !slices.Equal(inc.ProfileLayers, want) || full.ProfileLayers != nil {
			t.Fatalf("profile layers %q and %q, want %q on the incremental build, none on the full one", inc.ProfileLayers, full.ProfileLayers, want)
		}
		dir := filepath.Join(indexDir(incDir), inc.ID)
		for _, f := range profileFiles(prev) {
			sameFile(t, filepath.Join(indexDir(incDir), prev.ID, f), filepath.Join(dir, f))
		}
		prev = inc
		if layer, base := fileSize(t, filepath.Join(dir, want[i])), fileSize(t, filepath.Join(dir, profilesName)); layer*20 > base {
			t.Errorf("layer %s holds %d bytes, more than a twentieth of the base's %d", want[i], layer, base)
		}
		g, w := mustOpenCurrent(t, incDir), mustOpenCurrent(t, fullDir)
		sameProfiles(t, g, w, slices.Concat(a, b, c))
		sameStore(t, dir, w)
		if i == 1 {
			misdirect(t, g)
			sameProfiles(t, g, w, slices.Concat(a, b, c))
		}
	}
	_, incChanges := recordedChanges(t, incDir)
	_, fullChanges := recordedChanges(t, fullDir)
	if !reflect.DeepEqual(incChanges, fullChanges) || len(incChanges) < 4 {
		t.Errorf("C's change records differ, or hold few entries:\nlayered %v\nfull    %v", incChanges, fullChanges)
	}
}

// misdirect sends the look-up of ids of g's two-layer store to a layer
// that does not hold them, as a hash another id shares would: to a newer
// layer than the id's own (the index keeps the newest of the ids sharing
// a hash), each id of the first layer to the second, each id of the base
// to the first or the second.
func misdirect(t *testing.T, g *Generation) {
	t.Helper()
	if err := g.store.view(func(storeTx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	x := g.store.layered
	for i, id := range storeIDs(t, g) {
		h := maphash.String(x.seed, id)
		switch x.ids[h] {
		case 0:
			x.ids[h] = uint16(1 + i%2)
		case 1:
			x.ids[h] = 2
		}
	}
}

// TestLayersMergeAtTheirLimit: a build on a store with maxProfileLayers
// layers writes one layer on the base alone, holding the layers' changes
// and its own, and reads as a full build of the same profiles: every id,
// field, key and count, the store a following node opens, and the change
// record. The build after it adds a second layer; the one after that,
// past the layers' byte share, writes the store whole from the base and
// the layers, and reads as a full build too.
func TestLayersMergeAtTheirLimit(t *testing.T) {
	defer func(n int, share float64) { maxProfileLayers, maxLayerShare = n, share }(maxProfileLayers, maxLayerShare)
	maxProfileLayers = 2
	a, b, _ := realEdits(t)
	lei := register.LEI("529900T8BM49AURSDO55")
	b[7].LEIs = []companydocs.LEILink{{LEI: lei, Method: "test"}}
	takeLEI(t, a, b, "5299000J2N45DDNE4Y28")
	c := layerEdits(t, a, b, lei)
	// D removes C's first profile; the three of A it puts again are C's
	// already, unchanged
	d := slices.Concat(c[1:], a[len(a)-3:])
	incDir, fullDir := t.TempDir(), t.TempDir()
	mustBuild(t, incDir, a)
	mustBuild(t, fullDir, a)
	wantLayers := [][]string{{layerName(1)}, {layerName(1), layerName(2)}, {layerName(1)}, {layerName(1), layerName(2)}, nil}
	for i, ps := range [][]*companydocs.Profile{b, c, d, renamed(a, 1, 40, "Fünf"), b} {
		if i == 4 {
			maxLayerShare = 0
		}
		inc := mustBuildWith(t, incDir, ps, incrementalOpts)
		mustBuildWith(t, fullDir, ps, BuilderOptions{BatchSize: 700})
		if !slices.Equal(inc.ProfileLayers, wantLayers[i]) {
			t.Fatalf("build %d: profile layers %q, want %q", i+1, inc.ProfileLayers, wantLayers[i])
		}
		g, w := mustOpenCurrent(t, incDir), mustOpenCurrent(t, fullDir)
		sameProfiles(t, g, w, slices.Concat(a, b, c, d))
		sameStore(t, filepath.Join(indexDir(incDir), inc.ID), w)
		_, incChanges := recordedChanges(t, incDir)
		_, fullChanges := recordedChanges(t, fullDir)
		if !reflect.DeepEqual(incChanges, fullChanges) || len(incChanges) == 0 {
			t.Errorf("build %d: change records differ, or are empty:\nlayered %v\nfull    %v", i+1, incChanges, fullChanges)
		}
	}
}

// takeLEI gives lei to a profile of A that B holds unchanged, so that
// B takes it away.
func takeLEI(t *testing.T, a, b []*companydocs.Profile, lei register.LEI) {
	t.Helper()
	inB := map[string]*companydocs.Profile{}
	for _, p := range b {
		inB[p.ID] = p
	}
	for _, p := range a {
		if q := inB[p.ID]; q != nil && len(q.LEIs) == 0 && reflect.DeepEqual(p, q) {
			p.LEIs = []companydocs.LEILink{{LEI: lei, Method: "test"}}
			return
		}
	}
	t.Fatal("no profile of A that B holds unchanged")
}

// takeNumber gives a profile of A that B holds unchanged another register
// number in A, as if B had renumbered it.
func takeNumber(t *testing.T, a, b []*companydocs.Profile) {
	t.Helper()
	inB := map[string]*companydocs.Profile{}
	for _, p := range b {
		inB[p.ID] = p
	}
	for _, p := range a {
		if q := inB[p.ID]; q != nil && q.Ref.Number != "" && reflect.DeepEqual(p, q) {
			p.Ref.Number = "9" + p.Ref.Number
			return
		}
	}
	t.Fatal("no profile of A that B holds unchanged")
}

// layerEdits returns C: B with one of its renamed profiles renamed
// again, the one whose officers B replaced removed, the profile B dropped
// back, the LEI lei taken from the profile B gave it and given to another.
func layerEdits(t *testing.T, a, b []*companydocs.Profile, lei register.LEI) []*companydocs.Profile {
	t.Helper()
	inA, inB := map[string]*companydocs.Profile{}, map[string]bool{}
	for _, p := range a {
		inA[p.ID] = p
	}
	for _, p := range b {
		inB[p.ID] = true
	}
	var c []*companydocs.Profile
	renamedAgain, removed := false, false
	for _, p := range cloneProfiles(b) {
		q := inA[p.ID]
		switch {
		case q != nil && q.Name != p.Name && !renamedAgain:
			p.Name += " Neu"
			renamedAgain = true
		case q != nil && !reflect.DeepEqual(q.Officers, p.Officers) && !removed:
			removed = true
			continue
		case p.ID == b[7].ID:
			p.LEIs = nil
		case p.ID == b[11].ID:
			p.LEIs = []companydocs.LEILink{{LEI: lei, Method: "test"}}
		}
		c = append(c, p)
	}
	for _, p := range a {
		if !inB[p.ID] {
			c = append(c, p)
		}
	}
	if !renamedAgain || !removed || len(c) <= len(b) {
		t.Fatalf("C renamed again %v, removed %v, has %d profiles, B %d: want one renamed, one removed, and those B dropped back", renamedAgain, removed, len(c), len(b))
	}
	return c
}

// sameProfiles fails unless got and want hold the same profiles: every
// id in order, every field, and the same answers by register number and
// by LEI for every key of ps.
func sameProfiles(t *testing.T, got, want *Generation, ps []*companydocs.Profile) {
	t.Helper()
	ids, wantIDs := storeIDs(t, got), storeIDs(t, want)
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("the stores hold %d and %d ids, not the same", len(ids), len(wantIDs))
	}
	for _, id := range ids {
		p, err := got.Profile(id)
		q, werr := want.Profile(id)
		if err != nil || werr != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("profile %s: %+v (%v), want %+v (%v)", id, p, err, q, werr)
		}
	}
	for _, recorded := range []bool{false, true} {
		if n, err := got.storedProfiles(recorded); err != nil || n != len(ids) || got.Count() != len(ids) {
			t.Errorf("stored profiles %d (%v) counted by the layers' records %v, meta.json %d; want %d", n, err, recorded, got.Count(), len(ids))
		}
	}
	for _, layer := range got.meta.ProfileLayers {
		if _, ok := layerRecord(t, filepath.Join(got.dir, layer)); !ok {
			t.Errorf("layer %s records no net", layer)
		}
	}
	for _, p := range ps {
		x, errX := got.ByNumber(p.Ref.Type, p.Ref.Number)
		y, errY := want.ByNumber(p.Ref.Type, p.Ref.Number)
		if errX != nil || errY != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("by number %s %s: %d profiles (%v), want %d (%v)", p.Ref.Type, p.Ref.Number, len(x), errX, len(y), errY)
		}
		for _, l := range p.LEIs {
			x, errX := got.ByLEI(l.LEI)
			y, errY := want.ByLEI(l.LEI)
			if errX != nil || errY != nil || !reflect.DeepEqual(x, y) {
				t.Fatalf("by LEI %s: %d profiles (%v), want %d (%v)", l.LEI, len(x), errX, len(y), errY)
			}
		}
	}
}

// sameStore fails unless the profile store a following node opens in dir
// answers as want for every id want holds.
func sameStore(t *testing.T, dir string, want *Generation) {
	t.Helper()
	s, err := OpenProfileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range storeIDs(t, want) {
		p, err := s.Profile(id)
		q, _ := want.Profile(id)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("profile store of %s: profile %s %+v (%v), want %+v", filepath.Base(dir), id, p, err, q)
		}
	}
}

// storeIDs lists the ids of g's profile store in order.
func storeIDs(t *testing.T, g *Generation) []string {
	t.Helper()
	var ids []string
	err := g.store.view(func(tx storeTx) error {
		c := tx.cursor()
		for k, _ := c.first(); k != nil; k, _ = c.next() {
			ids = append(ids, string(k))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func sameFile(t *testing.T, a, b string) {
	t.Helper()
	if !linked(a, b) {
		t.Errorf("%s is not shared with %s", b, a)
	}
}

// linked reports whether two paths name one file (a hard link).
func linked(a, b string) bool {
	x, errX := os.Stat(a)
	y, errY := os.Stat(b)
	return errX == nil && errY == nil && os.SameFile(x, y)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// TestLayerLimits: an incremental build writes a layer while the
// previous store's layers hold at most maxLayerShare of the base's bytes,
// however many they are (on maxProfileLayers it merges them into one);
// past the share it writes the store whole.
func TestLayerLimits(t *testing.T) {
	meta := func(layers int, each int64) Meta {
		m := Meta{Files: []FileSum{{Path: profilesName, Size: 1000}}}
		for n := range layers {
			m.ProfileLayers = append(m.ProfileLayers, layerName(n+1))
			m.Files = append(m.Files, FileSum{Path: layerName(n + 1), Size: each})
		}
		return m
	}
	for _, c := range []struct {
		name  string
		base  Meta
		layer bool
	}{
		{"a whole store", meta(0, 0), true},
		{"nine small layers", meta(9, 10), true},
		{"layers at their count (merged into one)", meta(maxProfileLayers, 1), true},
		{"layers of the share", meta(2, int64(maxLayerShare*1000/2)), true},
		{"layers of more than the share", meta(2, int64(maxLayerShare*1000/2)+1), false},
	} {
		if got := layerLimitReason(c.base) == ""; got != c.layer {
			t.Errorf("%s: layer %v, want %v (%q)", c.name, got, c.layer, layerLimitReason(c.base))
		}
	}
}

// TestLayersRestartPastTheLimit: successive incremental builds of small
// edits each add a layer until the layers hold more than maxLayerShare of
// the base's bytes; the next build shares the segments but writes its
// profile store whole, and the one after adds a first layer on it. Every
// generation holds the profiles it was built of.
func TestLayersRestartPastTheLimit(t *testing.T) {
	// each build's layer holds about 1.5% of the sample's store: a tenth is
	// passed before ten layers
	defer func(n int, share float64) { maxProfileLayers, maxLayerShare = n, share }(maxProfileLayers, maxLayerShare)
	maxProfileLayers, maxLayerShare = 10, 0.10
	_, b, _ := realEdits(t)
	dataDir := t.TempDir()
	prev := mustBuild(t, dataDir, b)
	restarted := false
	for i := 1; i <= 12 && !restarted; i++ {
		ps := renamed(b, i, 1000, fmt.Sprint("R", i))
		m := mustBuildWith(t, dataDir, ps, incrementalOpts)
		reason := layerLimitReason(prev)
		t.Logf("build %d: %d layers (%s)", i, len(m.ProfileLayers), reason)
		switch {
		case m.Build.Kind != BuildIncremental:
			t.Fatalf("build %d: %+v, want the index on the segments", i, m.Build)
		case reason == "" && len(m.ProfileLayers) != len(prev.ProfileLayers)+1:
			t.Fatalf("build %d on %d layers within the limits: %q, want one more", i, len(prev.ProfileLayers), m.ProfileLayers)
		case reason != "" && m.ProfileLayers != nil:
			t.Fatalf("build %d past the limit (%s): layers %q, want the store whole", i, reason, m.ProfileLayers)
		}
		if restarted = reason != ""; restarted {
			compactAgain(t, filepath.Join(indexDir(dataDir), m.ID, profilesName))
		}
		g := mustOpenCurrent(t, dataDir)
		for _, p := range ps[:50] {
			if got, err := g.Profile(p.ID); err != nil || !reflect.DeepEqual(got, p) {
				t.Fatalf("build %d: profile %s %+v (%v), want %+v", i, p.ID, got, err, p)
			}
		}
		prev = m
	}
	if !restarted {
		t.Fatal("12 builds never wrote the profile store whole")
	}
	if m := mustBuildWith(t, dataDir, renamed(b, 0, 1000, "again"), incrementalOpts); !slices.Equal(m.ProfileLayers, []string{layerName(1)}) {
		t.Errorf("the build after a whole store has layers %q, want one", m.ProfileLayers)
	}
}

// compactAgain fails unless a compaction of the store written whole at
// path, which the build does not compact, leaves it within a page of its
// size.
func compactAgain(t *testing.T, path string) {
	t.Helper()
	dir := t.TempDir()
	if err := copyFile(path, filepath.Join(dir, profilesName)); err != nil {
		t.Fatal(err)
	}
	if err := compactProfiles(dir, compactTxBytes); err != nil {
		t.Fatal(err)
	}
	written, compacted := fileSize(t, path), fileSize(t, filepath.Join(dir, profilesName))
	t.Logf("the store written whole: %d bytes, compacted again %d", written, compacted)
	if written > compacted+4096 {
		t.Errorf("the store written whole holds %d bytes, %d compacted: it needs the compaction it skips", written, compacted)
	}
}

// TestDamagedProfileLayerIsNeverServed runs the damage matrix over the
// profile store of a layered generation, its base and its layer: each
// damaged file is refused as any other file of a generation is.
func TestDamagedProfileLayerIsNeverServed(t *testing.T) {
	ps := loadRealProfiles(t)[:300]
	edited := renamed(ps, 3, 30, "Neu")
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	m := mustBuildWith(t, dataDir, edited, incrementalOpts)
	if !slices.Equal(m.ProfileLayers, []string{layerName(1)}) {
		t.Fatalf("layers %q, want one", m.ProfileLayers)
	}
	tmpl := damageTemplate{dir: filepath.Join(indexDir(dataDir), m.ID), profiles: edited}
	for _, file := range []string{profilesName, layerName(1)} {
		for _, d := range damages {
			t.Run(file+"/"+d.name, func(t *testing.T) {
				dataDir := t.TempDir()
				copyGeneration(t, tmpl.dir, dataDir, goodName)
				bad := copyGeneration(t, tmpl.dir, dataDir, badName)
				if err := d.apply(filepath.Join(bad, file)); err != nil {
					t.Fatal(err)
				}
				if _, err := Open(bad); RejectReason(err) != RejectFiles {
					t.Errorf("Open of the generation with %s %s: %v, want a refusal of its files", file, d.name, err)
				}
				if swapToDamaged(t, tmpl, dataDir) {
					t.Errorf("a generation with its %s %s was swapped in", file, d.name)
				}
				startFromDamaged(t, tmpl, dataDir, false)
			})
		}
	}
}

// TestLayerNetRecord: the count of a layered store by the net its layer
// records is the count by what the layer holds; a layer without a record
// (as an older build wrote) is counted by what it holds, and one whose
// record differs from what it holds is refused by the build's count, and
// counts other than meta.json by the record.
func TestLayerNetRecord(t *testing.T) {
	ps := loadRealProfiles(t)[:300]
	edited := slices.Concat(renamed(ps, 3, 30, "Neu")[10:], ps[:2])
	dataDir := t.TempDir()
	mustBuild(t, dataDir, ps)
	m := mustBuildWith(t, dataDir, edited, incrementalOpts)
	if !slices.Equal(m.ProfileLayers, []string{layerName(1)}) {
		t.Fatalf("layers %q, want one", m.ProfileLayers)
	}
	src := filepath.Join(indexDir(dataDir), m.ID)
	if net, _ := layerRecord(t, filepath.Join(src, layerName(1))); net != len(edited)-len(ps) {
		t.Fatalf("the layer records %+d profiles, want %+d", net, len(edited)-len(ps))
	}
	for _, c := range []struct {
		name            string
		edit            func(b *bolt.Bucket) error
		recorded, held  int
		refusedWhenHeld bool
	}{
		{"no record", func(b *bolt.Bucket) error { return b.Delete(layerNetKey) }, len(edited), len(edited), false},
		{"a record one too high", func(b *bolt.Bucket) error {
			return b.Put(layerNetKey, []byte(fmt.Sprint(len(edited)-len(ps)+1)))
		}, len(edited) + 1, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyGeneration(t, src, t.TempDir(), goodName)
			db, err := bolt.Open(filepath.Join(dir, layerName(1)), 0o644, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(func(tx *bolt.Tx) error { return c.edit(tx.Bucket(bucketLayer)) }); err != nil {
				t.Fatal(err)
			}
			db.Close()
			s, err := openLayers(dir, profileFiles(m), openReadOnly)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if n, err := s.count(true); err != nil || n != c.recorded {
				t.Errorf("counted by the record: %d (%v), want %d", n, err, c.recorded)
			}
			n, err := s.count(false)
			if c.refusedWhenHeld && RejectReason(err) != RejectStructure {
				t.Errorf("counted by what the layer holds: %d (%v), want a refusal", n, err)
			}
			if !c.refusedWhenHeld && (err != nil || n != c.held) {
				t.Errorf("counted by what the layer holds: %d (%v), want %d", n, err, c.held)
			}
		})
	}
}

// layerRecord returns the net the layer at path records.
func layerRecord(t *testing.T, path string) (net int, ok bool) {
	t.Helper()
	db, err := openReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) (err error) {
		net, ok, err = recordedNet(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return net, ok
}

// TestLayerNamesChecked: a meta.json whose layers are not the layer files
// in order, or that names a layer without its checksum, or names layers
// in a version before them, is refused before anything is opened.
func TestLayerNamesChecked(t *testing.T) {
	for _, c := range []struct {
		name   string
		layers []string
		sums   []string
		ver    int
	}{
		{"a path outside", []string{"../profiles.db"}, []string{"../profiles.db"}, IndexVersion},
		{"out of order", []string{layerName(2)}, []string{layerName(2)}, IndexVersion},
		{"without its checksum", []string{layerName(1)}, nil, IndexVersion},
		{"in version 10", []string{layerName(1)}, []string{layerName(1)}, 10},
	} {
		m := Meta{Version: c.ver, ProfileLayers: c.layers, Files: []FileSum{{Path: profilesName}}}
		for _, s := range c.sums {
			m.Files = append(m.Files, FileSum{Path: s})
		}
		if err := checkLayers(m); RejectReason(err) != RejectMeta {
			t.Errorf("%s: %v, want a refusal of meta.json", c.name, err)
		}
	}
	if err := checkLayers(Meta{Version: IndexVersion, ProfileLayers: []string{layerName(1)}, Files: []FileSum{{Path: layerName(1)}}}); err != nil {
		t.Errorf("a layer in order with its checksum: %v", err)
	}
	if !IsProfileFile(profilesName) || !IsProfileFile(layerName(12)) || IsProfileFile("profiles.0.db") || IsProfileFile("changes.db") {
		t.Error("IsProfileFile names the wrong files")
	}
}
