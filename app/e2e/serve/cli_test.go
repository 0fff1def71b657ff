package serve

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"companydocs/app"
	"companydocs/data"
	"companydocs/index"
	"companydocs/internal/e2e"
	"companydocs/register"
)

// TestCommandLineExitCodes: 0 for success and asked-for help, 1 for
// failure, 2 for usage, whatever the command; a usage error prints the
// usage once and no "usage error" line after it. Help goes to stdout,
// everything else to stderr.
func TestCommandLineExitCodes(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args   []string
		code   int
		phrase string // in stdout for help, else in stderr or the error line
	}{
		{[]string{"help"}, 0, "Usage:"},
		{[]string{"-h"}, 0, "Usage:"},
		{[]string{"--help"}, 0, "Usage:"},
		{[]string{}, 2, "Usage:"},
		{[]string{"frob"}, 2, `unknown command "frob"`},

		{[]string{"serve", "-h"}, 0, "-addr"},
		{[]string{"serve", "--help"}, 0, "usage: companydocs serve"},
		{[]string{"serve", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"serve", "extra"}, 2, "serve takes no arguments"},
		{[]string{"serve", "--search-burst", "0"}, 2, "--search-burst"},

		{[]string{"ingest", "-h"}, 0, "usage: companydocs ingest [flags] FILE..."},
		{[]string{"ingest", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"ingest"}, 2, "ingest needs at least one dump file"},
		{[]string{"ingest", "--format", "xml", "x.jsonl"}, 2, `unknown format "xml"`},
		{[]string{"ingest", "missing.jsonl"}, 1, "missing.jsonl"},

		{[]string{"accounts"}, 2, "companydocs accounts list"},
		{[]string{"accounts", "help"}, 0, "companydocs accounts list"},
		{[]string{"accounts", "--help"}, 0, "companydocs accounts list"},
		{[]string{"accounts", "frob"}, 2, `unknown accounts command "frob"`},
		{[]string{"accounts", "create", "-h"}, 0, "-operator"},
		{[]string{"accounts", "create", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"accounts", "create"}, 2, "accounts create needs --name"},
		{[]string{"accounts", "create", "--name", "x", "--credits", "-1"}, 2, "--credits of 0 or more"},
		{[]string{"accounts", "list", "--help"}, 0, "usage: companydocs accounts list"},
		{[]string{"accounts", "list", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"accounts", "list", "extra"}, 2, "takes no arguments"},
		{[]string{"accounts", "list"}, 1, "data directory"},
		{[]string{"accounts", "credit", "-h"}, 0, "-add"},
		{[]string{"accounts", "credit", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"accounts", "credit", "--name", "x"}, 2, "non-zero --add"},

		{[]string{"search", "-h"}, 0, "usage: companydocs search [flags] QUERY"},
		{[]string{"search", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"search"}, 2, "search needs a query"},
		{[]string{"search", " "}, 2, "search needs a query"},
		{[]string{"search", "--limit", "0", "acme"}, 2, "--limit must be 1 to 50, got 0"},
		{[]string{"search", "--limit", "51", "acme"}, 2, "--limit must be 1 to 50, got 51"},
		{[]string{"search", "--limit", "x", "acme"}, 2, "invalid value"},
		{[]string{"search", "--mode", "fast", "acme"}, 2, "--mode must be standard or deep"},
		{[]string{"search", "acme"}, 1, ""},

		{[]string{"resolve", "-h"}, 0, "usage: companydocs resolve --query COLUMN [flags] [FILE]"},
		{[]string{"resolve", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"resolve"}, 2, "resolve needs --query COLUMN"},
		{[]string{"resolve", "--query", "Name", "a.csv", "b.csv"}, 2, "at most one input file, got 2"},
		{[]string{"resolve", "--query", "Name", "--workers", "0"}, 2, "--workers must be 1 to 64, got 0"},
		{[]string{"resolve", "--query", "Name", "--batch-size", "1001"}, 2, "--batch-size must be 1 to 1000, got 1001"},
		{[]string{"resolve", "--query", "Name", "--mode", "fast"}, 2, "--mode must be standard or deep"},
		{[]string{"resolve", "--query", "Name", "--resume"}, 2, "--resume needs --output FILE"},
		{[]string{"resolve", "--query", "Name", "--delimiter", "|"}, 2, `--delimiter must be ",", ";" or "tab", got "|"`},
		{[]string{"resolve", "--query", "Name", "--server", "127.0.0.1:8080"}, 2, "--server must be the server's base URL"},
		{[]string{"resolve", "--query", "Name", "--max-header-bytes", "0"}, 2, "--max-field-bytes, --max-row-bytes and --max-header-bytes must be 1 or more"},
		{[]string{"resolve", "--query", "Name", "--max-field-bytes", "2000000"}, 2, "--max-field-bytes (2000000) must not be more than --max-row-bytes (1048576)"},
		{[]string{"resolve", "--query", "Name", "missing.csv"}, 1, "missing.csv"},

		{[]string{"store"}, 2, "companydocs store check"},
		{[]string{"store", "help"}, 0, "companydocs store backup"},
		{[]string{"store", "-h"}, 0, "companydocs store backup"},
		{[]string{"store", "frob"}, 2, `unknown store command "frob"`},
		{[]string{"store", "check", "-h"}, 0, "-store-check-timeout"},
		{[]string{"store", "check", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"store", "check", "extra"}, 2, "takes no arguments"},
		{[]string{"store", "check"}, 1, "no order database to check"},
		{[]string{"store", "backup", "--help"}, 0, "-force"},
		{[]string{"store", "backup", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"store", "backup"}, 2, "store backup needs --to FILE"},
		{[]string{"store", "migrate", "-h"}, 0, "migrate copies an orders.db"},
		{[]string{"store", "migrate", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"store", "migrate"}, 2, "store migrate needs --from FILE"},
		{[]string{"store", "migrate", "--from", "orders.db"}, 2, "needs --to postgres://"},

		{[]string{"version"}, 0, "companydocs (devel) revision unknown " + runtime.Version()},
		{[]string{"--version"}, 0, "companydocs (devel) revision unknown"},
		{[]string{"version", "-h"}, 0, "usage: companydocs version"},
		{[]string{"version", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"version", "extra"}, 2, "version takes no arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, line, code := e2e.RunCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (stdout %q, stderr %q, line %q)", code, tc.code, stdout, stderr, line)
			}
			where, got := "stderr and the error line", stderr+line
			if code == 0 {
				where, got = "stdout", stdout
				if stderr != "" || line != "" {
					t.Errorf("help wrote to stderr: %q, %q", stderr, line)
				}
			}
			if !strings.Contains(got, tc.phrase) {
				t.Errorf("%s %q, want it to contain %q", where, got, tc.phrase)
			}
			if strings.Contains(line, "usage error") || strings.Count(stdout+stderr+line, "Usage") > 1 {
				t.Errorf("stderr %q then %q: the usage or a bare \"usage error\" is printed twice", stderr, line)
			}
		})
	}
}

// TestCommandLineHelpListsOwnFlags: the help of a subcommand lists its
// own flags, not those of its siblings.
func TestCommandLineHelpListsOwnFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"accounts", "create", "-h"}, []string{"-name", "-credits", "-operator", "-json", "-data-dir"}, []string{"-add"}},
		{[]string{"accounts", "list", "-h"}, []string{"-json", "-data-dir"}, []string{"-name", "-credits", "-add", "-operator"}},
		{[]string{"accounts", "credit", "-h"}, []string{"-name", "-add"}, []string{"-credits", "-operator", "-json"}},
		{[]string{"store", "check", "-h"}, []string{"-data-dir", "-store"}, []string{"-to", "-force", "-from"}},
		{[]string{"resolve", "-h"}, []string{"-query", "-city", "-postal-code", "-address", "-court", "-register", "-lei", "-officer", "-legal-form",
			"-delimiter", "-output", "-resume", "-workers", "-server", "-data-dir"}, []string{"-limit", "-json", "-add", "-addr"}},
		{[]string{"store", "backup", "-h"}, []string{"-to", "-force"}, []string{"-from"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, _, _, code := e2e.RunCLI(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit code %d, want 0", code)
			}
			listed := map[string]bool{}
			for _, line := range strings.Split(stdout, "\n") {
				if fields := strings.Fields(line); len(fields) > 0 && strings.HasPrefix(line, "  -") {
					listed[fields[0]] = true
				}
			}
			for _, f := range tc.want {
				if !listed[f] {
					t.Errorf("help lacks %s:\n%s", f, stdout)
				}
			}
			for _, f := range tc.not {
				if listed[f] {
					t.Errorf("help lists %s of another command:\n%s", f, stdout)
				}
			}
		})
	}
}

// TestCommandLineAccountsWithoutSubcommand prints the usage and says
// nothing about a running server, since none may run.
func TestCommandLineAccountsWithoutSubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	_, stderr, line, code := e2e.RunCLI(t, "accounts")
	if code != 2 || line != "" || !strings.Contains(stderr, "accounts create --name N") {
		t.Fatalf("accounts: exit %d, stderr %q, line %q; want the usage alone and exit code 2", code, stderr, line)
	}
	if strings.Contains(stderr, "holds") || strings.Contains(stderr, "is held") {
		t.Errorf("accounts usage claims a running server: %q", stderr)
	}
}

// TestCommandLineErrorIsOneSentence: an application error reads as the
// sentence a person acts on, not as "code=... message=...".
func TestCommandLineErrorIsOneSentence(t *testing.T) {
	dir := t.TempDir()
	if _, _, line, code := e2e.RunCLI(t, "accounts", "create", "--data-dir", dir, "--name", "acme"); code != 0 {
		t.Fatalf("first create: exit %d: %s", code, line)
	}
	_, _, line, code := e2e.RunCLI(t, "accounts", "create", "--data-dir", dir, "--name", "acme")
	want := `companydocs: An account named "acme" exists already.`
	if code != 1 || line != want {
		t.Fatalf("second create: exit %d, line %q; want exit code 1 and %q", code, line, want)
	}
}

// TestIngestMissingFileFailsFirst: a mistyped path fails at once, with
// the file named and no empty summary on stdout.
func TestIngestMissingFileFailsFirst(t *testing.T) {
	dir := t.TempDir()
	stdout, _, line, code := e2e.RunCLI(t, "ingest", "--data-dir", dir, "--log-format", "json", e2e.SampleFile(t), filepath.Join(dir, "missing.jsonl"))
	if code != 1 || !strings.Contains(line, "missing.jsonl") || !strings.Contains(line, "live index is unchanged") {
		t.Fatalf("exit %d, line %q; want exit code 1 naming missing.jsonl", code, line)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing (no summary of an ingest that never ran)", stdout)
	}
	if _, err := index.ReadCurrent(dir); err == nil {
		t.Errorf("a generation was published")
	}
}

// TestIngestRefusesToShrink: an ingest of a small part of the records into
// a served data directory is refused, naming both generations' sizes, and
// the live generation stays; --allow-shrink publishes it.
func TestIngestRefusesToShrink(t *testing.T) {
	dir := t.TempDir()
	sample := e2e.SampleFile(t)
	live := e2e.MustBuild(t, dir, 2000, sample)
	args := []string{"ingest", "--data-dir", dir, "--log-format", "json", "--max-records", "300", sample}
	stdout, _, line, code := e2e.RunCLI(t, args...)
	if code != 1 || !strings.Contains(line, live.ID) || !strings.Contains(line, fmt.Sprint(live.Profiles)) ||
		!strings.Contains(line, "--allow-shrink") || !strings.Contains(line, "with 300 ") {
		t.Fatalf("exit %d, line %q; want a refusal naming %s, its %d profiles, the 300 new ones and --allow-shrink", code, line, live.ID, live.Profiles)
	}
	if strings.Contains(stdout, "is current") {
		t.Errorf("stdout says the refused generation is current: %q", stdout)
	}
	if cur, _ := index.ReadCurrent(dir); cur != live.ID {
		t.Fatalf("CURRENT = %s, want the live %s", cur, live.ID)
	}
	t.Logf("live generation of %d profiles, 300 offered: %s", live.Profiles, line)
	stdout, _, line, code = e2e.RunCLI(t, append([]string{"ingest", "--allow-shrink"}, args[1:]...)...)
	if code != 0 || !strings.Contains(stdout, "with 300 profiles") {
		t.Fatalf("--allow-shrink: exit %d, line %q, stdout %q", code, line, stdout)
	}
	// A local build is current in the data directory; it is published
	// to the nodes that follow only by companydocs publish.
	if !strings.Contains(stdout, "with 300 profiles is current in "+dir) || strings.Contains(stdout, "Published") {
		t.Errorf("stdout %q, want the generation current in %s and nothing said published", stdout, dir)
	}
}

// TestCommandLineSearchExplainsEmptyResult: search prints the note that
// says why nothing came back, and stdout holds no log line.
func TestCommandLineSearchExplainsEmptyResult(t *testing.T) {
	dir := t.TempDir()
	e2e.MustBuild(t, dir, 200, e2e.SampleFile(t))
	lei := unknownValidLEI(t)
	stdout, stderr, line, code := e2e.RunCLI(t, "search", "--data-dir", dir, lei)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, line)
	}
	if !strings.Contains(stdout, "No candidates.") || !strings.Contains(stdout, "Note: LEI "+lei+" is valid but not known") {
		t.Errorf("stdout %q, want \"No candidates.\" and the note that the LEI is not known", stdout)
	}
	for _, logged := range []string{"INFO", "msg=", `"msg"`, "index generation"} {
		if strings.Contains(stdout+stderr, logged) {
			t.Errorf("a log line (%q) in the output: stdout %q stderr %q", logged, stdout, stderr)
		}
	}
}

// unknownValidLEI returns an LEI whose checksum holds and that no record
// of the embedded sample carries.
func unknownValidLEI(t *testing.T) string {
	for i := range 100 {
		s := fmt.Sprintf("529900ZZQQZZQQZZQQ%02d", i)
		if _, err := register.ParseLEI(s); err == nil {
			return s
		}
	}
	t.Fatal("no check digits make a valid LEI")
	return ""
}

// TestCommandLineSearchTableFits: the search table fits app.TableWidth with
// the longest company name of the embedded sample: the name is cut short
// with "…", the columns stay aligned and every reason is printed.
func TestCommandLineSearchTableFits(t *testing.T) {
	dir := t.TempDir()
	line, name := longestSampleRecord(t)
	dump := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(dump, line, 0o644); err != nil {
		t.Fatal(err)
	}
	e2e.MustBuild(t, filepath.Join(dir, "var"), 0, dump)
	query := strings.Join(strings.Fields(name)[:4], " ")
	stdout, _, errLine, code := e2e.RunCLI(t, "search", "--data-dir", filepath.Join(dir, "var"), query)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errLine)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("stdout %q, want a header, a candidate and its reasons", stdout)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > app.TableWidth {
			t.Errorf("line of %d characters, want at most %d: %q", n, app.TableWidth, l)
		}
	}
	header, row := []rune(lines[0]), []rune(lines[1])
	if !strings.Contains(lines[1], "…") || strings.Contains(lines[1], name) {
		t.Errorf("row %q, want the name cut short with …", lines[1])
	}
	for _, col := range []string{"NAME", "COURT", "NUMBER", "SEAT"} {
		at := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], col)])
		if at >= len(row) || row[at-1] != ' ' || row[at-2] != ' ' || row[at] == ' ' {
			t.Errorf("column %s starts at %d in %q but not in %q", col, at, string(header), string(row))
		}
	}
	if !strings.Contains(strings.Join(strings.Fields(strings.Join(lines[2:], " ")), " "), "Name contains every word of the query") {
		t.Errorf("the reasons are missing: %q", stdout)
	}
}

// longestSampleRecord returns the line of the embedded sample whose
// company name is longest, and that name.
func longestSampleRecord(t *testing.T) (line []byte, name string) {
	t.Helper()
	sc := bufio.NewScanner(bzip2.NewReader(bytes.NewReader(data.Sample)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Name string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if utf8.RuneCountInString(r.Name) > utf8.RuneCountInString(name) {
			line, name = append([]byte(nil), sc.Bytes()...), r.Name
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return append(line, '\n'), name
}

// TestVersionLine: the version line names the module version, the
// revision with its time and whether the tree was modified, and Go.
func TestVersionLine(t *testing.T) {
	for _, tc := range []struct {
		build app.BuildInfo
		want  string
	}{
		{app.BuildInfo{Version: "(devel)", Revision: "unknown", GoVersion: "go1.26.8"}, "companydocs (devel) revision unknown go1.26.8"},
		{app.BuildInfo{Version: "v1.2.0", Revision: "0123abc", Time: "2026-03-01T10:00:00Z", GoVersion: "go1.26.8"}, "companydocs v1.2.0 revision 0123abc (2026-03-01T10:00:00Z) go1.26.8"},
		{app.BuildInfo{Version: "(devel)", Revision: "0123abc", Time: "2026-03-01T10:00:00Z", Modified: true, GoVersion: "go1.26.8"}, "companydocs (devel) revision 0123abc (2026-03-01T10:00:00Z, modified) go1.26.8"},
	} {
		if got := tc.build.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.build, got, tc.want)
		}
	}
}
