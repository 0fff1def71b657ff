package index

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"companydocs/internal/atomicfile"
)

// IndexVersion is the version of the on-disk format: the mapping, the
// analyzers, the document fields and the profile store layout. Bump it with
// every change to any of them. Version 5 stores profiles as MessagePack
// instead of JSON (see encodeProfile). Version 6 gives verified discovery
// profiles their own source term (sourceVerifiedDiscovery); a version 5
// generation still serves, but finds them by text only with Discover.
// Version 7 stores what keeps a discovery profile unverified as codes with
// params (companydocs.VerificationGap) instead of English sentences; older
// generations still serve, their sentences read as described gaps
// (decodeGap). Version 8 has no bidirectional control characters in its
// texts and may carry the gap lei_records_differ, which a binary reading
// at most version 7 does not know: it refuses the generation instead.
// Version 9 stores each profile's value in its bleve document too
// (fieldProfile), which a search reads instead of the profile store; a
// version 8 generation still serves, its hits read from the store.
// Version 10 folds names with their abbreviations spelled out
// (textfold.Fold: "Gebr." -> "gebrueder", "StBG" ->
// "steuerberatungsgesellschaft"); a version 9 generation still serves,
// but finds an abbreviated name by the other spelling only as a typo or
// a prefix would. Version 11 may store the profiles in layers
// (Meta.ProfileLayers, layers.go), which a binary reading at most
// version 10 would not see: it refuses the generation instead.
const IndexVersion = 11

// layeredVersion is the first version whose profile store may have
// layers.
const layeredVersion = 11

// oldestReadableVersion is the oldest generation Open still reads: version
// 4 differs only in the profile values, which decodeProfile reads in both
// formats, so that a server keeps serving its generation after an upgrade
// until the next ingest. Open refuses anything older or newer.
const oldestReadableVersion = 4

// Names inside a data directory.
const (
	indexDirName   = "index"
	currentName    = "CURRENT"
	publishingName = "PUBLISHING"
	lockName       = "LOCK"
	genPrefix      = "gen-"
	buildingPrefix = ".building-"
	bleveDirName   = "bleve"
	profilesName   = "profiles.db"
	metaName       = "meta.json"
)

// Sentinel errors.
var (
	// ErrBuildInProgress is returned by NewBuilder when another build holds
	// the lock of the data directory.
	ErrBuildInProgress = errors.New("another ingest is already building an index in this data directory")
	// ErrNoGeneration is returned by OpenLive when no generation has been
	// published yet (no CURRENT file).
	ErrNoGeneration = errors.New("no index generation published yet")
	// ErrVersion is returned by Open for a generation built with another
	// IndexVersion.
	ErrVersion = errors.New("index generation has another index version: re-run ingest")
	// ErrClosed is returned by the lookups of a closed Live.
	ErrClosed = errors.New("live index closed")
)

// Meta describes a generation; it is stored as meta.json.
type Meta struct {
	Version   int       `json:"version"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Profiles is the number of stored profiles (equal to indexed documents).
	Profiles      int `json:"profiles"`
	RegistryCache int `json:"registry_cache"`
	Discovery     int `json:"discovery"`
	Removed       int `json:"removed"`
	Verified      int `json:"verified"`
	WithLEI       int `json:"with_lei"`
	// Sources names the files the generation was built from.
	Sources []string `json:"sources,omitempty"`
	// Summary is the human-readable ingest report.
	Summary string `json:"summary,omitempty"`
	// Files lists every other file of the generation with its size and
	// SHA-256, written at publish time; Open checks them. Generations
	// written before it existed lack it (an added field: older programs
	// ignore it, so IndexVersion stays).
	Files []FileSum `json:"files,omitempty"`
	// Changes summarises the change record (changes.db): what this
	// generation changed against the one current when its ingest started.
	// Absent in generations without one (an added field, like Files).
	Changes *ChangeSummary `json:"changes,omitempty"`
	// Build says how the search index was built: anew, or on the segments
	// of a previous generation. Absent in generations built before it
	// existed (an added field, like Files).
	Build *BuildInfo `json:"build,omitempty"`
	// ProfileLayers names the layers of the profile store above
	// profiles.db, oldest first (profiles.1.db, profiles.2.db, ...;
	// layers.go); absent when profiles.db holds every profile, as in
	// every generation before version 11.
	ProfileLayers []string `json:"profile_layers,omitempty"`
}

func indexDir(dataDir string) string { return filepath.Join(dataDir, indexDirName) }

// newGenerationName returns "gen-<UTC timestamp>-<random>"; names sort in
// creation order.
func newGenerationName(now time.Time) (string, error) {
	var r [3]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", fmt.Errorf("random generation suffix: %w", err)
	}
	return genPrefix + now.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(r[:]), nil
}

// validGenerationName rejects anything that could escape the index directory.
func validGenerationName(name string) bool {
	return strings.HasPrefix(name, genPrefix) && !strings.ContainsAny(name, `/\`) && name != "." && name != ".."
}

// noGenerationIn is ErrNoGeneration naming the data directory looked in,
// as an absolute path: a command run from another directory, or with
// another --data-dir than the server's, says where it looked.
func noGenerationIn(dataDir string) error {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		abs = dataDir
	}
	return fmt.Errorf("%w in the data directory %s (it holds no %s): ingest one with companydocs ingest --data-dir %s, "+
		"or name the data directory that holds one with --data-dir", ErrNoGeneration, abs, filepath.Join(indexDirName, currentName), abs)
}

// readCurrent returns the generation name CURRENT points to.
func readCurrent(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(indexDir(dataDir), currentName))
	if errors.Is(err, os.ErrNotExist) {
		return "", noGenerationIn(dataDir)
	} else if err != nil {
		return "", fmt.Errorf("read CURRENT: %w", err)
	}
	name := strings.TrimSpace(string(b))
	if !validGenerationName(name) {
		return "", fmt.Errorf("CURRENT names %q, which is not a generation", name)
	}
	return name, nil
}

// writeCurrent points CURRENT at name: temp file, fsync, rename, fsync dir,
// so that a reader sees either the old or the new name, never a torn one.
func writeCurrent(dataDir, name string) error {
	return writeNameFile(dataDir, currentName, name)
}

// writeNameFile writes name into the file called file of the index
// directory, atomically and durably. The file is readable by the owner
// only, as the temporary file it was written as always was.
func writeNameFile(dataDir, file, name string) error {
	return atomicfile.WriteFile(filepath.Join(indexDir(dataDir), file), []byte(name+"\n"), 0o600)
}

func writeMeta(dir string, m Meta) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode meta: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, metaName))
	if err != nil {
		return fmt.Errorf("write meta: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write meta: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync meta: %w", err)
	}
	return f.Close()
}

// ReadMeta reads meta.json of the generation in dir.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	b, err := os.ReadFile(filepath.Join(dir, metaName))
	if err != nil {
		return m, fmt.Errorf("read meta of %q: %w", dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("decode meta of %q: %w", dir, err)
	}
	return m, nil
}

// lockFile takes an flock on path (created if needed). It returns the open
// file that holds the lock, or ok=false when another open file holds a
// conflicting lock.
func lockFile(path string, how int) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open lock %q: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %q: %w", path, err)
	}
	return f, true, nil
}

// generationNames lists the published generations in dataDir, oldest first.
func generationNames(dataDir string) ([]string, error) {
	entries, err := os.ReadDir(indexDir(dataDir))
	if err != nil {
		return nil, fmt.Errorf("list generations: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && validGenerationName(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}

// prune removes published generations beyond the newest keep, never the one
// CURRENT names and never one that a process has open (Open holds a shared
// flock on its meta.json). It returns the names it removed.
func prune(dataDir string, keep int) ([]string, error) {
	names, err := generationNames(dataDir)
	if err != nil {
		return nil, err
	}
	current, _ := readCurrent(dataDir)
	var removed []string
	for i := 0; i < len(names)-keep; i++ {
		if names[i] == current {
			continue
		}
		ok, err := removeUnusedGeneration(filepath.Join(indexDir(dataDir), names[i]))
		if err != nil {
			return removed, err
		}
		if ok {
			removed = append(removed, names[i])
		}
	}
	return removed, nil
}

// removeUnusedGeneration deletes dir unless a reader holds its lock.
func removeUnusedGeneration(dir string) (bool, error) {
	f, ok, err := lockFile(filepath.Join(dir, metaName), syscall.LOCK_EX)
	if err != nil || !ok {
		return false, err
	}
	defer f.Close()
	if err := os.RemoveAll(dir); err != nil {
		return false, fmt.Errorf("remove generation %q: %w", dir, err)
	}
	return true, nil
}

// removeLeftovers deletes .building-* directories of killed builds; the
// caller holds the build lock, so none of them is in use.
func removeLeftovers(dataDir string) error {
	entries, err := os.ReadDir(indexDir(dataDir))
	if err != nil {
		return fmt.Errorf("list index dir: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), buildingPrefix) {
			if err := os.RemoveAll(filepath.Join(indexDir(dataDir), e.Name())); err != nil {
				return fmt.Errorf("remove leftover build %q: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// A build publishes in three steps: it writes the name of the generation
// into PUBLISHING, renames the build directory to that name and writes
// CURRENT, then removes PUBLISHING. A kill between the rename and CURRENT
// leaves a generation newer than CURRENT that was never published; only
// PUBLISHING tells it apart from a newer generation an operator rolled
// CURRENT back from, which is kept.

// sweepOrphan removes the generation PUBLISHING names unless CURRENT names
// it or a process has it open, then PUBLISHING itself. The caller holds the
// build lock, so no build is publishing meanwhile. It returns the name of
// the removed generation, if any.
func sweepOrphan(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(indexDir(dataDir), publishingName))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("read %s: %w", publishingName, err)
	}
	name := strings.TrimSpace(string(b))
	var removed string
	current, err := readCurrent(dataDir)
	if err != nil && !errors.Is(err, ErrNoGeneration) {
		return "", err
	}
	if validGenerationName(name) && name != current {
		dir := filepath.Join(indexDir(dataDir), name)
		if _, err := os.Stat(dir); err == nil {
			ok, err := removeUnusedGeneration(dir)
			if err != nil || !ok {
				return "", err // in use: leave both for a later sweep
			}
			removed = name
		}
	}
	return removed, removePublishing(dataDir)
}

func removePublishing(dataDir string) error {
	err := os.Remove(filepath.Join(indexDir(dataDir), publishingName))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", publishingName, err)
	}
	return atomicfile.SyncDir(indexDir(dataDir))
}

// sweepOrphanUnlessBuilding takes the build lock without waiting and sweeps;
// while a build holds the lock, the sweep is left to it.
func sweepOrphanUnlessBuilding(dataDir string) (string, error) {
	lock, ok, err := lockFile(filepath.Join(indexDir(dataDir), lockName), syscall.LOCK_EX)
	if err != nil || !ok {
		return "", err
	}
	defer lock.Close()
	return sweepOrphan(dataDir)
}
