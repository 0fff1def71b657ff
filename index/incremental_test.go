package index

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"companydocs"
	"companydocs/register"
	"companydocs/textfold"
)

// incrementalOpts builds on the previous generation, in batches small
// enough that the update writes several segments to merge.
var incrementalOpts = BuilderOptions{BatchSize: 700, Incremental: true}

// TestIncrementalBuildOnRealEdits builds generation A of chunk 53, then B
// of its edited records (renamed, new officers, in liquidation, moved,
// struck off, gone, white space) on A, and B again in full elsewhere: B
// shares A's segment, writes only the changed documents, leaves A's files
// as they were, records the same changes and answers every query as the
// full build does.
func TestIncrementalBuildOnRealEdits(t *testing.T) {
	a, b, _ := realEdits(t)
	dataDir, fullDir := t.TempDir(), t.TempDir()
	first := mustBuild(t, dataDir, a)
	baseDir := filepath.Join(indexDir(dataDir), first.ID)
	before := fileHashes(t, baseDir)

	second := mustBuildWith(t, dataDir, b, incrementalOpts)
	want := BuildInfo{Kind: BuildIncremental, Base: first.ID, Indexed: 6, Deleted: 2, DeadDocuments: 7, Segments: 2}
	if second.Build == nil || *second.Build != want {
		t.Errorf("build %+v, want %+v", second.Build, want)
	}
	if after := fileHashes(t, baseDir); !reflect.DeepEqual(after, before) {
		t.Errorf("the previous generation's files changed:\nbefore %v\nafter  %v", before, after)
	}
	if err := verifyFiles(baseDir, first.Files); err != nil {
		t.Errorf("previous generation no longer matches its meta.json: %v", err)
	}
	checkSharesSegment(t, baseDir, filepath.Join(indexDir(dataDir), second.ID))
	_, incChanges := recordedChanges(t, dataDir)
	inc := mustOpenCurrent(t, dataDir)

	mustBuild(t, fullDir, a)
	full := mustBuildWith(t, fullDir, b, BuilderOptions{BatchSize: 700})
	if full.Build == nil || full.Build.Kind != BuildFull || full.Build.Segments != 1 {
		t.Errorf("full build %+v, want one segment", full.Build)
	}
	_, fullChanges := recordedChanges(t, fullDir)
	if !reflect.DeepEqual(incChanges, fullChanges) {
		t.Errorf("change records differ:\nincremental %v\nfull        %v", incChanges, fullChanges)
	}
	if second.Changes == nil || full.Changes == nil || !reflect.DeepEqual(summaryWithout(*second.Changes), summaryWithout(*full.Changes)) {
		t.Errorf("change summaries differ: %+v and %+v", second.Changes, full.Changes)
	}
	compareSearches(t, inc, mustOpenCurrent(t, fullDir), editQueries(a, b))
}

// summaryWithout returns s without the name of the generation compared
// with, which differs between two data directories.
func summaryWithout(s ChangeSummary) ChangeSummary {
	s.Previous = ""
	return s
}

// fileHashes returns the SHA-256 of every file under dir by path.
func fileHashes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		_, sum, err := readSHA256(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = sum
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkSharesSegment checks that the generation in dir holds a segment
// file of the one in base as the same file, not a copy.
func checkSharesSegment(t *testing.T, base, dir string) {
	t.Helper()
	zaps, err := filepath.Glob(filepath.Join(base, bleveDirName, "store", "*.zap"))
	if err != nil || len(zaps) != 1 {
		t.Fatalf("segments of the base: %v, %v", zaps, err)
	}
	a, errA := os.Stat(zaps[0])
	c, errC := os.Stat(filepath.Join(dir, bleveDirName, "store", filepath.Base(zaps[0])))
	if errA != nil || errC != nil || !os.SameFile(a, c) {
		t.Errorf("the base's segment %s is not shared: %v, %v", filepath.Base(zaps[0]), errA, errC)
	}
}

// editQueries returns text queries of the kinds a resolver asks for,
// about the profiles of both builds: every profile that changed or left
// (by its old and its new name), and a spread of the others.
func editQueries(a, b []*companydocs.Profile) []companydocs.TextQuery {
	inB := map[string]*companydocs.Profile{}
	for _, p := range b {
		inB[p.ID] = p
	}
	var ps []*companydocs.Profile
	for i, p := range a {
		if q := inB[p.ID]; q == nil || !reflect.DeepEqual(p, q) || i%40 == 0 {
			ps = append(ps, p)
			if q != nil {
				ps = append(ps, q)
			}
		}
	}
	var out []companydocs.TextQuery
	for _, p := range ps {
		out = append(out, profileQueries(p)...)
	}
	return out
}

// profileQueries are the queries about p: its name, with its seat, with a
// typo in its longest word, cut while typed, and its officer in deep mode.
func profileQueries(p *companydocs.Profile) []companydocs.TextQuery {
	base, form, _ := register.SplitLegalForm(p.Name)
	if len(base) == 0 {
		return nil
	}
	seat := strings.Fields(textfold.Fold(p.Seat))
	out := []companydocs.TextQuery{
		{NameTerms: base, LegalFormTerms: form.Words, Fuzzy: true},
		{NameTerms: append(slices.Clone(base), seat...), SeatWords: append(slices.Clone(base), seat...), Fuzzy: true},
		{NameTerms: withTypo(base), Fuzzy: true},
		{NameTerms: withTypo(base), Fuzzy: true, Deep: true, Discover: true},
		{NameTerms: cutLast(base), Fuzzy: true, Completes: true},
	}
	if len(p.Officers) > 0 {
		words := textfold.Tokens(textfold.Fold(p.Officers[0].Name))
		out = append(out, companydocs.TextQuery{NameTerms: withTypo(words), Fuzzy: true, Officers: true},
			companydocs.TextQuery{NameTerms: words, Only: companydocs.OnlyOfficers})
	}
	return out
}

// withTypo drops the second letter of the longest word.
func withTypo(words []string) []string {
	out := slices.Clone(words)
	longest := 0
	for i, w := range out {
		if len(w) > len(out[longest]) {
			longest = i
		}
	}
	if w := out[longest]; len(w) > 3 {
		out[longest] = w[:1] + w[2:]
	}
	return out
}

// cutLast cuts the last word to its first four bytes, as while typed.
func cutLast(words []string) []string {
	out := slices.Clone(words)
	if w := out[len(out)-1]; len(w) > 4 {
		out[len(out)-1] = w[:4]
	}
	return out
}

// compareSearches runs every query on both generations and requires the
// same hits in the same order, profile by profile.
func compareSearches(t *testing.T, got, want *Generation, queries []companydocs.TextQuery) {
	t.Helper()
	if len(queries) < 50 {
		t.Fatalf("only %d queries", len(queries))
	}
	hits := 0
	for _, q := range queries {
		q.Limit = 30
		a, b := hitsJSON(t, got, q), hitsJSON(t, want, q)
		if a != b {
			t.Errorf("query %+v:\nincremental %s\nfull        %s", q, a, b)
		}
		hits += strings.Count(b, `"id"`)
	}
	t.Logf("%d queries, %d hits, the same on both", len(queries), hits)
}

// hitsJSON returns the hits of q on g as JSON, the profiles whole.
func hitsJSON(t *testing.T, g *Generation, q companydocs.TextQuery) string {
	t.Helper()
	hits, err := g.SearchText(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(hits)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if len(b) > 2000 {
		return hex.EncodeToString(sum[:8]) + " " + string(b[:2000])
	}
	return string(b)
}

// renamed returns a copy of ps with every step-th profile from start on
// renamed, its old name kept as a previous name.
func renamed(ps []*companydocs.Profile, start, step int, suffix string) []*companydocs.Profile {
	out := cloneProfiles(ps)
	for i := start; i < len(out); i += step {
		out[i].PreviousNames = append(out[i].PreviousNames, out[i].Name)
		out[i].Name = out[i].Name + " " + suffix
	}
	return out
}

// TestIncrementalFallsBackToFullBuild: a build asked to be incremental
// indexes every document anew when it is asked for a full build, when a
// tenth of the profiles changed, and once the deleted documents its
// predecessors left would pass a tenth of the index; the one after a full
// build is incremental again.
func TestIncrementalFallsBackToFullBuild(t *testing.T) {
	a := chunk53Profiles(t)
	dataDir := t.TempDir()
	if m := mustBuildWith(t, dataDir, a, incrementalOpts); m.Build.Kind != BuildFull || m.Build.Reason != ReasonNoPrevious {
		t.Errorf("first build %+v, want a full one: %s", m.Build, ReasonNoPrevious)
	}
	if m := mustBuildWith(t, dataDir, a, BuilderOptions{}); m.Build.Kind != BuildFull || m.Build.Reason != ReasonAsked || m.Build.Segments != 1 {
		t.Errorf("build not asked to be incremental %+v, want a full one: %s", m.Build, ReasonAsked)
	}
	// one profile in 9 changes: over a tenth
	m := mustBuildWith(t, dataDir, renamed(a, 0, 9, "Holding"), incrementalOpts)
	if m.Build.Kind != BuildFull || !strings.Contains(m.Build.Reason, "more than 10% of the 5727 profiles changed") || m.Build.Segments != 1 {
		t.Errorf("build of 11%% changed profiles %+v, want a full one", m.Build)
	}
	// one in 30 changes each time: the deleted documents pass a tenth at the fourth
	ps := renamed(a, 0, 9, "Holding")
	var dead []int
	for i := range 4 {
		ps = renamed(ps, i, 30, "Neu")
		m = mustBuildWith(t, dataDir, ps, incrementalOpts)
		dead = append(dead, m.Build.DeadDocuments)
		if want := i < 3; (m.Build.Kind == BuildIncremental) != want {
			t.Errorf("build %d: %+v, incremental %v", i, m.Build, want)
		}
	}
	if dead[0] != 191 || dead[1] != 382 || dead[2] != 573 || dead[3] != 0 {
		t.Errorf("deleted documents after each build %v, want 191, 382, 573 and 0 after the full build", dead)
	}
	if !strings.Contains(m.Build.Reason, "deleted documents would make 11.8%") || m.Build.Segments != 1 {
		t.Errorf("fourth build %+v, want a full one of one segment", m.Build)
	}
	ps = renamed(ps, 0, 100, "Alt")
	if m = mustBuildWith(t, dataDir, ps, incrementalOpts); m.Build.Kind != BuildIncremental || m.Build.Segments != 2 {
		t.Errorf("build after the full one %+v, want an incremental one", m.Build)
	}
	full := t.TempDir()
	mustBuild(t, full, ps)
	compareSearches(t, mustOpenCurrent(t, dataDir), mustOpenCurrent(t, full), editQueries(a[:600], ps[:600]))
}

// TestIncrementalBuildOnDamagedBase: a segment of the previous generation
// that no longer matches its meta.json is not shared, the build indexes
// every document anew; and a damaged segment a generation shares is
// found by its check, as in a full build's.
func TestIncrementalBuildOnDamagedBase(t *testing.T) {
	a, b, _ := realEdits(t)
	dataDir := t.TempDir()
	first := mustBuild(t, dataDir, a)
	zaps, err := filepath.Glob(filepath.Join(indexDir(dataDir), first.ID, bleveDirName, "store", "*.zap"))
	if err != nil || len(zaps) != 1 {
		t.Fatalf("segments %v, %v", zaps, err)
	}
	flipByte(t, zaps[0])
	m := mustBuildWith(t, dataDir, b, incrementalOpts)
	if m.Build.Kind != BuildFull || !strings.Contains(m.Build.Reason, "is damaged") {
		t.Errorf("build on a damaged generation %+v, want a full one", m.Build)
	}
	m = mustBuildWith(t, dataDir, a, incrementalOpts)
	if m.Build.Kind != BuildIncremental {
		t.Fatalf("build %+v, want an incremental one", m.Build)
	}
	zaps, err = filepath.Glob(filepath.Join(indexDir(dataDir), m.ID, bleveDirName, "store", "*.zap"))
	if err != nil || len(zaps) != 2 {
		t.Fatalf("segments %v, %v", zaps, err)
	}
	for _, z := range zaps {
		flipByte(t, z)
	}
	_, err = Open(filepath.Join(indexDir(dataDir), m.ID))
	if RejectReason(err) != RejectFiles {
		t.Errorf("open with a damaged shared segment: %v, want refused for its files", err)
	}
}

// flipByte inverts one byte in the middle of the file, in place (a
// shared file is damaged in every generation that holds it).
func flipByte(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}
