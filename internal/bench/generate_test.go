package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"companydocs"
	"companydocs/ingest"
	"companydocs/register"
)

func generate(tb testing.TB, m *Model, opts GenOptions) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := Generate(m, opts, &buf); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestGenerateIsDeterministic(t *testing.T) {
	m := mustModel(t)
	base := GenOptions{Seed: 7, Count: 2500, BlockSize: 300, Workers: 1}
	want := generate(t, m, base)
	t.Run("same seed, more workers, other block size", func(t *testing.T) {
		o := base
		o.Workers, o.BlockSize = 4, 1000
		if got := generate(t, m, o); !bytes.Equal(got, want) {
			t.Fatalf("output differs: %d vs %d bytes", len(got), len(want))
		}
	})
	t.Run("gzip members decompress to the same bytes", func(t *testing.T) {
		o := base
		o.Gzip, o.Workers = true, 3
		zr, err := gzip.NewReader(bytes.NewReader(generate(t, m, o)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("gzip output differs from plain output")
		}
	})
	t.Run("another seed gives other records", func(t *testing.T) {
		o := base
		o.Seed = 8
		if bytes.Equal(generate(t, m, o), want) {
			t.Fatal("seeds 7 and 8 gave the same corpus")
		}
	})
}

func decodeLines(tb testing.TB, data []byte) []Record {
	tb.Helper()
	var out []Record
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			tb.Fatalf("line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func TestGeneratedRecordsIngestAndNeverCollide(t *testing.T) {
	m := mustModel(t)
	data := generate(t, m, GenOptions{Seed: 3, Count: 4000, Workers: 2})
	realNumbers := map[string]bool{}
	for _, r := range realRecords(t) {
		realNumbers[r.CompanyNumber] = true
	}
	seen := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		p, err := ingest.DecodeOffeneRegisterLine(line)
		if err != nil {
			t.Fatalf("record %d does not ingest: %v\n%s", i, err, line)
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		ref, err := register.ParseCompanyNumber(r.CompanyNumber)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if p.ID != companydocs.ProfileID(ref) {
			t.Fatalf("record %d: ingest id %s, ProfileID of company number %s", i, p.ID, companydocs.ProfileID(ref))
		}
		if realNumbers[r.CompanyNumber] || seen[r.CompanyNumber] {
			t.Fatalf("record %d: company number %s collides", i, r.CompanyNumber)
		}
		seen[r.CompanyNumber] = true
	}
}

// shares returns the share of each key among the records.
func shares[T any](recs []T, key func(T) string) map[string]float64 {
	out := map[string]float64{}
	for _, r := range recs {
		out[key(r)] += 1 / float64(len(recs))
	}
	return out
}

func TestGeneratedDistributionsFollowTheRealOnes(t *testing.T) {
	m := mustModel(t)
	synth := decodeLines(t, generate(t, m, GenOptions{Seed: 11, Count: 6000, Workers: 2}))
	var real []Record
	for _, r := range realRecords(t) {
		real = append(real, *r)
	}
	typeOf := func(r Record) string { return r.AllAttributes.RegisterArt }
	formOf := func(r Record) string { _, f := SplitRawName(r.Name); return r.AllAttributes.RegisterArt + " " + f }
	for _, c := range []struct {
		what string
		key  func(Record) string
		tol  float64
	}{
		{"register type", typeOf, 0.03},
		{"legal-form spelling", formOf, 0.03},
		{"registrar", func(r Record) string { return r.AllAttributes.Registrar }, 0.03},
	} {
		want, got := shares(real, c.key), shares(synth, c.key)
		for k, w := range want {
			if w >= 0.02 && math.Abs(got[k]-w) > c.tol {
				t.Errorf("%s %q: synthetic share %.3f, real %.3f", c.what, k, got[k], w)
			}
		}
	}
	live := shares(synth, func(r Record) string { return r.CurrentStatus })[StatusLive]
	if live < 0.27 || live > 0.33 {
		t.Errorf("live share %.3f, want about 0.30", live)
	}
	checkVocabulary(t, synth)
}

// checkVocabulary makes sure names are not built from a tiny vocabulary:
// many distinct words, and few repeated names.
func checkVocabulary(t *testing.T, recs []Record) {
	words, names := map[string]int{}, map[string]int{}
	for _, r := range recs {
		names[r.Name]++
		for _, w := range strings.Fields(r.Name) {
			words[w]++
		}
	}
	if len(words) < len(recs)/3 {
		t.Errorf("%d distinct words in %d names: vocabulary too small", len(words), len(recs))
	}
	if len(names) < len(recs)*9/10 {
		t.Errorf("only %d distinct names among %d records", len(names), len(recs))
	}
}
