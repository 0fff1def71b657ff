package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// guideTimeout bounds the whole run of the guide; it takes 1.5 to 3
// minutes on 2 cores (the build, the ingest of the sample and SeaweedFS's
// start are most of it).
const guideTimeout = 8 * time.Minute

// TestDocumentedCommands runs docs/deploy.md as an operator would: every ```bash
// block, in order, with bash (set -euo pipefail), on the machine its
// <!-- deploy-guide: on MACHINE --> line names. The machines are played
// by directories and loopback ports (see machine and substitute): one
// PostgreSQL cluster the test starts bare, its superuser reached over the
// socket as on Debian and every TCP login asked for a password, and the
// SeaweedFS the guide starts itself. A line ending in " &" runs in the
// background until the test ends (or the guide stops it). Variables a
// block exports are carried to the later blocks, as the guide says.
//
// The blocks are ```bash, not ```sh: cmd/companydocs's
// TestDocumentedCommands reads the ```sh blocks of docs/*.md and runs them
// against its one demo server, which cannot run psql, weed or signed curl
// requests. The ```ini unit and the ```haproxy configuration are shown,
// not run; checkShownFiles keeps them naming what the blocks run.
//
// Afterwards it checks what a reader would: both nodes ready and
// answering a search, companydocs nodes listing both on the live
// generation, the backup holding the tables and the account made.
func TestDocumentedCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), guideTimeout)
	defer cancel()
	repo := repoRoot(t)
	blocks := readGuide(t, filepath.Join(repo, "docs", "deploy.md"))
	checkShownFiles(t, blocks)
	w := newWorld(ctx, t, repo)
	began := time.Now()
	ran := 0
	for _, b := range blocks {
		if b.lang != "bash" {
			continue
		}
		for _, name := range b.machines {
			w.runBlock(t, b, w.machine(t, name))
			ran++
		}
	}
	t.Logf("%d blocks of docs/deploy.md ran in %s", ran, time.Since(began).Round(time.Second))
	w.checkNodes(ctx, t)
	w.checkBackup(t)
}

// repoRoot is the module's directory, from go env GOMOD.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatal("go env GOMOD names no go.mod: run the test inside the module")
	}
	return filepath.Dir(mod)
}

// guideBlock is a fenced block of docs/deploy.md.
type guideBlock struct {
	line     int      // of the opening fence
	lang     string   // the fence's info string: bash, ini, haproxy ...
	machines []string // where a bash block runs
	text     string
}

// markerRE is the line before a ```bash block that names where it runs.
var markerRE = regexp.MustCompile(`^<!-- deploy-guide: on ([a-z0-9-]+(?:, [a-z0-9-]+)*) -->$`)

// readGuide returns the fenced blocks of the guide. A ```bash block
// without a marker fails the test: every command shown is run somewhere.
func readGuide(t *testing.T, path string) []guideBlock {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	var blocks []guideBlock
	var machines []string
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if m := markerRE.FindStringSubmatch(trimmed); m != nil {
			machines = strings.Split(m[1], ", ")
			continue
		}
		lang, fence := strings.CutPrefix(trimmed, "```")
		if !fence {
			if trimmed != "" {
				machines = nil
			}
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("docs/deploy.md:%d: the block is not closed", i+1)
		}
		if (lang == "bash") != (machines != nil) {
			t.Fatalf("docs/deploy.md:%d: a ```bash block, and only such a block, follows a line <!-- deploy-guide: on MACHINE -->", i+1)
		}
		blocks = append(blocks, guideBlock{line: i + 1, lang: lang, machines: machines, text: strings.Join(lines[i+1:end], "\n")})
		machines, i = nil, end
	}
	if len(blocks) < 10 {
		t.Fatalf("docs/deploy.md holds %d blocks: the guide was not found", len(blocks))
	}
	return blocks
}

// logicalLines joins the lines a trailing backslash continues.
func logicalLines(text string) []string {
	var out, pending []string
	for _, line := range strings.Split(text, "\n") {
		pending = append(pending, line)
		if strings.HasSuffix(line, "\\") {
			continue
		}
		out = append(out, strings.Join(pending, "\n"))
		pending = nil
	}
	return out
}

// backgroundCommand returns the command of a line ending in " &".
func backgroundCommand(line string) (string, bool) {
	return strings.CutSuffix(strings.TrimRight(line, " "), " &")
}

// checkShownFiles keeps the files the guide shows but does not run
// naming what it runs: the unit's ExecStart is the weed server line of a
// block (with weed where the guide installs it), and the load balancer's
// servers are the addresses the nodes serve on.
func checkShownFiles(t *testing.T, blocks []guideBlock) {
	t.Helper()
	var weed []string
	var nodes []string
	for _, b := range blocks {
		for _, line := range logicalLines(b.text) {
			command, bg := backgroundCommand(line)
			words := strings.Fields(strings.ReplaceAll(command, "\\\n", " "))
			switch {
			case b.lang == "bash" && bg && len(words) > 1 && words[0] == "weed":
				weed = words[1:]
			case b.lang == "bash" && bg && slices.Contains(words, "serve"):
				if i := slices.Index(words, "--addr"); i > 0 && i+1 < len(words) && !slices.Contains(nodes, words[i+1]) {
					nodes = append(nodes, words[i+1])
				}
			case b.lang == "ini" && len(words) > 0 && strings.HasPrefix(words[0], "ExecStart="):
				if words[0] != "ExecStart=/usr/local/bin/weed" || !slices.Equal(words[1:], weed) {
					t.Errorf("docs/deploy.md:%d: the unit's ExecStart is not the weed server line the guide runs:\n%s\n%s", b.line, strings.Join(words, " "), strings.Join(weed, " "))
				}
			case b.lang == "haproxy" && len(words) > 2 && words[0] == "server" && !slices.Contains(nodes, words[2]):
				t.Errorf("docs/deploy.md:%d: the load balancer's server %s is no address a node serves on (%v)", b.line, words[2], nodes)
			}
		}
	}
	if len(weed) == 0 || len(nodes) != 2 {
		t.Errorf("docs/deploy.md: found weed server %q and nodes serving on %v; want one and two", weed, nodes)
	}
}

// checkNodes asks each node what a reader would: ready, and a search
// answered; then companydocs nodes: both on the live generation.
func (w *world) checkNodes(ctx context.Context, t *testing.T) {
	for _, name := range []string{"node-a", "node-b"} {
		base := fmt.Sprintf("http://127.0.0.1:%d", w.machine(t, name).ports[8080])
		if status, body := request(ctx, t, http.MethodGet, base+"/readyz", ""); status != http.StatusOK || !strings.Contains(body, `"ready"`) {
			t.Errorf("%s: /readyz answered %d: %s", name, status, body)
		}
		status, body := request(ctx, t, http.MethodPost, base+"/api/v1/documents/companies/search/", `{"query": "Rheinbahn AG Düsseldorf", "limit": 1}`)
		var answer struct {
			Candidates []struct{ Name string } `json:"candidates"`
		}
		if err := json.Unmarshal([]byte(body), &answer); status != http.StatusOK || err != nil || len(answer.Candidates) == 0 ||
			!strings.Contains(answer.Candidates[0].Name, "Rheinbahn") {
			t.Errorf("%s: a search for Rheinbahn AG Düsseldorf answered %d: %s", name, status, body)
		}
	}
	cmd := exec.CommandContext(ctx, filepath.Join(w.bin, "companydocs"), "nodes")
	cmd.Env = append(os.Environ(), "COMPANYDOCS_STORE="+w.exports["COMPANYDOCS_STORE"])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("companydocs nodes: %v\n%s", err, out)
	}
	var live []string
	serving := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[1] == "live":
			live = append(live, f[0])
		case len(f) > 1 && strings.HasPrefix(f[0], "node-"):
			serving[f[0]] = f[1]
		}
	}
	for _, name := range []string{"node-a", "node-b"} {
		if len(live) == 0 || serving[name] != live[0] {
			t.Errorf("companydocs nodes does not list %s serving the newest live generation %v:\n%s", name, live, out)
		}
	}
}

// request sends one request to a node and returns the status and body.
func request(ctx context.Context, t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, url, err)
		return 0, ""
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

// checkBackup reads the guide's backup: every table of the service's
// data, and the account the guide made.
func (w *world) checkBackup(t *testing.T) {
	dump := filepath.Join(w.machine(t, "db").root, "var", "backups", "companydocs", "companydocs.dump")
	list, err := exec.Command(filepath.Join(w.pgBin, "pg_restore"), "--list", dump).CombinedOutput()
	if err != nil {
		t.Fatalf("pg_restore --list %s: %v\n%s", dump, err, list)
	}
	for _, table := range []string{"accounts", "orders", "documents", "published_generations", "index_nodes", "goose_db_version"} {
		if !strings.Contains(string(list), "TABLE DATA public "+table+" ") {
			t.Errorf("the backup holds no data of table %s:\n%s", table, list)
		}
	}
	accounts, err := exec.Command(filepath.Join(w.pgBin, "pg_restore"), "--data-only", "--table=accounts", "--file=-", dump).CombinedOutput()
	if err != nil || !bytes.Contains(accounts, []byte("\nacme\t")) {
		t.Errorf("the backup's accounts hold no acme (%v):\n%s", err, accounts)
	}
}
