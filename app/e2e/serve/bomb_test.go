package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"companydocs/data"
	"companydocs/internal/e2e"
)

// ingestMemoryCeiling is the ingest's documented peak resident memory
// (docs/benchmarks-history.md, "Ingest: peak memory under 3 GiB").
const ingestMemoryCeiling = 3 << 30

// gzipMember compresses b into one gzip member. A gzip file may hold many
// members one after the other (RFC 1952); readers decompress them as one
// stream, so a bomb is written as one member of a megabyte repeated,
// which costs the test nothing and the reader the full size.
func gzipMember(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// writeBomb writes head, then size bytes of filler, then tail, as a gzip
// file in dir.
func writeBomb(tb testing.TB, dir, name, head string, filler byte, size int64, tail string) string {
	tb.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	const block = 1 << 20
	w := bufio.NewWriter(f)
	w.Write(gzipMember(tb, []byte(head)))
	member := gzipMember(tb, bytes.Repeat([]byte{filler}, block))
	for n := int64(0); n < size; n += block {
		w.Write(member)
	}
	w.Write(gzipMember(tb, []byte(tail)))
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// bombNeighbours returns the first n lines of the embedded OffeneRegister
// sample and the header and first n rows of the embedded GLEIF CSV.
func bombNeighbours(tb testing.TB, n int) (register, gleif []string) {
	tb.Helper()
	for _, line := range e2e.SampleLines(tb, n) {
		register = append(register, string(line))
	}
	gleif = strings.SplitN(string(data.LEISample), "\n", n+2)[:n+1]
	return register, gleif
}

// TestHostileDumpsStayUnderTheMemoryCeiling ingests a gzip JSONL file and
// a gzip GLEIF CSV file that each carry one field of bombSize bytes
// between real records, in a child process (the real ingest command): the
// bomb rows are skipped and reported with file and line, the real records
// around them are ingested, and the child's peak resident memory stays
// under the documented ceiling and under the size of the bomb field (it
// never held the field).
func TestHostileDumpsStayUnderTheMemoryCeiling(t *testing.T) {
	dir := t.TempDir()
	register, gleif := bombNeighbours(t, 20)
	jsonlBomb := writeBomb(t, dir, "register-bomb.jsonl.gz",
		strings.Join(register[:10], "\n")+"\n"+`{"company_number":"R1101_HRB 999999","name":"`, 'A', bombSize,
		`"}`+"\n"+strings.Join(register[10:], "\n")+"\n")
	csvBomb := writeBomb(t, dir, "gleif-bomb.csv.gz",
		strings.Join(gleif[:6], "\n")+"\n"+`"529900BOMB00000000000","`, ',', bombSize,
		"\n\"\"\"\n"+strings.Join(gleif[6:], "\n")+"\n")
	registerFile := filepath.Join(dir, "register.jsonl")
	if err := os.WriteFile(registerFile, []byte(strings.Join(register, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, reason, line string
		args                     []string
	}{
		{"JSONL", jsonlBomb, "line longer than the maximum line size", ":11", nil},
		{"GLEIF CSV", csvBomb, "row longer than the maximum line size", ":7", []string{registerFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, stdout, stderr := e2e.IngestCommand(t, filepath.Join(dir, tc.name), append(tc.args, tc.file)...)
			if err := cmd.Run(); err != nil {
				t.Fatalf("ingest: %v\n%s\n%s", err, stdout, stderr)
			}
			peak := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
			t.Logf("%s bomb: field of %d MiB, gzip file of %d KiB, peak RSS of the ingest %d MiB", tc.name, bombSize>>20, e2e.FileSize(t, tc.file)>>10, peak>>20)
			if peak >= ingestMemoryCeiling || peak >= bombSize {
				t.Errorf("peak RSS %d MiB, want under %d MiB (the ceiling) and under the %d MiB field", peak>>20, ingestMemoryCeiling>>20, bombSize>>20)
			}
			out := stdout.String()
			if !strings.Contains(out, tc.reason) || !strings.Contains(out, filepath.Base(tc.file)+tc.line) {
				t.Errorf("the summary does not report %q at %s%s:\n%s", tc.reason, filepath.Base(tc.file), tc.line, out)
			}
			wantIndexed(t, out, tc.name)
		})
	}
}

// wantIndexed checks that the real records around a bomb were ingested:
// every one of the 20 register lines, and every one of the 20 GLEIF rows
// (as discovery profiles: they match none of the 20 register entries).
func wantIndexed(t *testing.T, summary, name string) {
	t.Helper()
	flat := strings.Join(strings.Fields(summary), " ")
	want := []string{"registry records read 21 indexed 20 merged 0 skipped 1", "with 20 profiles"}
	if name == "GLEIF CSV" {
		want = []string{"registry records read 20 indexed 20", "GLEIF records read 21", "discovery 20", "skipped 1 ", "with 40 profiles"}
	}
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("the summary does not say %q:\n%s", w, summary)
		}
	}
}

const bombSize = 1 << 30

// TestManyLargeValidLinesStayUnderTheMemoryCeiling ingests, in a child
// process, a gzip JSONL file of valid register records of just under the
// line limit each (thousands of officers, every field of a real size): each
// is read and indexed, and the child's peak resident memory stays under
// the ceiling, held by a few of them at a time rather than by how many
// there are (the read-ahead and the index batches end by bytes as well as
// by count). Under the race detector the child's memory says nothing
// about the ingest's, so make test runs this test once more without it.
func TestManyLargeValidLinesStayUnderTheMemoryCeiling(t *testing.T) {
	if raceEnabled {
		t.Skip("memory is measured without the race detector: make test runs this test in a second, plain go test")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "large-records.jsonl.gz")
	writeLargeRecords(t, path)
	cmd, stdout, stderr := e2e.IngestCommand(t, filepath.Join(dir, "data"), "--format", "offeneregister", path)
	if err := cmd.Run(); err != nil {
		t.Fatalf("ingest: %v\n%s\n%s", err, stdout, stderr)
	}
	peak := int64(cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) << 10
	t.Logf("%d records of %d officers (%d MiB of JSON in all): peak RSS of the ingest %d MiB", largeLines, largeOfficers, e2e.FileSize(t, path)>>20, peak>>20)
	if peak >= ingestMemoryCeiling {
		t.Errorf("peak RSS %d MiB, want under %d MiB", peak>>20, ingestMemoryCeiling>>20)
	}
	if flat := strings.Join(strings.Fields(stdout.String()), " "); !strings.Contains(flat, fmt.Sprintf("with %d profiles", largeLines)) {
		t.Errorf("not every large record was indexed:\n%s", stdout)
	}
}

// writeLargeRecords writes largeLines register records of largeOfficers
// officers each as gzip JSONL.
func writeLargeRecords(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	w := bufio.NewWriter(zw)
	for i := range largeLines {
		fmt.Fprintf(w, `{"company_number":"R1101_HRB%d","name":"Großauftrag %d Bau GmbH","officers":[`, 900000+i, i)
		for j := range largeOfficers {
			if j > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `{"name":"Vorname%d Nachname%d","position":"Geschäftsführer","other_attributes":{"city":"Berlin"}}`, j%500, (i*largeOfficers+j)%20000)
		}
		w.WriteString("]}\n")
	}
	if err := errors.Join(w.Flush(), zw.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
}

// largeLines records of largeOfficers officers each are lines of about
// 1 MiB (the line limit; 16 times the longest line of the real dumps, whose
// most officers are 271): 400 MiB of records in all, which took the
// ingest to 3,581 MiB before the batches ended by bytes.
const (
	largeLines    = 400
	largeOfficers = 9000
)
