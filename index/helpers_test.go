package index

import (
	"companydocs/internal/realdata"

	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"companydocs"
	"companydocs/register"
)

// ocRecord is the part of an OffeneRegister record the tests need.
type ocRecord struct {
	CompanyNumber     string `json:"company_number"`
	Name              string `json:"name"`
	CurrentStatus     string `json:"current_status"`
	RegisteredAddress string `json:"registered_address"`
	RetrievedAt       string `json:"retrieved_at"`
	PreviousNames     []struct {
		CompanyName string `json:"company_name"`
	} `json:"previous_names"`
	Officers []struct {
		Name     string `json:"name"`
		Position string `json:"position"`
	} `json:"officers"`
	AllAttributes struct {
		RegisteredOffice string          `json:"registered_office"`
		AdditionalData   map[string]bool `json:"additional_data"`
	} `json:"all_attributes"`
}

func (r ocRecord) profile() (*companydocs.Profile, bool) {
	ref, err := register.ParseCompanyNumber(r.CompanyNumber)
	if err != nil || strings.TrimSpace(r.Name) == "" {
		return nil, false
	}
	p := &companydocs.Profile{
		ID:       companydocs.ProfileID(ref),
		Source:   companydocs.SourceRegistryCache,
		Ref:      ref,
		Name:     strings.TrimSpace(r.Name),
		Seat:     r.AllAttributes.RegisteredOffice,
		Address:  r.RegisteredAddress,
		Removed:  r.CurrentStatus == "removed",
		Verified: true,
	}
	p.RetrievedAt, _ = time.Parse(time.RFC3339, r.RetrievedAt)
	for _, pn := range r.PreviousNames {
		p.PreviousNames = append(p.PreviousNames, pn.CompanyName)
	}
	for _, o := range r.Officers {
		p.Officers = append(p.Officers, companydocs.Officer{Name: o.Name, Position: o.Position})
	}
	for _, d := range []companydocs.DocumentType{companydocs.DocumentAD, companydocs.DocumentCD} {
		if r.AllAttributes.AdditionalData[string(d)] {
			p.Documents = append(p.Documents, d)
		}
	}
	return p, true
}

// readProfiles reads up to n records from an OffeneRegister JSONL stream.
func readProfiles(tb testing.TB, r io.Reader, n int) []*companydocs.Profile {
	tb.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var out []*companydocs.Profile
	for len(out) < n && sc.Scan() {
		var rec ocRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatalf("decode record: %v", err)
		}
		if p, ok := rec.profile(); ok {
			out = append(out, p)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var (
	realOnce     sync.Once
	realProfiles []*companydocs.Profile
)

// realSampleSize is the number of chunk records the tests index besides the
// 665 fixtures: enough for ranking to mean something, small enough for -race.
const realSampleSize = 3000

// loadRealProfiles returns the fixture records plus the first records of a
// chunk of the real dump, deduplicated by id (later records win, as in an
// ingest). Callers must not modify the profiles.
func loadRealProfiles(tb testing.TB) []*companydocs.Profile {
	tb.Helper()
	realOnce.Do(func() {
		realProfiles = dedupe(append(
			readFile(tb, realdata.Path(tb, "offeneregister", "fixtures_665.jsonl"), 1000),
			readFile(tb, realdata.Chunk(tb, "ocdata.chunk1.jsonl.bz2", realSampleSize), realSampleSize)...))
	})
	if len(realProfiles) < 1000 {
		tb.Fatalf("only %d real profiles parsed: register number parsing is not available", len(realProfiles))
	}
	return realProfiles
}

// readChunk reads n profiles from a chunk of the real dump: the repository
// holds the first 50,000 lines of chunk 13; the benchmarks that read more
// need the national data.
func readChunk(tb testing.TB, chunk string, n int) []*companydocs.Profile {
	return dedupe(readFile(tb, realdata.Chunk(tb, chunk, n), n))
}

func readFile(tb testing.TB, path string, n int) []*companydocs.Profile {
	tb.Helper()
	return readProfiles(tb, realdata.Open(tb, path), n)
}

func dedupe(ps []*companydocs.Profile) []*companydocs.Profile {
	at := make(map[string]int, len(ps))
	var out []*companydocs.Profile
	for _, p := range ps {
		if i, ok := at[p.ID]; ok {
			out[i] = p
			continue
		}
		at[p.ID] = len(out)
		out = append(out, p)
	}
	return out
}

// mustBuild builds and publishes a generation of ps in dataDir.
func mustBuild(tb testing.TB, dataDir string, ps []*companydocs.Profile) Meta {
	tb.Helper()
	return mustBuildBatches(tb, dataDir, ps, 700)
}

// mustBuildBatches is mustBuild with batches of batchSize profiles.
func mustBuildBatches(tb testing.TB, dataDir string, ps []*companydocs.Profile, batchSize int) Meta {
	tb.Helper()
	return mustBuildWith(tb, dataDir, ps, BuilderOptions{BatchSize: batchSize})
}

// mustBuildWith is mustBuild with opts.
func mustBuildWith(tb testing.TB, dataDir string, ps []*companydocs.Profile, opts BuilderOptions) Meta {
	tb.Helper()
	b, err := NewBuilder(dataDir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range ps {
		if err := b.Put(p); err != nil {
			tb.Fatal(err)
		}
	}
	m, err := b.Commit(Meta{Sources: []string{"test"}, Summary: "test build"})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// mustOpenCurrent opens the generation CURRENT names and checks its profile
// store on cleanup.
func mustOpenCurrent(tb testing.TB, dataDir string) *Generation {
	tb.Helper()
	name, err := readCurrent(dataDir)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := Open(filepath.Join(indexDir(dataDir), name))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		for _, db := range g.store.dbs {
			checkStore(tb, db)
		}
		if err := g.Close(); err != nil {
			tb.Error(err)
		}
	})
	return g
}

// checkStore runs bbolt's consistency check.
func checkStore(tb testing.TB, db *bolt.DB) {
	tb.Helper()
	err := db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			tb.Errorf("profile store inconsistent: %v", err)
		}
		return nil
	})
	if err != nil {
		tb.Error(err)
	}
}

// sharedGeneration is one generation of the real sample, built once and
// shared by the read-only tests of the package.
var (
	sharedOnce sync.Once
	sharedDir  string
	sharedGen  *Generation
	sharedErr  error
)

func sharedGeneration(tb testing.TB) *Generation {
	tb.Helper()
	ps := loadRealProfiles(tb)
	sharedOnce.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "index-test-")
		if sharedErr != nil {
			return
		}
		mustBuild(tb, sharedDir, ps)
		var name string
		if name, sharedErr = readCurrent(sharedDir); sharedErr == nil {
			sharedGen, sharedErr = Open(filepath.Join(indexDir(sharedDir), name))
		}
	})
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return sharedGen
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedGen != nil {
		sharedGen.Close()
	}
	if benchGen != nil {
		benchGen.Close()
	}
	for _, dir := range []string{sharedDir, benchDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// readSHA256 returns the size and SHA-256 (hex) of the file at path, read
// whole now: a test that looks for changed bytes must not be answered
// from what the process remembers (internal/filesum).
func readSHA256(path string) (int64, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	return n, hex.EncodeToString(h.Sum(nil)), err
}
