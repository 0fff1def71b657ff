package deploy_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// stepTimeout bounds one run of foreground commands; the longest is the
// ingest of the sample (under a minute).
const stepTimeout = 4 * time.Minute

// stopGrace is how long a background command has to exit after SIGTERM
// before SIGKILL: a node without requests in flight exits at once; weed
// takes about 15 s to stop cleanly, which a store thrown away need not.
const stopGrace = 5 * time.Second

// runBlock runs a block on m: its foreground commands with bash, one run
// per stretch between background lines, and each background line as a
// process of its own.
func (w *world) runBlock(t *testing.T, b guideBlock, m *machine) {
	t.Helper()
	var fg []string
	flush := func() {
		if len(fg) > 0 {
			w.runForeground(t, b, m, strings.Join(fg, "\n"))
			fg = nil
		}
	}
	for _, line := range logicalLines(w.substitute(t, m, b.text)) {
		if command, ok := backgroundCommand(line); ok {
			flush()
			w.startBackground(t, b, m, command)
			continue
		}
		fg = append(fg, line)
	}
	flush()
}

// environ is the environment of a command on m: the base, m's PATH (its
// /usr/local/bin first, where the guide installs the binaries, then
// PostgreSQL's client tools), m's own, then what the guide exported.
func (w *world) environ(m *machine) []string {
	path := strings.Join([]string{filepath.Join(m.root, "usr", "local", "bin"), w.pgBin, os.Getenv("PATH")}, string(os.PathListSeparator))
	env := append(append(append([]string{}, w.base...), "PATH="+path), m.env...)
	keys := make([]string, 0, len(w.exports))
	for k := range w.exports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+w.exports[k])
	}
	return env
}

// runForeground runs commands with bash on m and keeps what they
// exported. A background command that fails meanwhile ends the run.
func (w *world) runForeground(t *testing.T, b guideBlock, m *machine, commands string) {
	t.Helper()
	state := filepath.Join(w.dir, "exported")
	env := w.environ(m)
	ctx, cancel := context.WithTimeout(w.ctx, stepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+commands+"\nenv -0 >"+shellQuote(state))
	cmd.Dir, cmd.Env = m.src, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// its own process group, so that a cancelled run takes its children
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var died *background
	done := make(chan struct{})
	go func() {
		select {
		case died = <-w.failed:
			cancel()
		case <-done:
		}
	}()
	err := cmd.Run()
	close(done)
	t.Logf("docs/deploy.md:%d on %s:\n%s", b.line, m.name, indent(tail(out.String(), 3000)))
	if died != nil {
		t.Fatalf("docs/deploy.md:%d on %s: the background command %q exited: %v\n%s", died.line, died.machine, died.command, died.err, indent(tail(died.log(), 4000)))
	}
	if err != nil {
		t.Fatalf("docs/deploy.md:%d on %s failed: %v\n%s%s", b.line, m.name, err, indent(tail(out.String(), 4000)), w.backgroundLogs())
	}
	w.keepExports(t, state, env)
}

// keepExports reads the environment a run ended with and keeps what it
// set beyond the one it started with.
func (w *world) keepExports(t *testing.T, state string, started []string) {
	t.Helper()
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatalf("read the environment the commands ended with: %v", err)
	}
	before := map[string]string{}
	for _, kv := range started {
		k, v, _ := strings.Cut(kv, "=")
		before[k] = v
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok, k == "PWD", k == "OLDPWD", k == "SHLVL", k == "_":
		case before[k] != v:
			w.exports[k] = v
		}
	}
}

// background is a command of the guide that runs until the test ends or
// the guide stops it.
type background struct {
	machine, command string
	line             int
	logFile          string
	cmd              *exec.Cmd
	done             chan struct{}
	err              error
	stopping         atomic.Bool
}

func (p *background) log() string {
	data, _ := os.ReadFile(p.logFile)
	return string(data)
}

// startBackground starts a background line on m (exec'd by bash, so its
// pid is the command's: a node's is the one its LOCK file names) and
// stops it when the test ends.
func (w *world) startBackground(t *testing.T, b guideBlock, m *machine, command string) {
	t.Helper()
	w.started++
	p := &background{machine: m.name, command: command, line: b.line, done: make(chan struct{}),
		logFile: filepath.Join(w.dir, fmt.Sprintf("background-%d-%s.log", w.started, m.name))}
	f, err := os.Create(p.logFile)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command("bash", "-c", "exec "+command)
	p.cmd.Dir, p.cmd.Env = m.src, w.environ(m)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	// its own process group, and killed with the test binary should
	// that die first
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("docs/deploy.md:%d on %s: start %q: %v", b.line, m.name, command, err)
	}
	t.Logf("docs/deploy.md:%d on %s: started in the background (pid %d): %s", b.line, m.name, p.cmd.Process.Pid, command)
	go func() {
		p.err = p.cmd.Wait()
		f.Close()
		close(p.done)
		if p.err != nil && !p.stopping.Load() {
			w.failed <- p
		}
	}()
	w.backgrounds = append(w.backgrounds, p)
	t.Cleanup(p.stop)
}

// stop ends the command: SIGTERM to its process group, SIGKILL after
// stopGrace.
func (p *background) stop() {
	p.stopping.Store(true)
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// backgroundLogs is the end of every background command's output, for a
// failure's message.
func (w *world) backgroundLogs() string {
	var b strings.Builder
	for _, p := range w.backgrounds {
		fmt.Fprintf(&b, "\nbackground, docs/deploy.md:%d on %s: %s\n%s", p.line, p.machine, p.command, indent(tail(p.log(), 2000)))
	}
	return b.String()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n\t")
}
