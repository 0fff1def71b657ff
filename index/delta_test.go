package index

import (
	"reflect"
	"slices"
	"testing"

	"companydocs"
)

// TestIncrementalBuilderReadsAsWholeStore feeds an incremental build on
// generation A of chunk 53 and a full build the same puts: B's real
// edits, then profiles put again (one of A's put unchanged and then
// renamed, one renamed and then put back as A holds it, one of B's
// renamed twice). After every put both answer Get and ByNumber alike for
// the profile put, for one of A's not put yet (none, though A holds it),
// and count alike; the generations they publish hold the same profiles.
func TestIncrementalBuilderReadsAsWholeStore(t *testing.T) {
	a, b, _ := realEdits(t)
	incDir, fullDir := t.TempDir(), t.TempDir()
	mustBuild(t, incDir, a)
	inc, err := NewBuilder(incDir, incrementalOpts)
	if err != nil {
		t.Fatal(err)
	}
	defer inc.Abort()
	full, err := NewBuilder(fullDir, BuilderOptions{BatchSize: 700})
	if err != nil {
		t.Fatal(err)
	}
	defer full.Abort()
	if inc.delta == nil {
		t.Fatalf("the build on A reads no delta: %+v", inc.build)
	}
	puts := slices.Concat(b, putsAgain(t, a, b))
	notYet := map[string]*companydocs.Profile{}
	for _, p := range a {
		notYet[p.ID] = p
	}
	for i, p := range puts {
		delete(notYet, p.ID)
		for _, bld := range []*Builder{inc, full} {
			if err := bld.Put(cloneProfiles([]*companydocs.Profile{p})[0]); err != nil {
				t.Fatal(err)
			}
		}
		if i%7 != 0 && i < len(puts)-40 {
			continue // every seventh put, and each of the last ones
		}
		sameReads(t, inc, full, p)
		for _, q := range notYet {
			sameReads(t, inc, full, q)
			break
		}
	}
	if inc.Count() != full.Count() {
		t.Fatalf("count %d, a full build's %d", inc.Count(), full.Count())
	}
	if _, err := inc.Commit(Meta{}); err != nil {
		t.Fatal(err)
	}
	if _, err := full.Commit(Meta{}); err != nil {
		t.Fatal(err)
	}
	g, w := mustOpenCurrent(t, incDir), mustOpenCurrent(t, fullDir)
	sameProfiles(t, g, w, slices.Concat(a, puts))
}

// putsAgain returns the puts after B: one of A's profiles that B keeps
// as it was, as it is and then renamed; one B renamed, as A holds it;
// one B renamed, renamed again.
func putsAgain(t *testing.T, a, b []*companydocs.Profile) []*companydocs.Profile {
	t.Helper()
	inA := map[string]*companydocs.Profile{}
	for _, p := range a {
		inA[p.ID] = p
	}
	var same, renamed *companydocs.Profile
	for _, p := range b {
		q := inA[p.ID]
		switch {
		case q != nil && same == nil && reflect.DeepEqual(p, q):
			same = q
		case q != nil && renamed == nil && q.Name != p.Name:
			renamed = p
		}
	}
	if same == nil || renamed == nil {
		t.Fatalf("B keeps no profile of A as it was (%v) or renames none (%v)", same != nil, renamed != nil)
	}
	ps := cloneProfiles([]*companydocs.Profile{same, same, inA[renamed.ID], renamed})
	ps[1].Name += " Neu"
	ps[3].Name += " Zwei"
	return ps
}

// sameReads fails unless inc and full answer Get of p's id and ByNumber
// of its register number alike.
func sameReads(t *testing.T, inc, full *Builder, p *companydocs.Profile) {
	t.Helper()
	got, err := inc.Get(p.ID)
	want, werr := full.Get(p.ID)
	if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Get %s: %+v (%v), a full build's %+v (%v)", p.ID, got, err, want, werr)
	}
	if p.Ref.Number == "" {
		return
	}
	gotN, err := inc.ByNumber(p.Ref.Type, p.Ref.Number)
	wantN, werr := full.ByNumber(p.Ref.Type, p.Ref.Number)
	if err != nil || werr != nil || !reflect.DeepEqual(gotN, wantN) {
		t.Fatalf("ByNumber %s %s: %d profiles (%v), a full build's %d (%v)", p.Ref.Type, p.Ref.Number, len(gotN), err, len(wantN), werr)
	}
}
