package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/index"
)

// runCLI runs one command line as main does and returns what main would
// print on stderr after the command's own output, and the exit code.
func runCLI(t *testing.T, args ...string) (stdout, stderr, line string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	if err == nil {
		return out.String(), errOut.String(), "", 0
	}
	return out.String(), errOut.String(), errorLine(err), exitCode(err)
}

// TestCommandLineExitCodes: 0 for success, 1 for failure, 2 for usage,
// whatever the command; a usage error prints the usage once and no
// "usage error" line after it.
func TestCommandLineExitCodes(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string
	}{
		{[]string{"help"}, 0, ""},
		{[]string{}, 2, "Usage:"},
		{[]string{"frob"}, 2, `unknown command "frob"`},
		{[]string{"ingest", "--bogus", "x"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"ingest"}, 2, ""},
		{[]string{"search", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"accounts"}, 2, "companydocs accounts list"},
		{[]string{"accounts", "list", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"serve", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"store", "check", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"store", "backup"}, 2, ""},
		{[]string{"ingest", "missing.jsonl"}, 1, ""},
		{[]string{"accounts", "list"}, 1, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, stderr, line, code := runCLI(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q, line %q)", code, tc.code, stderr, line)
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.wantStderr)
			}
			if strings.Contains(line, "usage error") || strings.Count(stderr+line, "Usage") > 1 {
				t.Errorf("stderr %q then %q: the usage or a bare \"usage error\" is printed twice", stderr, line)
			}
		})
	}
}

// TestCommandLineAccountsWithoutSubcommand prints the usage and says
// nothing about a running server, since none may run.
func TestCommandLineAccountsWithoutSubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	_, stderr, line, code := runCLI(t, "accounts")
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
	if _, _, line, code := runCLI(t, "accounts", "create", "--data-dir", dir, "--name", "acme"); code != 0 {
		t.Fatalf("first create: exit %d: %s", code, line)
	}
	_, _, line, code := runCLI(t, "accounts", "create", "--data-dir", dir, "--name", "acme")
	want := `companydocs: An account named "acme" exists already.`
	if code != 1 || line != want {
		t.Fatalf("second create: exit %d, line %q; want exit code 1 and %q", code, line, want)
	}
}

// TestIngestMissingFileFailsFirst: a mistyped path fails at once, with
// the file named and no empty summary on stdout.
func TestIngestMissingFileFailsFirst(t *testing.T) {
	dir := t.TempDir()
	stdout, _, line, code := runCLI(t, "ingest", "--data-dir", dir, "--log-format", "json", sampleFile(t), filepath.Join(dir, "missing.jsonl"))
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
	sample := sampleFile(t)
	live := mustBuild(t, dir, 2000, sample)
	args := []string{"ingest", "--data-dir", dir, "--log-format", "json", "--max-records", "300", sample}
	stdout, _, line, code := runCLI(t, args...)
	if code != 1 || !strings.Contains(line, live.ID) || !strings.Contains(line, fmt.Sprint(live.Profiles)) ||
		!strings.Contains(line, "--allow-shrink") || !strings.Contains(line, "with 300 ") {
		t.Fatalf("exit %d, line %q; want a refusal naming %s, its %d profiles, the 300 new ones and --allow-shrink", code, line, live.ID, live.Profiles)
	}
	if strings.Contains(stdout, "Published") {
		t.Errorf("stdout says published: %q", stdout)
	}
	if cur, _ := index.ReadCurrent(dir); cur != live.ID {
		t.Fatalf("CURRENT = %s, want the live %s", cur, live.ID)
	}
	t.Logf("live generation of %d profiles, 300 offered: %s", live.Profiles, line)
	stdout, _, line, code = runCLI(t, append([]string{"ingest", "--allow-shrink"}, args[1:]...)...)
	if code != 0 || !strings.Contains(stdout, "with 300 profiles") {
		t.Fatalf("--allow-shrink: exit %d, line %q, stdout %q", code, line, stdout)
	}
}

// TestCommandLineSearchExplainsEmptyResult: search prints the note that
// says why nothing came back, and stdout holds no log line.
func TestCommandLineSearchExplainsEmptyResult(t *testing.T) {
	dir := t.TempDir()
	mustBuild(t, dir, 200, sampleFile(t))
	lei := unknownValidLEI(t)
	stdout, stderr, line, code := runCLI(t, "search", "--data-dir", dir, lei)
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
		if _, err := companydocs.ParseLEI(s); err == nil {
			return s
		}
	}
	t.Fatal("no check digits make a valid LEI")
	return ""
}

// TestCommandLineLogsDurationsInMilliseconds: a duration is logged as
// milliseconds under a key that says so, not as raw nanoseconds.
func TestCommandLineLogsDurationsInMilliseconds(t *testing.T) {
	var buf bytes.Buffer
	newLogger(&buf, "json", "info").Info("index segments merged", "duration", 8600*time.Millisecond, "wait_ms", 1500*time.Microsecond)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatal(err)
	}
	if line["duration_ms"] != 8600.0 || line["wait_ms"] != 1.5 || line["duration"] != nil {
		t.Fatalf("logged %s, want duration_ms 8600 and wait_ms 1.5", buf.Bytes())
	}
}
