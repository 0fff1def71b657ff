//go:build !race

package search

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"companydocs/internal/e2e"
	"companydocs/sheet"
)

// hostileSize is the size of a hostile row, header or cell in the tests
// below: far above every cap (1 MiB at most), so that a reader that held
// it would show in the peak.
const hostileSize = 1 << 30

// resolveMemoryCeiling is the peak resident memory a resolve run on the
// tests' data directory must stay under, whatever its input.
const resolveMemoryCeiling = 200 << 20

// filler is an io.Reader of n bytes of block repeated, made as it is read.
type filler struct {
	block []byte
	n     int64
	at    int
}

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && f.n > 0 {
		c := copy(p[k:min(len(p), k+int(min(f.n, int64(len(f.block)-f.at))))], f.block[f.at:])
		k, f.n, f.at = k+c, f.n-int64(c), (f.at+c)%len(f.block)
	}
	return k, nil
}

// headWriter keeps the first 64 KiB written to it and counts the rest.
type headWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
	n   int64
}

func (w *headWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n += int64(len(p))
	if room := 64<<10 - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (w *headWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// sheetText is rows as CSV text.
func sheetText(t testing.TB, rows [][]string) string {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// resolveRun is the outcome of a resolve process.
type resolveRun struct {
	code   int
	stderr *headWriter
	peak   int64 // bytes of resident memory, rusage's maxrss
	took   time.Duration
}

// runResolveChild runs the real command in a child process with stdin
// streamed from in, and measures its peak resident memory (through a
// small process in between: e2e.PeakFileEnv says why).
func runResolveChild(t *testing.T, in io.Reader, args ...string) resolveRun {
	t.Helper()
	peakFile := filepath.Join(t.TempDir(), "peak")
	cmd := exec.Command(os.Args[0], append([]string{"resolve"}, args...)...)
	cmd.Env = append(os.Environ(), e2e.PeakFileEnv+"="+peakFile)
	stderr := &headWriter{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, io.Discard, stderr
	started := time.Now()
	err := cmd.Run()
	r := resolveRun{code: cmd.ProcessState.ExitCode(), stderr: stderr, took: time.Since(started)}
	peak, perr := os.ReadFile(peakFile)
	if r.code < 0 || perr != nil {
		t.Fatalf("resolve: %v, %v; stderr %.2000s", err, perr, stderr)
	}
	if r.peak, err = strconv.ParseInt(string(peak), 10, 64); err != nil {
		t.Fatal(err)
	}
	return r
}

// plainPeak is the peak resident memory of a run on the real rows alone,
// which a run with a hostile input among them must stay near: the
// hostile part is 1 GB, the caps 1 MiB at most.
var plainPeak int64

// checkRun checks a run's exit code, its peak memory, and that its
// stderr says want and quotes at most 200 characters of the input (none
// of the hostile part: the filler's byte repeated 201 times).
func checkRun(t *testing.T, r resolveRun, code int, want string, filler byte) {
	t.Helper()
	t.Logf("exit %d in %v, peak RSS %d MiB (%d MiB on the real rows alone), stderr %d bytes: %.300s",
		r.code, r.took.Round(time.Millisecond), r.peak>>20, plainPeak>>20, r.stderr.n, r.stderr)
	if r.code != code {
		t.Errorf("exit %d, want %d", r.code, code)
	}
	if r.peak >= resolveMemoryCeiling || r.peak > plainPeak+32<<20 {
		t.Errorf("peak RSS %d MiB, want under %d MiB and within 32 MiB of the real rows' %d MiB", r.peak>>20, resolveMemoryCeiling>>20, plainPeak>>20)
	}
	if !strings.Contains(r.stderr.String(), want) {
		t.Errorf("stderr %.500q does not say %q", r.stderr, want)
	}
	if r.stderr.n > 2000 || strings.Contains(r.stderr.String(), strings.Repeat(string(filler), 201)) {
		t.Errorf("stderr holds %d bytes, with more than 200 characters of the input: %.300q", r.stderr.n, r.stderr)
	}
}

// readOutput reads a resolve output file of at most 1 MiB.
func readOutput(t *testing.T, path string) [][]string {
	t.Helper()
	if size := e2e.FileSize(t, path); size > 1<<20 {
		t.Fatalf("the output holds %d MiB: a hostile row was written", size>>20)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return e2e.ReadSheet(t, b, ',')
}

// TestResolveHostileInputs runs the real command in a child process on
// hostile inputs streamed through stdin between real rows of the
// embedded sample: a row of a gigabyte without a line break, and one
// with a cell of a gigabyte, are refused in their own output line with
// their line number and the rows around them resolved; a header line of
// a gigabyte stops the run; a quote left open before 300 MB of rows stops
// the run naming the line it opened on, instead of merging the rows into
// one cell. The peak resident memory of each run stays under 200 MB and
// stderr quotes at most 200 characters of the input.
func TestResolveHostileInputs(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	rows := e2e.GermanExcelRows(recs, 20, 37)
	head, tail := sheetText(t, rows[:11]), sheetText(t, rows[11:])
	line := 1 + strings.Count(head, "\n") // the hostile row's line
	args := func(out string) []string {
		return []string{"--data-dir", dir, "--query", "Firma", "--city", "Ort", "--register", "Registernummer", "--output", out, "-"}
	}

	plain := runResolveChild(t, strings.NewReader(head+tail), args(filepath.Join(t.TempDir(), "plain.csv"))...)
	if plain.code != 0 {
		t.Fatalf("the real rows alone: exit %d, %s", plain.code, plain.stderr)
	}
	plainPeak = plain.peak

	t.Run("rows of a gigabyte", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.csv")
		longRow := &filler{block: append(bytes.Repeat([]byte("x"), 1023), ',')}
		longRow.n = hostileSize
		longCell := &filler{block: []byte("Müller ")}
		longCell.n = hostileSize / 4
		mid := strings.Index(tail[len(tail)/2:], "\n") + len(tail)/2 + 1
		in := io.MultiReader(strings.NewReader(head), longRow, strings.NewReader("\n"+tail[:mid]),
			longCell, strings.NewReader("\n"+tail[mid:]))
		r := runResolveChild(t, in, args(out)...)
		checkRun(t, r, 0, "", 'x')
		got := readOutput(t, out)
		if len(got) != len(rows)+2 {
			t.Fatalf("%d output lines, want the header, %d rows and the 2 refused ones", len(got), len(rows)-1)
		}
		// Each input line is a row: the output's row i is line i+1.
		cellLine := line + 1 + strings.Count(tail[:mid], "\n")
		wantRefusedRow(t, got, line-1, fmt.Sprintf("invalid_query: Line %d is longer than 1 MiB (--max-row-bytes)", line))
		wantRefusedRow(t, got, cellLine-1, fmt.Sprintf("invalid_query: Line %d has a cell longer than 64 KiB (--max-field-bytes)", cellLine))
		for i, row := range got[1:] {
			if i+2 != line && i+2 != cellLine && row[3] == "" {
				t.Errorf("the real row of line %d %q was not resolved", i+2, row)
			}
		}
	})

	t.Run("a header of a gigabyte", func(t *testing.T) {
		header := &filler{block: append(bytes.Repeat([]byte("y"), 1023), ',')}
		header.n = hostileSize
		in := io.MultiReader(strings.NewReader("Firma,Ort,Registernummer,"), header, strings.NewReader("\n"+tail))
		r := runResolveChild(t, in, args(filepath.Join(t.TempDir(), "out.csv"))...)
		checkRun(t, r, 2, "the header line is longer than 256 KiB (--max-header-bytes)", 'y')
	})

	t.Run("a quote left open before 300 MB of rows", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "out.csv")
		many := sheetText(t, e2e.GermanExcelRows(recs, 2000, 1)[1:])
		rest := &filler{block: []byte(many)}
		rest.n = 300 << 20
		in := io.MultiReader(strings.NewReader(head+`"Unclosed GmbH,Teningen,`+"\n"), rest)
		r := runResolveChild(t, in, args(out)...)
		checkRun(t, r, 1, fmt.Sprintf("the quote opened on line %d is not closed", line), 'x')
		if got := readOutput(t, out); len(got) != line-1 {
			t.Errorf("%d output lines, want the header and the %d rows before the quote", len(got), line-2)
		}
	})

	t.Run("--resume on an output holding a row of half a gigabyte", func(t *testing.T) {
		tmp := t.TempDir()
		in := filepath.Join(tmp, "in.csv")
		if err := os.WriteFile(in, []byte(head+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tmp, "out.csv")
		if _, _, msg, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Firma", "--output", out, in); code != 0 {
			t.Fatalf("exit %d, %s", code, msg)
		}
		whole, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		cut := bytes.Index(whole, []byte("\n")) + 1
		for range 5 {
			cut += bytes.Index(whole[cut:], []byte("\n")) + 1
		}
		writeHostileOutput(t, out, whole[:cut], &filler{block: append(bytes.Repeat([]byte("z"), 1023), ','), n: hostileSize / 2}, whole[cut:])
		size := e2e.FileSize(t, out)
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r := runResolveChild(t, f, "--data-dir", dir, "--query", "Firma", "--output", out, "--resume", "-")
		checkRun(t, r, 2, fmt.Sprintf("--resume: line 7 of %s is longer than", out), 'z')
		if e2e.FileSize(t, out) != size {
			t.Errorf("the damaged output was changed: %d bytes, was %d", e2e.FileSize(t, out), size)
		}
	})
}

// wantRefusedRow checks the output row i (0 the header) is a refused row:
// empty cells, reasons that start with reason, and not reviewed.
func wantRefusedRow(t *testing.T, out [][]string, i int, reason string) {
	t.Helper()
	if i >= len(out) {
		t.Fatalf("no output row %d: %d rows", i, len(out))
	}
	row := out[i]
	at := len(row) - len(sheet.NotReviewed) - 1 // the reasons
	if strings.Join(row[:at], "") != "" || !strings.HasPrefix(row[at], reason) || !slices.Equal(row[at+1:], sheet.NotReviewed) {
		t.Errorf("output row %d is %.300q, want empty cells and the reason %q", i, row, reason)
	}
}

// writeHostileOutput writes head, the filler as one more line, then
// tail, to path.
func writeHostileOutput(t *testing.T, path string, head []byte, f *filler, tail []byte) {
	t.Helper()
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	w := bufio.NewWriterSize(file, 1<<20)
	w.Write(head)
	if _, err := io.Copy(w, f); err != nil {
		t.Fatal(err)
	}
	w.WriteString("\n")
	w.Write(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}
