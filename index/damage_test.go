package index

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"companydocs"
)

// The damage matrix: one real generation is built once per test run; each
// case copies it, damages one file of the copy in one way, and swaps to it
// (Reload with the good generation serving) and starts from it (OpenLive).

// damageTemplate is the generation the damage cases copy.
type damageTemplate struct {
	dir      string   // the generation's directory
	files    []string // its files, relative to dir
	profiles []*companydocs.Profile
}

var (
	damageOnce sync.Once
	damageDir  string
	damageGen  damageTemplate
	damageErr  error
)

// sharedDamageTemplate builds a generation of 300 real profiles once.
func sharedDamageTemplate(tb testing.TB) damageTemplate {
	tb.Helper()
	ps := loadRealProfiles(tb)[:300]
	damageOnce.Do(func() {
		if damageDir, damageErr = os.MkdirTemp("", "index-damage-"); damageErr != nil {
			return
		}
		m := mustBuild(tb, damageDir, ps)
		damageGen = damageTemplate{dir: filepath.Join(indexDir(damageDir), m.ID), profiles: ps}
		damageErr = filepath.Walk(damageGen.dir, func(path string, info os.FileInfo, err error) error {
			if err == nil && info.Mode().IsRegular() {
				rel, _ := filepath.Rel(damageGen.dir, path)
				damageGen.files = append(damageGen.files, rel)
			}
			return err
		})
	})
	if damageErr != nil {
		tb.Fatal(damageErr)
	}
	return damageGen
}

// copyGeneration copies the generation in src to dataDir/index/name.
func copyGeneration(tb testing.TB, src, dataDir, name string) string {
	tb.Helper()
	dst := filepath.Join(indexDir(dataDir), name)
	err := filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return copyFile(path, target)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return dst
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// A damage changes one file in place.
type damage struct {
	name  string
	apply func(path string) error
}

var damages = []damage{
	{"truncated", func(path string) error { return truncateBy(path, 2) }},
	{"emptied", func(path string) error { return os.Truncate(path, 0) }},
	{"zeroed", zeroFile},
	{"flipped", flipBytes},
	{"deleted", os.Remove},
}

func truncateBy(path string, div int64) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, st.Size()/div)
}

func zeroFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, make([]byte, st.Size()), 0o644)
}

// flipBytes inverts 16 bytes spread evenly over the file.
func flipBytes(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i := 0; i < 16; i++ {
		at := len(b) * (2*i + 1) / 32
		b[at] ^= 0xff
	}
	return os.WriteFile(path, b, 0o644)
}

// caseName names a file stably: segment files are named by their epoch.
func caseName(file string) string {
	if strings.HasSuffix(file, ".zap") {
		return filepath.Join(filepath.Dir(file), "segment.zap")
	}
	return file
}

const (
	goodName = "gen-20000101T000000.000Z-aaaaaa"
	badName  = "gen-20000101T000001.000Z-bbbbbb"
)

func TestDamagedGenerationIsNeverServed(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	for _, file := range tmpl.files {
		for _, d := range damages {
			t.Run(caseName(file)+"/"+d.name, func(t *testing.T) {
				dataDir := t.TempDir()
				copyGeneration(t, tmpl.dir, dataDir, goodName)
				bad := copyGeneration(t, tmpl.dir, dataDir, badName)
				if err := d.apply(filepath.Join(bad, file)); err != nil {
					t.Fatal(err)
				}
				accepted := swapToDamaged(t, tmpl, dataDir)
				if file == changesName {
					checkDamagedChanges(t, bad, accepted)
				}
				startFromDamaged(t, tmpl, dataDir, accepted)
			})
		}
	}
}

// checkDamagedChanges: a damaged change record leaves the generation
// served, and Changes reports the damage.
func checkDamagedChanges(t *testing.T, dir string, accepted bool) {
	t.Helper()
	if !accepted {
		t.Errorf("a damaged change record kept the generation from serving")
	}
	g, err := Open(dir)
	if err != nil {
		t.Fatalf("open a generation whose change record is damaged: %v", err)
	}
	defer g.Close()
	if _, err := g.Changes(); !errors.Is(err, ErrChangesDamaged) {
		t.Errorf("Changes of a damaged record: %v, want ErrChangesDamaged", err)
	}
}

// swapToDamaged serves the good generation, publishes the damaged one and
// reloads: either the damaged one is refused and the good one keeps
// serving, or it is taken and serves every probe correctly. It reports
// whether the damaged generation was taken.
func swapToDamaged(t *testing.T, tmpl damageTemplate, dataDir string) bool {
	t.Helper()
	if err := writeCurrent(dataDir, goodName); err != nil {
		t.Fatal(err)
	}
	var rejected []string
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1,
		OnReject: func(name, reason string) { rejected = append(rejected, name+":"+reason) }})
	if err != nil {
		t.Fatalf("open the good generation: %v", err)
	}
	defer live.Close()
	if err := writeCurrent(dataDir, badName); err != nil {
		t.Fatal(err)
	}
	err = live.Reload()
	id, _, _ := live.Current()
	if err != nil {
		if id != goodName {
			t.Fatalf("Reload failed (%v) but serving %s", err, id)
		}
		if len(rejected) != 1 || !strings.HasPrefix(rejected[0], badName+":") {
			t.Errorf("rejections reported: %v, want one of %s", rejected, badName)
		}
		t.Logf("refused: %v", err)
	} else if id != badName {
		t.Fatalf("Reload succeeded but serving %s", id)
	}
	probe(t, live, tmpl.profiles)
	// A refused generation is not verified again on every poll.
	if err != nil && live.Reload() == nil {
		t.Error("second Reload of the refused generation succeeded")
	}
	if len(rejected) > 1 {
		t.Errorf("the refused generation was reported %d times: %v", len(rejected), rejected)
	}
	return err == nil
}

// startFromDamaged starts with CURRENT naming the damaged generation: with
// the good (older) one present it falls back to that; alone it refuses to
// start with an error, unless the damage was harmless (accepted).
func startFromDamaged(t *testing.T, tmpl damageTemplate, dataDir string, accepted bool) {
	t.Helper()
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatalf("start with an older good generation: %v", err)
	}
	id, _, _ := live.Current()
	if want := map[bool]string{true: badName, false: goodName}[accepted]; id != want {
		t.Errorf("started on %s, want %s", id, want)
	}
	probe(t, live, tmpl.profiles)
	live.Close()
	if cur, _ := readCurrent(dataDir); cur != badName {
		t.Errorf("CURRENT rewritten to %q", cur)
	}

	if err := os.RemoveAll(filepath.Join(indexDir(dataDir), goodName)); err != nil {
		t.Fatal(err)
	}
	live, err = OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if accepted {
		if err != nil {
			t.Fatalf("start from the generation Reload took: %v", err)
		}
		probe(t, live, tmpl.profiles)
		live.Close()
		return
	}
	if err == nil {
		live.Close()
		t.Fatal("started from the damaged generation alone")
	}
	if !strings.Contains(err.Error(), badName) || !strings.Contains(err.Error(), "re-run ingest") {
		t.Errorf("start error does not name the generation and what to do: %v", err)
	}
}

// probe searches and looks up 20 profiles of the generation: every call
// must succeed and find the profile.
func probe(t *testing.T, live *Live, ps []*companydocs.Profile) {
	t.Helper()
	for i := 0; i < len(ps); i += len(ps) / 20 {
		p := ps[i]
		hits, err := live.SearchText(t.Context(), nameQueryOf(p.Name))
		if err != nil || !containsID(hitProfiles(hits), p.ID) {
			t.Fatalf("search %q: %v (%d hits)", p.Name, err, len(hits))
		}
		got, err := live.Profile(p.ID)
		if err != nil || got == nil || got.Name != p.Name {
			t.Fatalf("profile %s: %v, %v", p.ID, got, err)
		}
		byNumber, err := live.ByNumber(p.Ref.Type, p.Ref.Number)
		if err != nil || !containsID(byNumber, p.ID) {
			t.Fatalf("by number %s %s: %v", p.Ref.Type, p.Ref.Number, err)
		}
	}
}

// TestDamagedLegacyGenerationIsNeverServed runs the matrix over a
// generation without checksums (written before they existed): truncated,
// emptied, zeroed and deleted files are caught by the structural checks;
// flipped bytes may go unnoticed, but the process does not die.
func TestDamagedLegacyGenerationIsNeverServed(t *testing.T) {
	tmpl := sharedDamageTemplate(t)
	legacy := tmpl
	legacy.dir = copyGeneration(t, tmpl.dir, t.TempDir(), "gen-legacy")
	m, err := ReadMeta(legacy.dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = nil
	if err := writeMeta(legacy.dir, m); err != nil {
		t.Fatal(err)
	}
	for _, file := range tmpl.files {
		if file == changesName {
			// Legacy generations predate change records, and a damaged
			// change record never keeps a generation from serving.
			continue
		}
		for _, d := range damages {
			t.Run(caseName(file)+"/"+d.name, func(t *testing.T) {
				dataDir := t.TempDir()
				copyGeneration(t, legacy.dir, dataDir, goodName)
				bad := copyGeneration(t, legacy.dir, dataDir, badName)
				if err := d.apply(filepath.Join(bad, file)); err != nil {
					t.Fatal(err)
				}
				if d.name == "flipped" {
					survivesLegacyFlip(t, legacy, dataDir)
					return
				}
				if swapToDamaged(t, legacy, dataDir) && file != metaName {
					t.Errorf("the damaged legacy generation was taken")
				}
			})
		}
	}
}

// survivesLegacyFlip swaps to a legacy generation with flipped bytes and
// searches it: errors are allowed, a crash is not.
func survivesLegacyFlip(t *testing.T, tmpl damageTemplate, dataDir string) {
	if err := writeCurrent(dataDir, goodName); err != nil {
		t.Fatal(err)
	}
	live, err := OpenLive(dataDir, LiveOptions{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := writeCurrent(dataDir, badName); err != nil {
		t.Fatal(err)
	}
	err = live.Reload()
	id, _, _ := live.Current()
	var failed int
	for _, p := range tmpl.profiles {
		if _, err := live.SearchText(t.Context(), nameQueryOf(p.Name)); err != nil {
			failed++
		}
	}
	t.Logf("reload: %v; serving %s; %d of %d searches failed", err, id, failed, len(tmpl.profiles))
}
