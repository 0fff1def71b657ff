package ingest

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"companydocs/internal/realdata"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t *testing.T, data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zipped(t *testing.T, member string, data []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("README.txt")
	w.Write([]byte("GLEIF golden copy"))
	w, _ = zw.Create(member)
	w.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestOpenDetectsFormatFromContent(t *testing.T) {
	fixtures := mustRead(t, fixturesFile(t))
	csvData := mustRead(t, gleifCSVFile(t))
	tests := []struct {
		name, path  string
		format      Format
		compression Compression
	}{
		{"bzip2 dump", sampleFile, FormatOffeneRegister, CompressionBzip2},
		{"plain dump", fixturesFile(t), FormatOffeneRegister, CompressionNone},
		{"gzip dump named .csv", writeTemp(t, "misnamed.csv", gzipped(t, fixtures)), FormatOffeneRegister, CompressionGzip},
		{"dump after blank lines", writeTemp(t, "blank.jsonl", append([]byte("\n\n  \n"), fixtures...)), FormatOffeneRegister, CompressionNone},
		{"GLEIF API JSONL", gleifAPIFile(t), FormatGLEIFJSON, CompressionNone},
		{"GLEIF golden copy", gleifCSVFile(t), FormatGLEIFCSV, CompressionNone},
		{"GLEIF golden copy zip", writeTemp(t, "golden.zip", zipped(t, "20260101-gleif-concatenated-file-lei2.csv", csvData)), FormatGLEIFCSV, CompressionZip},
		{"canonical", writeTemp(t, "c.jsonl", []byte(`{"format":"companydocs/v1","court":"D2601V","register_type":"HRB","register_number":"6684","name":"X GmbH","status":"active"}`+"\n")), FormatCanonical, CompressionNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(tt.path, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Format != tt.format || f.Compression != tt.compression {
				t.Errorf("format %q compression %q, want %q %q", f.Format, f.Compression, tt.format, tt.compression)
			}
		})
	}
}

func TestZippedGoldenCopyReadsLikeTheCSV(t *testing.T) {
	path := writeTemp(t, "golden.zip", zipped(t, "golden.csv", mustRead(t, gleifCSVFile(t))))
	a, b := newMemSink(), newMemSink()
	zipSum := mustRun(t, a, Options{}, fixturesFile(t), path)
	csvSum := mustRun(t, b, Options{}, fixturesFile(t), gleifCSVFile(t))
	if zipSum.GLEIF != csvSum.GLEIF || zipSum.GLEIF.Read != 210 || !reflect.DeepEqual(a.byID, b.byID) {
		t.Errorf("zip %+v, csv %+v", zipSum.GLEIF, csvSum.GLEIF)
	}
}

func TestParseFormatOverride(t *testing.T) {
	for _, s := range []string{"offeneregister", "canonical", "gleif-csv", "gleif-json"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if f, err := ParseFormat("auto"); err != nil || f != FormatAuto {
		t.Errorf("ParseFormat(auto) = %q, %v", f, err)
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) must fail")
	}
	// A forced format is used as given: the GLEIF API file read as a dump
	// has no company numbers, so every line is skipped and counted.
	sum, err := Run(context.Background(), []Input{{Path: gleifAPIFile(t), Format: FormatOffeneRegister}}, newMemSink(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Registry.Read != 400 || sum.Registry.Skipped != 400 || sum.Reason(KindSkipped, ReasonNoRegisterRef) != 400 {
		t.Errorf("registry counts = %+v", sum.Registry)
	}
}

// A damaged or foreign file stops the ingest with an error naming the file
// (and line), so that the caller publishes nothing.
func TestCorruptInputsAreFatal(t *testing.T) {
	sample := mustRead(t, sampleFile)
	fixtures := mustRead(t, fixturesFile(t))
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 0xff}, 500)...)
	tests := []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated bz2", sample[:len(sample)/2], []string{"truncated.jsonl.bz2", "line", "unexpected EOF"}},
		{"truncated gzip", func() []byte { g := gzipped(t, fixtures); return g[:len(g)/2] }(), []string{"truncated.jsonl.bz2", "line"}},
		{"PNG image", png, []string{"truncated.jsonl.bz2", "line 1", "not a known format"}},
		{"empty file", nil, []string{"truncated.jsonl.bz2", "empty"}},
		{"only blank lines", []byte("\n \n\n"), []string{"empty"}},
		{"text file", []byte("Handelsregister\nHRB 6684\n"), []string{"line 1", "not a known format"}},
		{"dump with a garbage tail", append(append([]byte{}, fixtures[:20000]...), bytes.Repeat([]byte("{not json}\n"), 300)...), []string{"not valid records", "line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeTemp(t, "truncated.jsonl.bz2", tt.data)
			_, err := Run(context.Background(), inputs(path), newMemSink(), Options{})
			if err == nil {
				t.Fatal("Run succeeded on a damaged file")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestGarbageLinesAreSkippedAndCounted(t *testing.T) {
	lines := bytes.SplitAfter(mustRead(t, fixturesFile(t)), []byte("\n"))
	var data []byte
	for i, l := range lines {
		data = append(data, l...)
		if i == 49 {
			data = append(data, "{\"company_number\": \"K1101R_HRB1\", \"name\": trunc\n"...) // line 51
			data = append(data, "\x00\x01binary noise\n"...)                                  // line 52
		}
	}
	sink := newMemSink()
	sum := mustRun(t, sink, Options{}, writeTemp(t, "garbage.jsonl", data))
	if sum.Registry.Read != 667 || sum.Registry.Indexed != 665 || sum.Registry.Skipped != 2 || sum.Reason(KindSkipped, ReasonInvalidJSON) != 2 {
		t.Errorf("registry counts = %+v", sum.Registry)
	}
	rs := sum.reasonIndex[KindSkipped+"\x00"+ReasonInvalidJSON]
	if rs.Examples[0].Line != 51 || rs.Examples[1].Line != 52 {
		t.Errorf("skipped lines reported at %+v, want 51 and 52", rs.Examples)
	}
}

func TestLongLinesAreSkippedNotHeld(t *testing.T) {
	data := mustRead(t, fixturesFile(t))
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	long := 0
	for _, l := range lines {
		if len(l) > 4096 {
			long++
		}
	}
	if long == 0 || long == len(lines) {
		t.Fatalf("fixtures have %d lines over 4096 bytes; the test needs some, not all", long)
	}
	sum := mustRun(t, newMemSink(), Options{MaxLineBytes: 4096}, fixturesFile(t))
	if sum.Registry.Read != 665 || sum.Registry.Skipped != long || sum.Reason(KindSkipped, ReasonLineTooLong) != long {
		t.Errorf("registry counts = %+v, want %d lines skipped as too long", sum.Registry, long)
	}
}

func TestLineReaderLastLineWithoutNewline(t *testing.T) {
	path := writeTemp(t, "x.jsonl", bytes.TrimRight(mustRead(t, fixturesFile(t)), "\n"))
	if sum := mustRun(t, newMemSink(), Options{}, path); sum.Registry.Indexed != 665 {
		t.Errorf("indexed %d, want 665", sum.Registry.Indexed)
	}
}

func TestRealChunkPrefix(t *testing.T) {
	// The first 20,000 lines of chunk 1 hold 20,000 distinct company
	// numbers (fewer lines under the race detector, which is slow).
	n := chunkPrefixLines
	path := realdata.Chunk(t, "ocdata.chunk1.jsonl.bz2", n)
	var reports []Progress
	sink := newMemSink()
	sum := mustRun(t, sink, Options{MaxRecords: n, ProgressInterval: 1, Progress: func(p Progress) { reports = append(reports, p) }}, path)
	if want := (RegistryCounts{Read: n, Indexed: n}); sum.Registry != want {
		t.Errorf("registry counts = %+v, want %+v", sum.Registry, want)
	}
	if len(reports) < 2 {
		t.Fatalf("progress reported %d times", len(reports))
	}
	last := reports[len(reports)-1]
	if !last.FileDone || last.Records != n || last.TotalBytes != 899836 || last.Bytes <= 0 || last.Bytes > last.TotalBytes || last.RecordsPerSec <= 0 {
		t.Errorf("last progress = %+v", last)
	}
	for i := 1; i < len(reports); i++ {
		if reports[i].Records < reports[i-1].Records || reports[i].Bytes < reports[i-1].Bytes {
			t.Errorf("progress went backwards: %+v then %+v", reports[i-1], reports[i])
		}
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, inputs(sampleFile), newMemSink(), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
