package search

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"companydocs/app"
	"companydocs/httpapi"
	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/resolver"
	"companydocs/sheet"

	"github.com/creack/pty"
)

// TestResolveGermanExcelSheet resolves a semicolon CSV with a BOM (as
// German Excel saves "CSV UTF-8") of 120 real companies of the embedded
// sample, names with typos among them: the output keeps the delimiter,
// the BOM and every input cell, appends the result columns, and each
// row's candidate is the one "companydocs search" ranks first for the
// same search (its confidence with a decimal comma, the file being
// separated by semicolons); the exact names find their own register
// entry.
func TestResolveGermanExcelSheet(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "firmen.csv")
	rows := e2e.GermanExcelRows(recs, 120, 31)
	e2e.WriteSheet(t, in, ';', true, rows)

	stdout, stderr, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "firma", "--city", "Ort", "--register", "Registernummer", in)
	// stderr holds the run's summary alone: what the 120 rows came to
	if code != 0 || !regexp.MustCompile(`^120 rows: \d+ found exact, \d+ to review, \d+ not found\.\n$`).MatchString(stderr) {
		t.Fatalf("exit %d, stderr %q, %s; want the summary of 120 rows alone", code, stderr, line)
	}
	if !strings.HasPrefix(stdout, sheet.BOM+"Firma;Ort;Registernummer;profile_id;name;court;registry_number;") {
		t.Fatalf("output starts %q, want the BOM, the input's header and the result columns, separated by ;", stdout[:min(len(stdout), 120)])
	}
	out := e2e.ReadSheet(t, []byte(strings.TrimPrefix(stdout, sheet.BOM)), ';')
	if len(out) != len(rows) {
		t.Fatalf("%d output lines, want %d", len(out), len(rows))
	}
	want := append(append([]string(nil), rows[0]...), sheet.ResultColumns...)
	if !slices.Equal(out[0], want) {
		t.Errorf("header %q, want %q", out[0], want)
	}

	live, err := index.OpenLive(dir, index.LiveOptions{PollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	exact, found := 0, 0
	for i, row := range out[1:] {
		in := rows[i+1]
		if !slices.Equal(row[:3], in) {
			t.Fatalf("row %d starts %q, want the input's cells %q", i+1, row[:3], in)
		}
		res, err := app.LiveSearcher{Live: live}.Search(context.Background(), resolver.Request{Query: in[0], Limit: resolver.DefaultLimit,
			Properties: resolver.Properties{City: in[1], RegisterNumber: in[2]}})
		if err != nil {
			t.Fatal(err)
		}
		if wantCells := bestCells(res, "en", ','); !slices.Equal(row[3:], wantCells) {
			t.Errorf("row %d (%q): %q, want search's first candidate %q", i+1, in[0], row[3:], wantCells)
		}
		if rec := recs[(i*31)%len(recs)]; in[0] == rec.Name {
			exact++
			if row[6] == e2e.RegisterNumberOf(rec) && row[5] == rec.Attributes.Registrar {
				found++
			}
		}
	}
	if exact == 0 || found < exact*9/10 {
		t.Errorf("%d of %d rows with the exact name found their own register entry, want at least 90%%", found, exact)
	}
}

// TestResolveTabsFromStdin reads a TSV from stdin without a BOM and
// writes a TSV; a column missing from the header is a usage error that
// names the headers found; an interrupted run says how to resume.
func TestResolveTabsFromStdin(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	rows := [][]string{{"Name", "Seat"}}
	for _, r := range recs[:20] {
		rows = append(rows, []string{r.Name, r.Attributes.Office})
	}
	path := filepath.Join(t.TempDir(), "in.tsv")
	e2e.WriteSheet(t, path, '\t', false, rows)
	stdin, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	c := sheet.Config{Local: app.LocalSearcher(dir, io.Discard), Query: "Name", Properties: make([]string, len(sheet.PropertyColumns)), Workers: 2, BatchSize: sheet.DefaultBatchSize, Mode: resolver.ModeStandard,
		Caps: sheet.Caps{Field: sheet.DefaultMaxFieldBytes, Row: sheet.DefaultMaxRowBytes, Header: sheet.DefaultMaxHeaderBytes}}
	var out bytes.Buffer
	if err := c.Run(context.Background(), stdin, "", &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	got := e2e.ReadSheet(t, out.Bytes(), '\t')
	if len(got) != len(rows) || len(got[0]) != 2+len(sheet.ResultColumns) || got[1][3] != recs[0].Name {
		t.Fatalf("output %q, want %d rows of %d tab-separated cells, the first naming %q", got, len(rows), 2+len(sheet.ResultColumns), recs[0].Name)
	}

	_, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Name", "--city", "Ort", path)
	if code != 2 || !strings.Contains(line, `--city "Ort" is not a column of the input; its header has "Name", "Seat"`) {
		t.Errorf("exit %d, %q: want a usage error naming the headers", code, line)
	}

	// Interrupted (Ctrl-C), the run says how to continue.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := stdin.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	err = c.Run(ctx, stdin, "", io.Discard, io.Discard)
	if err == nil || !regexp.MustCompile(`^interrupted after \d+ rows: run again with --output FILE --resume`).MatchString(err.Error()) || app.ExitCode(err) != 1 {
		t.Errorf("interrupted run: %v (exit %d), want the sentence that says how to resume and exit 1", err, app.ExitCode(err))
	}
}

// TestResolveThroughServer resolves the German Excel sheet through a
// server's batch endpoint on 127.0.0.1 in batches of 25: the file is the
// in-process run's, byte for byte. The server's search budget is 40 a
// second in bursts of 20, so batches are refused with 429 and
// Retry-After until paid for: the run waits them out.
func TestResolveThroughServer(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "firmen.csv")
	e2e.WriteSheet(t, in, ';', true, e2e.GermanExcelRows(recs, 120, 29))
	args := []string{"resolve", "--query", "Firma", "--city", "Ort", "--register", "Registernummer", "--batch-size", "25", in}
	with := func(flag, value string) []string { return append([]string{args[0], flag, value}, args[1:]...) }

	local, _, line, code := e2e.RunCLI(t, with("--data-dir", dir)...)
	if code != 0 {
		t.Fatalf("in process: exit %d, %s", code, line)
	}
	s := e2e.StartServer(t, dir, "--search-rate", "40", "--search-burst", "20")
	started := time.Now()
	remote, _, line, code := e2e.RunCLI(t, with("--server", s.Base)...)
	if code != 0 {
		t.Fatalf("through the server: exit %d, %s", code, line)
	}
	if remote != local {
		t.Errorf("through the server:\n%s\nin process:\n%s", remote, local)
	}
	if took := time.Since(started); took < 2*time.Second {
		t.Errorf("120 rows at 40 searches a second took %v: the budget was not applied", took)
	}
	if n := strings.Count(s.Logs.String(), `"status":429`); n == 0 {
		t.Errorf("no batch was refused with 429: the test did not exercise Retry-After")
	}
}

// TestResolveProgressOnTerminal runs resolve with stderr on a terminal (a
// pseudo-terminal) over 1,000 real rows: stderr shows the progress bar
// with the rows done of the rows the file holds, counted, their rate and
// the bar full; stdout holds the CSV alone.
func TestResolveProgressOnTerminal(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 1000, 3))
	terminal, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer terminal.Close()
	cmd, stdout, _ := e2e.CompanydocsCommand(t, "resolve", "--data-dir", dir, "--query", "Firma", "--city", "Ort", in)
	cmd.Stderr = tty
	shown := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(terminal) // until the terminal is closed: EIO
		shown <- b
	}()
	err = cmd.Run()
	tty.Close()
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	var screen []byte
	select {
	case screen = <-shown:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	// The bar's last state, then the summary on a line of its own.
	bar, summary, _ := bytes.Cut(screen, []byte("\n1000 rows: "))
	last := string(bar[bytes.LastIndexByte(bytes.TrimRight(bar, "\r\n "), '\r')+1:])
	if !strings.Contains(last, "1000 of 1000 rows") || !strings.Contains(last, "rows/s") || !strings.Contains(last, "100%") {
		t.Errorf("the bar last showed %q, want it at 100%% with 1000 of 1000 rows and their rate", last)
	}
	if !regexp.MustCompile(`^\d+ found exact, \d+ to review, \d+ not found\.\r?\n$`).Match(summary) {
		t.Errorf("the terminal ends with %q, want the summary of the 1000 rows", summary)
	}
	if n := bytes.Count(stdout.Bytes(), []byte("\n")); n != 1001 || bytes.Contains(stdout.Bytes(), []byte("rows/s")) {
		t.Errorf("stdout holds %d lines (want 1,001) or the bar", n)
	}
}

// TestResolveRetriesUnansweredSearches: a server whose batches run out of
// time (a batch time of 1 ns, searches that end at their deadline)
// answers every search service_unavailable; resolve sends them again
// (five times, waiting longer each time) instead of writing the error as
// the rows' result, then stops with a sentence that says what to do.
func TestResolveRetriesUnansweredSearches(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 30, 11))
	s := e2e.StartServer(t, dir)
	cfg := httpapi.DefaultConfig()
	cfg.SearchRate, cfg.BatchTimeout = 0, time.Nanosecond
	deps := s.Server.Deps
	deps.Searcher = lateSearcher{deps.Searcher}
	hurried, err := httpapi.NewServer(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hurried.Serve(ln)
	t.Cleanup(func() { hurried.Shutdown(context.Background()) })
	defer func(base time.Duration) { sheet.RetryBase = base }(sheet.RetryBase)
	sheet.RetryBase = time.Millisecond

	out := filepath.Join(t.TempDir(), "out.csv")
	_, _, line, code := e2e.RunCLI(t, "resolve", "--server", "http://"+ln.Addr().String(), "--query", "Firma", "--batch-size", "10", "--output", out, in)
	if code != 1 || !strings.Contains(line, "the server did not answer 10 of a batch's searches in time, 6 times (This search was not answered within the batch's time") ||
		!strings.Contains(line, "send smaller batches (--batch-size)") {
		t.Errorf("exit %d, %q; want exit 1 and the sentence on unanswered searches", code, line)
	}
	if got := e2e.Lines(out); got != 1 {
		t.Errorf("%d lines written, want the header alone: no unanswered row is written", got)
	}
}

// lateSearcher is a server's searcher on a machine too slow for the
// batch's time: every search runs until its deadline.
type lateSearcher struct{ httpapi.Searcher }

func (s lateSearcher) Search(ctx context.Context, _ resolver.Request) (*resolver.Result, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestResolveWaitsOutABusyServer: a server that resolves as many batches
// as it takes answers 503 with Retry-After; that is pacing, waited out
// however often it comes (here more often than an unavailable server is
// tried), and the file is written whole. Each wait is said on stderr,
// with how long and the rows done of the rows the file holds.
func TestResolveWaitsOutABusyServer(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 12, 11))
	proxy := pacingProxy(t, e2e.StartServer(t, dir).Base, func(n int32) bool { return n <= sheet.MaxUnavailableRetries+1 }, http.StatusServiceUnavailable,
		`{"error":{"code":"service_unavailable","message":"This server is resolving 4 batches, the most it takes at once. Retry in 1 s."}}`)
	out := filepath.Join(t.TempDir(), "out.csv")
	_, stderr, line, code := e2e.RunCLI(t, "resolve", "--server", proxy.URL, "--query", "Firma", "--workers", "1", "--output", out, in)
	if code != 0 || e2e.Lines(out) != 13 {
		t.Errorf("exit %d (%q), %d lines; want exit 0 and the header with 12 rows after %d answers 503 with Retry-After", code, line, e2e.Lines(out), sheet.MaxUnavailableRetries+1)
	}
	said := "waiting 1 s: the server's rate limit (503: This server is resolving 4 batches, the most it takes at once. Retry in 1 s); done: 0 " // of 12 rows, once counted
	if n := strings.Count(stderr, said); n < sheet.MaxUnavailableRetries {
		t.Errorf("stderr says %d times %q, want a line for each wait:\n%s", n, said, stderr)
	}
}

// TestResolveCapsRefuseRows runs resolve with small caps over real rows
// of the embedded sample: a row with a cell over --max-field-bytes and a
// row over --max-row-bytes are written as their own lines, empty but for
// the refusal with the line number; a cell quoted over two lines is read
// as it is; the rows around them are resolved, in process and through a
// server alike. A run cut after a refused
// row resumes to the same bytes. A damaged output is refused naming its
// line; a quote left open at the end stops the run naming its line; a
// column the header lacks is named with at most 200 characters of the
// header.
func TestResolveCapsRefuseRows(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	tmp := t.TempDir()
	rows := e2e.GermanExcelRows(recs, 12, 41)
	rows[3][0] = strings.Repeat("Ü", 51)                                      // 102 bytes: over the cell cap
	rows[6][1], rows[6][2] = strings.Repeat("x", 99), strings.Repeat("y", 99) // cells under the cap, the row over its cap
	rows[8][2] = "HRB 1\n(alt)"                                               // a cell on two lines
	in := filepath.Join(tmp, "in.csv")
	e2e.WriteSheet(t, in, ',', false, rows)
	caps := []string{"--max-field-bytes", "100", "--max-row-bytes", "200", "--max-header-bytes", "100"}
	args := append([]string{"resolve", "--data-dir", dir, "--query", "Firma", "--city", "Ort"}, caps...)

	out := filepath.Join(tmp, "out.csv")
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", out, in)...); code != 0 {
		t.Fatalf("exit %d, %s", code, line)
	}
	whole, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := e2e.ReadSheet(t, whole, ',')
	if len(got) != len(rows) {
		t.Fatalf("%d output rows, want %d", len(got), len(rows))
	}
	empty := make([]string, 3+len(sheet.ResultColumns)-len(sheet.NotReviewed)-1)
	for i, want := range map[int]string{
		3: "invalid_query: Line 4 has a cell longer than 100 bytes (--max-field-bytes), so the row was not read.",
		6: "invalid_query: Line 7 is longer than 200 bytes (--max-row-bytes), so the row was not read.",
	} {
		if !slices.Equal(got[i][:len(empty)], empty) || !strings.HasPrefix(got[i][len(empty)], want) {
			t.Errorf("row %d: %q, want empty cells and %q", i, got[i], want)
		}
	}
	for i, row := range got[1:] {
		if i+1 != 3 && i+1 != 6 && (!slices.Equal(row[:3], rows[i+1]) || row[3] == "") {
			t.Errorf("row %d: %q, want the input's cells %q resolved", i+1, row, rows[i+1])
		}
	}

	// Through a server, in batches of 3 (two of them with a refused row,
	// which is not sent), the file is the same.
	s := e2e.StartServer(t, dir)
	remote, _, line, code := e2e.RunCLI(t, append([]string{"resolve", "--server", s.Base, "--query", "Firma", "--city", "Ort", "--batch-size", "3"}, append(caps, in)...)...)
	if code != 0 || remote != string(whole) {
		t.Errorf("through the server: exit %d, %s:\n%s\nin process:\n%s", code, line, remote, whole)
	}

	cut := bytes.Index(whole, []byte(`"invalid_query: Line 7`))
	cut += bytes.IndexByte(whole[cut:], '\n') + 1
	if err := os.WriteFile(out, whole[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", out, "--resume", in)...); code != 0 {
		t.Fatalf("resume: exit %d, %s", code, line)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, whole) {
		t.Errorf("resumed after the refused row: %d bytes, want the whole run's %d", len(again), len(whole))
	}

	damaged := bytes.Replace(whole, []byte("\n"), []byte(",extra\n"), 3)  // lines 1 to 3 get a cell more
	damaged = bytes.Replace(damaged, []byte(",extra\n"), []byte("\n"), 1) // but the header
	if err := os.WriteFile(out, damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, line, code := e2e.RunCLI(t, append(args, "--output", out, "--resume", in)...); code != 2 ||
		!strings.Contains(line, fmt.Sprintf("--resume: line 2 of %s has %d cells, the header %d", out, 4+len(sheet.ResultColumns), 3+len(sheet.ResultColumns))) {
		t.Errorf("resume of a damaged output: exit %d, %q", code, line)
	}

	open := filepath.Join(tmp, "open.csv")
	if err := os.WriteFile(open, []byte("Firma\n"+recs[0].Name+"\n\""+recs[1].Name+"\n"+recs[2].Name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Firma", open); code != 1 ||
		!strings.Contains(line, "the quote opened on line 3 is not closed: the input ends first") {
		t.Errorf("a quote left open: exit %d, %q", code, line)
	}

	wide := filepath.Join(tmp, "wide.csv")
	var header []string
	for i := range 100 {
		header = append(header, fmt.Sprintf("Spalte %02d", i))
	}
	e2e.WriteSheet(t, wide, ',', false, [][]string{header})
	_, _, line, code = e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Firma", wide)
	if code != 2 || !strings.Contains(line, `its header has "Spalte 00", "Spalte 01"`) || !strings.Contains(line, "... (100 columns in all)") ||
		strings.Contains(line, "Spalte 23") {
		t.Errorf("a column the header lacks: exit %d, %q; want the first 200 characters of its columns", code, line)
	}
}

// TestResolveTextAfterQuote: a cell with text after its closing quote
// ("Foo GmbH"x;Berlin) stops the run with a sentence that says so, in the
// run's language (--lang), naming the line, the cell and the text, not
// as a quote left open; the rows before it are written (exit 1). In a
// semicolon CSV, a TSV and the header line.
func TestResolveTextAfterQuote(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	tmp := t.TempDir()
	rows := e2e.GermanExcelRows(recs, 5, 41)
	for _, tc := range []struct {
		name    string
		comma   rune
		lang    string
		badLine int // 1: the header
		want    string
	}{
		{"semicolons, English", ';', "en", 4, `companydocs: Line 4: cell 1 has text after its closing quote: "x;`},
		{"tabs, German", '\t', "de", 4, `companydocs: Zeile 4: In Zelle 1 steht nach dem schließenden Anführungszeichen noch Text: "x\t`},
		{"the header", ';', "en", 1, `companydocs: Line 1: cell 1 has text after its closing quote: "x;Ort;Registernummer". No row from line 1 on`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			for i, row := range rows {
				row = slices.Clone(row)
				if i+1 == tc.badLine {
					row = append([]string{`"` + strings.ReplaceAll(row[0], `"`, `""`) + `"x`}, row[1:]...)
				} else {
					for j, cell := range row {
						row[j] = `"` + strings.ReplaceAll(cell, `"`, `""`) + `"`
					}
				}
				buf.WriteString(strings.Join(row, string(tc.comma)) + "\r\n")
			}
			in, out := filepath.Join(tmp, tc.name+".csv"), filepath.Join(tmp, tc.name+".out.csv")
			if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--query", "Firma", "--city", "Ort", "--lang", tc.lang, "--output", out, in)
			if code != 1 || !strings.HasPrefix(line, tc.want) || strings.Contains(line, "not closed") {
				t.Errorf("exit %d, %q; want exit 1 and %q", code, line, tc.want)
			}
			if tc.badLine == 1 {
				return
			}
			written, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if got := e2e.ReadSheet(t, written, tc.comma); len(got) != tc.badLine-1 || got[len(got)-1][3] == "" {
				t.Errorf("the output holds %d rows (%q); want the header and the %d resolved rows before line %d", len(got), got, tc.badLine-2, tc.badLine)
			}
		})
	}
}

// TestResolveSaysRateLimitWaits: a server whose search budget is spent
// answers 429 with Retry-After; resolve says on stderr that it waits on
// the server's search rate limit, for how long, and how many rows of the
// file are done, then writes the file whole.
func TestResolveSaysRateLimitWaits(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 9, 13))
	// The second batch finds the budget spent.
	proxy := pacingProxy(t, e2e.StartServer(t, dir).Base, func(n int32) bool { return n == 2 }, http.StatusTooManyRequests,
		`{"error":{"code":"rate_limited","message":"Too many searches from this address; retry in 1 s."}}`)
	out := filepath.Join(t.TempDir(), "out.csv")
	_, stderr, line, code := e2e.RunCLI(t, "resolve", "--server", proxy.URL, "--query", "Firma", "--workers", "1", "--batch-size", "3", "--output", out, in)
	if code != 0 || e2e.Lines(out) != 10 {
		t.Fatalf("exit %d (%q), %d lines; want exit 0 and the header with 9 rows", code, line, e2e.Lines(out))
	}
	said := "waiting 1 s: the server's rate limit (429: Too many searches from this address; retry in 1 s; an account signed in with COMPANYDOCS_API_KEY searches at its plan's rate)"
	// The rows are counted while the first batch is resolved.
	if !strings.Contains(stderr, said) || !regexp.MustCompile(`done: 3( of 9)? rows\n`).MatchString(stderr) {
		t.Errorf("stderr:\n%s\nwant %q and the rows done (3 of 9)", stderr, said)
	}
}

// TestResolveGermanCSV resolves a German Excel sheet (semicolons, a BOM)
// of real companies with --lang de: the confidence has a decimal comma,
// the reasons are the catalog's German sentences of the candidates'
// reason codes (none of them English), a row whose clue is refused says
// so in German, and the review columns reviewed, chosen_by_hand and
// none_of_these say false. --decimal point writes a point; --resume keeps
// what a person wrote in the review columns of the rows it keeps.
func TestResolveGermanCSV(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	in := filepath.Join(t.TempDir(), "firmen.csv")
	rows := e2e.GermanExcelRows(recs, 40, 37)
	rows[5][0] = "   " // a clue of blanks: refused
	e2e.WriteSheet(t, in, ';', true, rows)
	out := filepath.Join(t.TempDir(), "ergebnis.csv")
	args := []string{"resolve", "--data-dir", dir, "--lang", "de", "--query", "Firma", "--city", "Ort", "--register", "Registernummer", "--output", out, in}
	if _, stderr, line, code := e2e.RunCLI(t, args...); code != 0 {
		t.Fatalf("exit %d, %s %s", code, line, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := e2e.ReadSheet(t, bytes.TrimPrefix(data, []byte(sheet.BOM)), ';')
	if h := got[0][len(got[0])-3:]; !slices.Equal(h, []string{"reviewed", "chosen_by_hand", "none_of_these"}) {
		t.Errorf("the header ends %q, want the review columns", h)
	}
	col := func(name string) int { return slices.Index(got[0], name) }
	comma, german := 0, 0
	for i, row := range got[1:] {
		if review := row[col("reviewed"):]; !slices.Equal(review, []string{"false", "false", "false"}) {
			t.Errorf("row %d: review columns %q, want false false false", i+1, review)
		}
		if i+1 == 5 {
			if reason := row[col("reasons")]; !strings.HasPrefix(reason, "invalid_query: ") || !strings.Contains(reason, "Suche") {
				t.Errorf("the refused row says %q, want invalid_query and the German sentence", reason)
			}
			continue
		}
		confidence := row[col("confidence")]
		if strings.Contains(confidence, ".") {
			t.Errorf("row %d: confidence %q has a decimal point", i+1, confidence)
		}
		if strings.Contains(confidence, ",") {
			comma++
		}
		reasons := row[col("reasons")]
		if reasons == "" {
			continue
		}
		res, err := searchOfRow(dir, rows[i+1])
		if err != nil {
			t.Fatal(err)
		}
		var want, english []string
		for _, d := range res.Candidates[0].ReasonDetails {
			want = append(want, resolver.ReasonTextIn("de", d))
			english = append(english, resolver.ReasonTextIn("en", d))
		}
		if reasons != oneLine(strings.Join(want, " | ")) {
			t.Errorf("row %d: reasons %q, want the German %q", i+1, reasons, want)
		}
		if reasons != oneLine(strings.Join(english, " | ")) {
			german++
		}
	}
	if comma == 0 || german < (len(got)-2)/2 {
		t.Errorf("%d confidences with a decimal comma, %d rows with reasons other than the English ones, of %d", comma, german, len(got)-2)
	}

	// --decimal point; the review columns a person filled are kept by --resume.
	point, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--decimal", "point", "--query", "Firma", in)
	if code != 0 || !regexp.MustCompile(`;0\.\d+;`).MatchString(point) {
		t.Errorf("--decimal point: exit %d %s, no confidence with a point in\n%.300s", code, line, point)
	}
	lines := strings.SplitAfter(string(data), "\n")
	first := strings.Replace(lines[1], ";false;false;false", ";true;true;false", 1)
	kept := strings.Join(append([]string{lines[0], first}, lines[2:len(lines)-4]...), "")
	if err := os.WriteFile(out, []byte(kept), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, line, code := e2e.RunCLI(t, append(args[:len(args)-1], "--resume", in)...); code != 0 {
		t.Fatalf("--resume: exit %d, %s", code, line)
	}
	resumed, _ := os.ReadFile(out)
	if want := strings.Replace(string(data), lines[1], first, 1); string(resumed) != want {
		t.Errorf("resumed:\n%s\nwant the first row as a person reviewed it, the rest as before:\n%s", resumed, want)
	}
	if _, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--lang", "fr", "--query", "Firma", in); code != 2 || !strings.Contains(line, `--lang must be one of en, de, got "fr"`) {
		t.Errorf("--lang fr: exit %d, %q", code, line)
	}
	if _, _, line, code := e2e.RunCLI(t, "resolve", "--data-dir", dir, "--decimal", "comma", "--delimiter", ",", "--query", "Firma", in); code != 2 || !strings.Contains(line, "--decimal comma needs another delimiter") {
		t.Errorf("--decimal comma in a comma file: exit %d, %q", code, line)
	}
}

// searchOfRow is the search resolve makes of a row of e2e.GermanExcelRows.
func searchOfRow(dir string, row []string) (*resolver.Result, error) {
	live, err := index.OpenLive(dir, index.LiveOptions{PollInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	defer live.Close()
	return app.LiveSearcher{Live: live}.Search(context.Background(), resolver.Request{Query: row[0], Limit: resolver.DefaultLimit,
		Properties: resolver.Properties{City: row[1], RegisterNumber: row[2]}})
}

// TestSignedInSearchRate: on a server whose addresses may search 5 times
// a second, a batch of 60 real rows spends the address's budget and the
// next is refused (429); signed in, the account searches at the embedded
// plans' search_rate (200 a second) and two such batches in a row are
// answered, and a reconciliation too. A token that authenticates no
// session is refused (401), not spent at the address's rate. resolve
// --server with COMPANYDOCS_API_KEY signs in: 120 rows in batches of 30
// meet no 429 (through a server one batch is sent at a time, so none
// waits for the address's batch in progress either), where the same run
// without the key waits on it.
func TestSignedInSearchRate(t *testing.T) {
	dir, recs := e2e.SampleSheet(t)
	s := e2e.StartServer(t, dir, "--demo", "--search-rate", "5", "--search-burst", "5")
	rows := e2e.GermanExcelRows(recs, 60, 17)
	var queries []string
	for _, r := range rows[1:] {
		queries = append(queries, fmt.Sprintf(`{"query":%q}`, r[0]))
	}
	batch := `{"queries":[` + strings.Join(queries, ",") + `]}`
	const path = "/api/v1/documents/companies/search/batch"
	if code, body, _ := s.Do(t, "POST", path, batch); code != http.StatusOK {
		t.Fatalf("anonymous batch: %d %s", code, body)
	}
	if code, body, h := s.Do(t, "POST", path, batch); code != http.StatusTooManyRequests || !strings.Contains(string(body), "from your address") || h.Get("Retry-After") == "" {
		t.Errorf("second anonymous batch: %d %s, want 429 with Retry-After: the address's 5 a second are spent", code, body)
	}
	var sess struct{ Token string }
	s.MustJSON(t, http.StatusCreated, &sess, "POST", "/api/v1/auth/sessions/", `{"api_key":"`+s.DemoKey+`"}`)
	for i := range 2 {
		if code, body, _ := s.Do(t, "POST", path, batch, "Authorization", "Bearer "+sess.Token); code != http.StatusOK || !strings.Contains(string(body), `"charged":`) {
			t.Errorf("signed-in batch %d: %d %.300s, want 200: the account's budget is the plan's 200 a second", i+1, code, body)
		}
	}
	form := "queries=" + url.QueryEscape(`{"q0":{"query":"`+recs[0].Name+`"}}`)
	if code, body := postForm(t, s.Base+"/api/v1/reconcile/", form, sess.Token); code != http.StatusOK || !strings.Contains(body, `"q0"`) {
		t.Errorf("signed-in reconciliation: %d %.300s, want 200 while the address's budget is spent", code, body)
	}
	if code, body, h := s.Do(t, "POST", path, batch, "Authorization", "Bearer not-a-session"); code != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "invalid_token") {
		t.Errorf("unknown token: %d %s, want 401 with the Bearer challenge", code, body)
	}

	in := filepath.Join(t.TempDir(), "in.csv")
	e2e.WriteSheet(t, in, ',', false, e2e.GermanExcelRows(recs, 120, 7))
	args := []string{"resolve", "--server", s.Base, "--query", "Firma", "--batch-size", "30", in} // one worker through a server
	t.Setenv(sheet.APIKeyEnv, s.DemoKey)
	before := strings.Count(s.Logs.String(), `"status":429`)
	out, stderr, line, code := e2e.RunCLI(t, args...)
	if code != 0 || strings.Count(out, "\n") != 121 || strings.Contains(stderr, "waiting") {
		t.Errorf("signed in: exit %d %s, %d lines, stderr %q; want 121 lines and no wait", code, line, strings.Count(out, "\n"), stderr)
	}
	if n := strings.Count(s.Logs.String(), `"status":429`) - before; n != 0 {
		t.Errorf("a signed-in run met %d answers 429", n)
	}
	t.Setenv(sheet.APIKeyEnv, "cdk_not_a_key")
	if _, _, line, code := e2e.RunCLI(t, args...); code != 1 || !strings.Contains(line, "signing in with the API key in COMPANYDOCS_API_KEY: the server answered 401 unauthorized") {
		t.Errorf("a wrong key: exit %d, %q", code, line)
	}
}

// postForm posts a form with a session token and returns the status and
// body.
func postForm(t *testing.T, target, form, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", target, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// pacingProxy passes requests to the server at base, but answers the n-th
// (from 1) for which refuse holds with status, Retry-After: 1 and body.
func pacingProxy(t *testing.T, base string, refuse func(n int32) bool, status int, body string) *httptest.Server {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse(asked.Add(1)) {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
			return
		}
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy
}

// bestCells are the result cells resolve writes for a row whose search
// answered res: its best candidate's, or with none the notes that say
// why, one line joined as resolve joins them, not reviewed.
func bestCells(res *resolver.Result, lang string, decimal byte) []string {
	if len(res.Candidates) > 0 {
		return sheet.CandidateCells(&res.Candidates[0], lang, decimal)
	}
	notes := res.Understanding.Notes
	if len(res.Understanding.NoteDetails) == len(notes) {
		notes = nil
		for _, d := range res.Understanding.NoteDetails {
			notes = append(notes, resolver.NoteTextIn(lang, d))
		}
	}
	cells := make([]string, len(sheet.ResultColumns)-len(sheet.NotReviewed))
	cells[len(cells)-1] = oneLine(strings.Join(notes, " | "))
	return append(cells, sheet.NotReviewed...)
}

// oneLine is a cell as resolve writes it: on one line, its spaces folded.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
