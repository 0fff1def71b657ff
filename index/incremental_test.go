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
		_, sum, err := hashFile(path)
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
	base, form, _ := companydocs.SplitLegalForm(p.Name)
	if len(base) == 0 {
		return nil
	}
	seat := strings.Fields(companydocs.Fold(p.Seat))
	out := []companydocs.TextQuery{
		{NameTerms: base, LegalFormTerms: form.Words, Fuzzy: true},
		{NameTerms: append(slices.Clone(base), seat...), SeatWords: append(slices.Clone(base), seat...), Fuzzy: true},
		{NameTerms: withTypo(base), Fuzzy: true},
		{NameTerms: withTypo(base), Fuzzy: true, Deep: true, Discover: true},
		{NameTerms: cutLast(base), Fuzzy: true, Completes: true},
	}
	if len(p.Officers) > 0 {
		words := companydocs.Tokens(companydocs.Fold(p.Officers[0].Name))
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
