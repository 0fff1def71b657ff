//go:build !race

package docs

import (
	"bytes"
	"compress/bzip2"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"companydocs/app"
	"companydocs/data"
	"companydocs/internal/e2e"
)

// repoRoot is the repository, found before a test changes the working
// directory.
var repoRoot = e2e.RepoRoot()

// Marks in a ```sh block that say a command needs what the repository does
// not hold: such a command is only checked, never run. On a comment line
// of its own a mark holds for the rest of the block; after a command, for
// that command.
var checkOnlyMarks = []string{"needs the national data", "needs PostgreSQL"}

// documentationFiles returns README.md and every Markdown file under docs/.
func documentationFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("docs/ holds %d Markdown files, want at least api, operations, formats and page", len(files))
	}
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

// docCommand is one command line of a ```sh block, continuation lines
// joined.
type docCommand struct {
	file      string // relative to the repository
	line      int
	text      string // without its trailing comment
	checkOnly bool
	// eventually marks a command whose answer comes within seconds (a
	// generation swapped in, an event delivered): it is tried again
	// until it succeeds, for up to eventuallyWithin.
	eventually bool
}

// eventuallyMark, in a command's comment, makes it eventually.
const eventuallyMark = "within seconds"

// eventuallyWithin bounds how long an eventually command is tried.
const eventuallyWithin = 30 * time.Second

func (c docCommand) String() string { return fmt.Sprintf("%s:%d: %s", c.file, c.line, c.text) }

// shellBlocks returns the commands of every ```sh block of a Markdown
// file, one slice per block.
func shellBlocks(t *testing.T, path string) [][]docCommand {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(repoRoot, path)
	var blocks [][]docCommand
	var block []docCommand
	in, blockCheckOnly, pending, pendingLine := false, false, "", 0
	for i, line := range strings.Split(string(text), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !in && trimmed == "```sh":
			in, blockCheckOnly, block = true, false, nil
			continue
		case in && trimmed == "```":
			in = false
			blocks = append(blocks, block)
			continue
		case !in:
			continue
		}
		if pending == "" {
			pendingLine = i + 1
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont
			continue
		}
		full := strings.TrimSpace(pending + line)
		pending = ""
		command, comment := splitComment(full)
		marked := slices.ContainsFunc(checkOnlyMarks, func(m string) bool { return strings.Contains(comment, m) })
		if command == "" {
			blockCheckOnly = blockCheckOnly || marked
			continue
		}
		block = append(block, docCommand{file: rel, line: pendingLine, text: command, checkOnly: blockCheckOnly || marked,
			eventually: strings.Contains(comment, eventuallyMark)})
	}
	if in {
		t.Fatalf("%s: a ```sh block is not closed", rel)
	}
	return blocks
}

// splitComment cuts a shell line at its comment: a # that starts a word
// outside quotes.
func splitComment(line string) (command, comment string) {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimSpace(line[:i]), line[i+1:]
		}
	}
	return strings.TrimSpace(line), ""
}

// TestDocumentedCommands runs or checks every command of the ```sh blocks
// of README.md and docs/*.md against a server started as make run starts
// it, on the embedded sample, on 127.0.0.1: curl lines are sent with
// net/http and their jq and grep filters applied, companydocs search lines
// run against the server's data directory; companydocs lines are checked
// against the command's -h (the command and every flag must exist), make
// lines against the Makefile's targets, go test lines against the
// package's tests. A command the test cannot run or check fails it, and
// so does a documented flag, route or target that does not exist.
func TestDocumentedCommands(t *testing.T) {
	d := newDocRunner(t)
	_, profiles, _ := d.server.Live.Current()
	ran, checked := 0, 0
	for _, path := range documentationFiles(t) {
		env := map[string]string{"KEY": d.server.DemoKey}
		for _, block := range shellBlocks(t, path) {
			for _, c := range block {
				var err error
				if c.checkOnly {
					err = d.check(c.text)
					checked++
				} else {
					var didRun bool
					didRun, err = d.run(c.text, env)
					for deadline := time.Now().Add(eventuallyWithin); err != nil && c.eventually && time.Now().Before(deadline); {
						time.Sleep(200 * time.Millisecond)
						didRun, err = d.run(c.text, env)
					}
					if didRun {
						ran++
					} else {
						checked++
					}
				}
				if err != nil {
					t.Errorf("%s\n\t%v", c, err)
				}
			}
		}
	}
	t.Logf("%d documented commands run, %d checked", ran, checked)
	if ran < 15 || checked < 10 {
		t.Errorf("only %d commands run and %d checked: the blocks were not found", ran, checked)
	}
	// docs/watches.md's recipe ingests an edited sample and then the
	// sample again: the server must end on as many profiles as it began
	// with (an ingest without the sample's GLEIF file loses some).
	for deadline := time.Now().Add(eventuallyWithin); ; time.Sleep(100 * time.Millisecond) {
		_, now, _ := d.server.Live.Current()
		if now == profiles {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the server serves %d profiles after the documented commands, %d before", now, profiles)
			break
		}
	}
	if d.receiver == nil {
		t.Error("no documented receiver (docs/watches.md's recipe) ran")
	} else if got := d.receiver.waitFor("company.changed", eventuallyWithin); got == "" {
		t.Errorf("the receiver of docs/watches.md's recipe got no company.changed event; it got:\n%s", d.receiver.all())
	}
}

// docReceiver is the webhook receiver a documented "nc -lk HOST PORT"
// starts: an HTTP server on HOST and a free port that answers 204 and
// keeps what it got. The port stands in for PORT in later commands.
type docReceiver struct {
	addr, documented string // actual and documented host:port
	mu               sync.Mutex
	bodies           []string
}

func (r *docReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	r.mu.Lock()
	r.bodies = append(r.bodies, req.Method+" "+req.URL.Path+" "+string(body))
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *docReceiver) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.bodies, "\n")
}

// waitFor returns the first request whose body holds text, waiting up to
// within; "" if none came.
func (r *docReceiver) waitFor(text string, within time.Duration) string {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		for _, b := range strings.Split(r.all(), "\n") {
			if strings.Contains(b, text) {
				return b
			}
		}
		if time.Now().After(deadline) {
			return ""
		}
	}
}

// startReceiver runs "nc -lk HOST PORT" as a receiver on HOST.
func (d *docRunner) startReceiver(args []string) error {
	if len(args) != 4 || args[1] != "-lk" || args[2] != "127.0.0.1" {
		return fmt.Errorf("the documentation test runs nc as a receiver: nc -lk 127.0.0.1 PORT, not %q", strings.Join(args, " "))
	}
	if d.receiver != nil {
		return errors.New("a second receiver")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	d.receiver = &docReceiver{addr: ln.Addr().String(), documented: "127.0.0.1:" + args[3]}
	srv := &http.Server{Handler: d.receiver, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	d.t.Cleanup(func() { srv.Close() })
	return nil
}

// docRunner runs and checks documented commands.
type docRunner struct {
	t        *testing.T
	server   *e2e.TestServer
	makefile map[string]bool // targets
	help     map[string]map[string]bool
	receiver *docReceiver // the one "nc -lk" started, nil before
}

func newDocRunner(t *testing.T) *docRunner {
	t.Helper()
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	d := &docRunner{t: t, makefile: map[string]bool{}, help: map[string]map[string]bool{}}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9-]*):`).FindAllStringSubmatch(string(makefile), -1) {
		d.makefile[m[1]] = true
	}
	// As make run: serve --demo on ./var, which it fills with the
	// embedded sample on first start. Relative paths of the commands
	// (./var, orders-backup.db) land in a temporary directory, where
	// data/ is the repository's.
	work := t.TempDir()
	if err := os.Symlink(filepath.Join(repoRoot, "data"), filepath.Join(work, "data")); err != nil {
		t.Fatal(err)
	}
	// The flags of docs/watches.md's recipe, which calls a receiver on
	// 127.0.0.1 over http.
	d.server = e2e.StartServer(t, filepath.Join(work, "var"), "--demo", "--webhook-allow-http", "--webhook-allow-private")
	t.Chdir(work)
	return d
}

// run runs a command line, or checks it when it is not something that can
// be run here (make, go test, most companydocs commands); didRun says
// which.
func (d *docRunner) run(line string, env map[string]string) (didRun bool, err error) {
	words, err := shellWords(line, env, d)
	if err != nil {
		return false, err
	}
	if d.receiver != nil {
		for _, stage := range words {
			for i := range stage {
				stage[i] = strings.ReplaceAll(stage[i], d.receiver.documented, d.receiver.addr)
			}
		}
	}
	if len(words) == 1 && words[0][0] == "nc" {
		return true, d.startReceiver(words[0])
	}
	if len(words) == 1 && len(words[0]) == 1 && isAssignment(words[0][0]) {
		name, value, _ := strings.Cut(words[0][0], "=")
		env[name] = value
		return true, nil
	}
	if len(words) > 1 || words[0][0] == "curl" {
		_, err := d.pipeline(words)
		return true, err
	}
	args := stripEnv(words[0])
	if args[0] == "export" {
		for _, a := range args[1:] {
			name, value, ok := strings.Cut(a, "=")
			if !ok {
				return false, fmt.Errorf("export %q sets nothing", a)
			}
			env[name] = value
		}
		return true, nil
	}
	if cmd, ok := companydocsArgs(args); ok && len(cmd) > 0 && (slices.Contains(runnableCommands(), cmd[0]) || slices.Contains(cmd, "-h")) {
		if err := d.checkCompanydocs(cmd); err != nil {
			return false, err
		}
		out, err := d.companydocs(cmd)
		if err == nil && cmd[0] == "search" && strings.Contains(out, "No candidates.") {
			err = fmt.Errorf("the documented search finds nothing on the embedded sample:\n%s", out)
		}
		return true, err
	}
	return false, d.checkWords(args)
}

// runnableCommands are the companydocs commands the test runs: on the
// embedded sample they need nothing else, and they work while the server
// runs. The others (serve, accounts on a data directory of its own) are
// checked.
func runnableCommands() []string {
	return []string{"help", "ingest", "search", "store"}
}

// check checks a command line without running anything.
func (d *docRunner) check(line string) error {
	words, err := shellWords(line, nil, nil)
	if err != nil {
		return err
	}
	for _, stage := range words {
		args := stripEnv(stage)
		if len(args) == 0 || (len(args) == 1 && isAssignment(stage[0])) {
			continue
		}
		if args[0] == "export" {
			continue
		}
		if err := d.checkWords(args); err != nil {
			return err
		}
	}
	return nil
}

// checkWords checks one command: make targets, go test packages and test
// names, companydocs commands and flags.
func (d *docRunner) checkWords(args []string) error {
	if cmd, ok := companydocsArgs(args); ok {
		return d.checkCompanydocs(cmd)
	}
	switch args[0] {
	case "make":
		return d.checkMake(args[1:])
	case "go":
		if len(args) > 1 && args[1] == "test" {
			return checkGoTest(args[2:])
		}
	case "curl":
		return errors.New("a curl line must run on the embedded sample; it cannot be marked as needing other data")
	case "sudo", "sudoedit", "journalctl":
		return d.checkPackageCommand(args)
	}
	return fmt.Errorf("the documentation test knows no way to run or check %q: show it in prose, or teach app/e2e/docs/docs_test.go", args[0])
}

// companydocsArgs returns the arguments after the binary when args call
// companydocs (installed, bin/companydocs or go run ./cmd/companydocs).
func companydocsArgs(args []string) ([]string, bool) {
	switch {
	case args[0] == "companydocs" || args[0] == "bin/companydocs" || args[0] == "./bin/companydocs":
		return args[1:], true
	case len(args) > 2 && args[0] == "go" && args[1] == "run" && strings.TrimSuffix(args[2], "/") == "./cmd/companydocs":
		return args[3:], true
	}
	return nil, false
}

// checkCompanydocs checks that the command exists and that its -h lists
// every flag the documented line uses.
func (d *docRunner) checkCompanydocs(args []string) error {
	if len(args) == 0 {
		return errors.New("companydocs without a command")
	}
	command := args[:1]
	if (args[0] == "accounts" || args[0] == "store") && len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		command = args[:2]
	}
	switch args[0] {
	case "help", "--version":
		if len(args) > 1 {
			return fmt.Errorf("%s takes no arguments", args[0])
		}
		_, err := d.companydocs(args)
		return err
	}
	flags, err := d.flagsOf(command)
	if err != nil {
		return err
	}
	for _, a := range args[len(command):] {
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			continue
		}
		if !flags[name] {
			return fmt.Errorf("companydocs %s has no flag --%s (its -h lists %v)", strings.Join(command, " "), name, sortedKeys(flags))
		}
	}
	return nil
}

// flagsOf returns the flags that "companydocs COMMAND -h" lists.
func (d *docRunner) flagsOf(command []string) (map[string]bool, error) {
	key := strings.Join(command, " ")
	if flags, ok := d.help[key]; ok {
		return flags, nil
	}
	out, err := d.companydocs(append(slices.Clone(command), "-h"))
	if err != nil {
		return nil, fmt.Errorf("companydocs %s -h: %v", key, err)
	}
	flags := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(line, "  -") {
			flags[strings.TrimLeft(f[0], "-")] = true
		}
	}
	if len(flags) == 0 && command[0] != "version" {
		return nil, fmt.Errorf("companydocs %s -h lists no flags:\n%s", key, out)
	}
	d.help[key] = flags
	return flags, nil
}

// companydocs runs the command as main does and returns its output; a
// non-zero exit is an error.
func (d *docRunner) companydocs(args []string) (string, error) {
	var out, errOut strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := app.RunCommand(ctx, args, &out, &errOut)
	if code := app.ExitCode(err); code != 0 {
		return "", fmt.Errorf("companydocs %s exits %d: %s%s", strings.Join(args, " "), code, errOut.String(), app.ErrorLine(err))
	}
	return out.String(), nil
}

// checkMake checks that every target exists; ARGS given to make run must
// be flags of serve.
func (d *docRunner) checkMake(args []string) error {
	targets := 0
	for _, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok {
			if name == "ARGS" && slices.Contains(args, "run") {
				words, err := shellWords(value, nil, nil)
				if err != nil {
					return err
				}
				if err := d.checkCompanydocs(append([]string{"serve"}, words[0]...)); err != nil {
					return fmt.Errorf("ARGS: %v", err)
				}
			}
			continue
		}
		if !d.makefile[a] {
			return fmt.Errorf("the Makefile has no target %q", a)
		}
		targets++
	}
	if targets == 0 {
		return errors.New("make without a target")
	}
	return nil
}

// checkGoTest checks that the packages exist and that -run matches a test
// in them.
func checkGoTest(args []string) error {
	var pattern string
	var pkgs []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-run" && i+1 < len(args):
			pattern = args[i+1]
			i++
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, strings.TrimSuffix(strings.TrimSuffix(a, "..."), "/"))
		}
	}
	if len(pkgs) == 0 {
		return errors.New("go test names no package of the repository")
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return fmt.Errorf("-run %q: %v", pattern, err)
	}
	for _, pkg := range pkgs {
		files, _ := filepath.Glob(filepath.Join(repoRoot, pkg, "*_test.go"))
		if len(files) == 0 {
			return fmt.Errorf("package %s has no tests", pkg)
		}
		found := false
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllStringSubmatch(string(src), -1) {
				found = found || re.MatchString(m[1])
			}
		}
		if !found {
			return fmt.Errorf("no test of %s matches -run %q", pkg, pattern)
		}
	}
	return nil
}

// pipeline runs stages joined by pipes: curl first, then jq or grep; or
// bzcat of a file, then sed, into a file (> FILE ending the last stage).
func (d *docRunner) pipeline(stages [][]string) (string, error) {
	var out, into string
	if last := stages[len(stages)-1]; len(last) > 2 && last[len(last)-2] == ">" {
		into = last[len(last)-1]
		stages[len(stages)-1] = last[:len(last)-2]
	}
	for i, stage := range stages {
		var err error
		switch {
		case i == 0 && stage[0] == "curl":
			out, err = d.curl(stage[1:])
		case i == 0 && stage[0] == "bzcat" && len(stage) == 2:
			out, err = bzcat(stage[1])
		case i > 0 && stage[0] == "jq":
			out, err = jq(stage[1:], out)
		case i > 0 && stage[0] == "grep" && len(stage) == 2:
			out, err = grep(stage[1], out)
		case i > 0 && stage[0] == "sed" && len(stage) == 2:
			out, err = sed(stage[1], out)
		default:
			err = fmt.Errorf("the documentation test runs curl piped into jq or grep, or bzcat into sed, not %q", strings.Join(stage, " "))
		}
		if err != nil {
			return "", err
		}
	}
	if into != "" {
		return "", os.WriteFile(into, []byte(out), 0o644)
	}
	return out, nil
}

// bzcat returns a bzip2 file decompressed.
func bzcat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(bzip2.NewReader(f))
	return string(b), err
}

// sed runs one s/PATTERN/REPLACEMENT/ (a trailing g for every match of a
// line) on each line of in; the pattern must match at least once, so that
// a documented edit that edits nothing fails.
func sed(expr, in string) (string, error) {
	parts := strings.Split(expr, "/")
	if len(parts) != 4 || parts[0] != "s" || (parts[3] != "" && parts[3] != "g") {
		return "", fmt.Errorf("the documentation test runs sed 's/PATTERN/REPLACEMENT/', not %q", expr)
	}
	re, err := regexp.Compile(parts[1])
	if err != nil {
		return "", fmt.Errorf("sed %q: %v", expr, err)
	}
	lines, edited := strings.SplitAfter(in, "\n"), 0
	for i, line := range lines {
		loc := re.FindStringIndex(line)
		if loc == nil {
			continue
		}
		edited++
		if parts[3] == "g" {
			lines[i] = re.ReplaceAllLiteralString(line, parts[2])
		} else {
			lines[i] = line[:loc[0]] + parts[2] + line[loc[1]:]
		}
	}
	if edited == 0 {
		return "", fmt.Errorf("sed %q edits no line", expr)
	}
	return strings.Join(lines, ""), nil
}

// curl sends the request a curl command line describes to the test
// server, as curl would; an answer other than 2xx is an error.
func (d *docRunner) curl(args []string) (string, error) {
	method, target, body, hasBody := "", "", "", false
	header := http.Header{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("curl %s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch a {
		case "-s", "--silent", "-S", "--show-error":
		case "-X", "--request":
			method, err = next()
		case "-H", "--header":
			var h string
			if h, err = next(); err == nil {
				name, value, ok := strings.Cut(h, ":")
				if !ok {
					return "", fmt.Errorf("curl header %q has no colon", h)
				}
				header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
			}
		case "-d", "--data", "--data-raw", "--data-binary":
			body, err = next()
			hasBody = true
		default:
			if strings.HasPrefix(a, "-") {
				return "", fmt.Errorf("the documentation test does not know curl's %s", a)
			}
			if target != "" {
				return "", fmt.Errorf("curl with two URLs, %q and %q", target, a)
			}
			target = a
		}
		if err != nil {
			return "", err
		}
	}
	path, ok := localPath(target)
	if !ok {
		return "", fmt.Errorf("curl %q: documented requests go to localhost:8080, where make run listens", target)
	}
	if method == "" {
		method = http.MethodGet
		if hasBody {
			method = http.MethodPost
		}
	}
	if hasBody && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "application/x-www-form-urlencoded") // what curl -d sends
	}
	req, err := http.NewRequest(method, d.server.Base+path, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header = header
	resp, err := d.server.Client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("%s %s answered %d: %s", method, path, resp.StatusCode, respBody)
	}
	return string(respBody), nil
}

// localPath returns the path and query of a URL on localhost:8080.
func localPath(target string) (string, bool) {
	target = strings.TrimPrefix(target, "http://")
	for _, host := range []string{"localhost:8080", "127.0.0.1:8080"} {
		if rest, ok := strings.CutPrefix(target, host); ok && (rest == "" || rest[0] == '/') {
			if rest == "" {
				rest = "/"
			}
			return rest, true
		}
	}
	return "", false
}

// grep keeps the lines of in that contain pattern; none is an error.
func grep(pattern, in string) (string, error) {
	var out []string
	for _, line := range strings.Split(in, "\n") {
		if strings.Contains(line, pattern) {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return "", fmt.Errorf("no line contains %q", pattern)
	}
	return strings.Join(out, "\n") + "\n", nil
}

// jq applies the part of jq the documentation uses: paths (.a.b[0],
// .a[]), object construction ({a, b: .c.d}), keys and pipes, with -r.
// A filter that yields nothing or null is an error: a documented filter
// shows something.
func jq(args []string, in string) (string, error) {
	raw, filter := false, ""
	for _, a := range args {
		switch {
		case a == "-r":
			raw = true
		case a == "-c": // the output is compact anyway
		case strings.HasPrefix(a, "-"):
			return "", fmt.Errorf("the documentation test does not know jq's %s", a)
		default:
			filter = a
		}
	}
	var doc any
	if err := json.Unmarshal([]byte(in), &doc); err != nil {
		return "", fmt.Errorf("jq: the answer is not JSON: %v", err)
	}
	values := []any{doc}
	for _, stage := range strings.Split(filter, "|") {
		var next []any
		for _, v := range values {
			out, err := jqStage(strings.TrimSpace(stage), v)
			if err != nil {
				return "", fmt.Errorf("jq %q: %v", filter, err)
			}
			next = append(next, out...)
		}
		values = next
	}
	if len(values) == 0 {
		return "", fmt.Errorf("jq %q yields nothing", filter)
	}
	var out strings.Builder
	for _, v := range values {
		if v == nil {
			return "", fmt.Errorf("jq %q yields null in %s", filter, in)
		}
		if s, ok := v.(string); ok && raw {
			out.WriteString(s + "\n")
			continue
		}
		b, _ := json.Marshal(v)
		out.Write(append(b, '\n'))
	}
	return out.String(), nil
}

func jqStage(stage string, v any) ([]any, error) {
	switch {
	case stage == "keys":
		m, ok := v.(map[string]any)
		if !ok {
			return nil, errors.New("keys of a non-object")
		}
		var keys []any
		for _, k := range sortedKeys(m) {
			keys = append(keys, k)
		}
		return []any{keys}, nil
	case strings.HasPrefix(stage, "{") && strings.HasSuffix(stage, "}"):
		obj := map[string]any{}
		for _, field := range strings.Split(stage[1:len(stage)-1], ",") {
			name, path, ok := strings.Cut(strings.TrimSpace(field), ":")
			if !ok {
				path = "." + name
			}
			got, err := jqPath(strings.TrimSpace(path), v)
			if err != nil || len(got) != 1 || got[0] == nil {
				return nil, fmt.Errorf("%s: no value in %v", strings.TrimSpace(field), v)
			}
			obj[strings.TrimSpace(name)] = got[0]
		}
		return []any{obj}, nil
	}
	return jqPath(stage, v)
}

var jqStep = regexp.MustCompile(`^(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d*)\]|\.)`)

// jqPath follows a path such as .candidates[0].name or .orders[].id.
func jqPath(path string, v any) ([]any, error) {
	if !strings.HasPrefix(path, ".") {
		return nil, fmt.Errorf("%q is not a path", path)
	}
	values := []any{v}
	for path != "" {
		m := jqStep.FindStringSubmatch(path)
		if m == nil || m[0] == "" {
			return nil, fmt.Errorf("cannot read the path at %q", path)
		}
		path = path[len(m[0]):]
		var next []any
		for _, v := range values {
			switch {
			case m[1] != "":
				obj, _ := v.(map[string]any)
				field, ok := obj[m[1]]
				if !ok {
					return nil, fmt.Errorf("no field %q", m[1])
				}
				next = append(next, field)
			case strings.HasPrefix(m[0], "["):
				list, ok := v.([]any)
				if !ok {
					return nil, errors.New("indexing a non-array")
				}
				if m[2] == "" {
					next = append(next, list...)
					continue
				}
				var i int
				fmt.Sscan(m[2], &i)
				if i >= len(list) {
					return nil, fmt.Errorf("index %d of %d elements", i, len(list))
				}
				next = append(next, list[i])
			default:
				next = append(next, v)
			}
		}
		values = next
	}
	return values, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func isAssignment(word string) bool {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(word)
}

// stripEnv drops the VAR=value words before a command.
func stripEnv(words []string) []string {
	for len(words) > 1 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

// shellWords splits a command line into the words of its pipeline stages
// as a POSIX shell would: single and double quotes, backslashes, $NAME,
// ${NAME} and $(...) (run by d). With env nil nothing is expanded, as
// for a line that is only checked.
func shellWords(line string, env map[string]string, d *docRunner) ([][]string, error) {
	var stages [][]string
	var words []string
	var word strings.Builder
	inWord := false
	endWord := func() {
		if inWord {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	expand := func(rest string) (string, int, error) {
		if env == nil {
			return "$", 1, nil
		}
		if strings.HasPrefix(rest, "$(") {
			end := matchingParen(rest[1:])
			if end < 0 {
				return "", 0, errors.New("$( without )")
			}
			inner, err := shellWords(rest[2:end+1], env, d)
			if err != nil {
				return "", 0, err
			}
			out, err := d.pipeline(inner)
			return strings.TrimRight(out, "\n"), end + 2, err
		}
		m := regexp.MustCompile(`^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`).FindStringSubmatch(rest)
		if m == nil {
			return "$", 1, nil
		}
		name := m[1] + m[2]
		value, ok := env[name]
		if !ok {
			return "", 0, fmt.Errorf("$%s is set by no earlier line of the file", name)
		}
		return value, len(m[0]), nil
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			endWord()
			i++
		case c == '|':
			endWord()
			stages = append(stages, words)
			words = nil
			i++
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unclosed '")
			}
			word.WriteString(line[i+1 : i+1+end])
			inWord = true
			i += end + 2
		case c == '"':
			inWord = true
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch {
				case line[i] == '\\' && i+1 < len(line) && strings.IndexByte(`"\$`+"`", line[i+1]) >= 0:
					word.WriteByte(line[i+1])
					i++
				case line[i] == '$':
					value, n, err := expand(line[i:])
					if err != nil {
						return nil, err
					}
					word.WriteString(value)
					i += n - 1
				default:
					word.WriteByte(line[i])
				}
			}
			if i >= len(line) {
				return nil, errors.New(`unclosed "`)
			}
			i++
		case c == '\\' && i+1 < len(line):
			word.WriteByte(line[i+1])
			inWord = true
			i += 2
		case c == '$':
			value, n, err := expand(line[i:])
			if err != nil {
				return nil, err
			}
			word.WriteString(value)
			inWord = true
			i += n
		default:
			word.WriteByte(c)
			inWord = true
			i++
		}
	}
	endWord()
	if len(words) == 0 {
		return nil, errors.New("an empty pipeline stage")
	}
	return append(stages, words), nil
}

// matchingParen returns the index of the ) that closes the ( at s[0],
// skipping quoted text, or -1.
func matchingParen(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// TestDocumentLinks checks every relative link of README.md and docs/*.md:
// the file must exist, and an anchor (#...) must name a heading of the
// Markdown file it points into, as GitHub derives anchors from headings.
func TestDocumentLinks(t *testing.T) {
	link := regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors[path] = headingAnchors(string(text))
		return anchors[path]
	}
	checked := 0
	for _, path := range documentationFiles(t) {
		rel, _ := filepath.Rel(repoRoot, path)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range proseLines(string(text)) {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				file, anchor, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), file)
				}
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s:%d: link %s: %v", rel, i+1, target, err)
					continue
				}
				if anchor != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[anchor] {
					destRel, _ := filepath.Rel(repoRoot, dest)
					t.Errorf("%s:%d: link %s: no heading of %s has the anchor #%s (it has %v)", rel, i+1, target, destRel, anchor, sortedKeys(anchorsOf(dest)))
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links found", checked)
	}
}

// proseLines returns the lines of a Markdown text with the lines of code
// blocks and the code spans blanked, so that line numbers still match.
func proseLines(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	span := regexp.MustCompile("`[^`]*`")
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
			continue
		}
		lines[i] = span.ReplaceAllString(line, "")
	}
	return lines
}

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown text: lower case, punctuation dropped, spaces as hyphens, a
// repeated anchor numbered.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	in := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		heading, ok := strings.CutPrefix(line, "#")
		if in || !ok {
			continue
		}
		heading = strings.TrimSpace(strings.TrimLeft(heading, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor = fmt.Sprintf("%s-%d", anchor, n)
		} else {
			seen[anchor] = 1
		}
		out[anchor] = true
	}
	return out
}

// TestDocumentedFlagTables checks the flag tables of docs/operations.md
// against the commands' -h: each table lists exactly the flags of its
// command, so a flag is neither documented without existing nor added
// without being documented.
func TestDocumentedFlagTables(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The tables whose rows name no command: the heading above says it.
	commandOfHeading := map[string]string{"serve": "serve", "ingest": "ingest", "Migrate orders.db to PostgreSQL": "store migrate"}
	// A command cell "accounts" stands for all of its subcommands.
	expand := map[string][]string{"accounts": {"accounts create", "accounts list", "accounts credit"}}
	flag := regexp.MustCompile("`--([a-z0-9-]+)`")
	command := regexp.MustCompile("^`?([a-z]+(?: [a-z]+)?)`?$")
	documented := map[string]map[string]bool{}
	heading, commandColumn, flagTable, inTable := "", false, false, false
	for _, line := range strings.Split(string(text), "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			heading = h
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable { // the header of a table
			inTable = true
			commandColumn = strings.HasPrefix(line, "| command | flag |")
			flagTable = commandColumn || strings.HasPrefix(line, "| flag |")
			continue
		}
		first := strings.TrimSpace(cells[1])
		if !flagTable || strings.HasPrefix(first, "---") {
			continue
		}
		var commands []string
		flagCell := first
		if commandColumn {
			flagCell = strings.TrimSpace(cells[2])
			for _, c := range strings.Split(first, ",") {
				m := command.FindStringSubmatch(strings.TrimSpace(c))
				if m == nil {
					t.Fatalf("docs/operations.md: cannot read the command cell %q", first)
				}
				commands = append(commands, m[1])
			}
		} else if c, ok := commandOfHeading[heading]; ok {
			commands = []string{c}
		} else {
			continue
		}
		for _, c := range commands {
			if documented[c] == nil {
				documented[c] = map[string]bool{}
			}
			for _, m := range flag.FindAllStringSubmatch(flagCell, -1) {
				documented[c][m[1]] = true
			}
		}
	}
	d := &docRunner{t: t, help: map[string]map[string]bool{}}
	for _, c := range []string{"serve", "ingest", "accounts", "search", "store check", "store backup", "store migrate", "publish", "nodes"} {
		subcommands := expand[c]
		if subcommands == nil {
			subcommands = []string{c}
		}
		real := map[string]bool{}
		for _, sub := range subcommands {
			flags, err := d.flagsOf(strings.Fields(sub))
			if err != nil {
				t.Fatal(err)
			}
			for f := range flags {
				real[f] = true
			}
		}
		for f := range real {
			if !documented[c][f] {
				t.Errorf("companydocs %s has --%s, which the %s table of docs/operations.md does not list", c, f, c)
			}
		}
		for f := range documented[c] {
			if !real[f] {
				t.Errorf("docs/operations.md lists --%s for companydocs %s, which has no such flag", f, c)
			}
		}
	}
}

// TestSampleCountSaidOnce: the embedded sample's record count is one
// figure, in one place (README's "Data and attribution"), and it is the
// sample's: no other document states a count of the sample's records
// (the benchmarks' history, a record of past days, aside).
func TestSampleCountSaidOnce(t *testing.T) {
	records := bytes.Count(mustReadAll(t, bzip2.NewReader(bytes.NewReader(data.Sample))), []byte("\n"))
	figure := thousands(records)
	said := 0
	for _, path := range append(documentationFiles(t), filepath.Join(repoRoot, "RELIABILITY.md")) {
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if rel == filepath.Join("docs", "benchmarks-history.md") {
			continue
		}
		said += strings.Count(string(text), figure)
		for _, m := range regexp.MustCompile(`(?i)embedded sample[^.]{0,40}?\b(\d{1,3}(,\d{3})+) (real )?(register )?(records|profiles)`).FindAllStringSubmatch(string(text), -1) {
			t.Errorf("%s states the sample's size as %s: say it in README's Data and attribution only", rel, m[1])
		}
	}
	readme, _ := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if !strings.Contains(string(readme), "`data/sample.jsonl.bz2` holds "+figure+" real records") || said != 1 {
		t.Errorf("the sample holds %s records; README's Data and attribution must say so, and no document else (said %d times)", figure, said)
	}
}

func mustReadAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// thousands writes n with a comma between thousands, as the documents do.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
