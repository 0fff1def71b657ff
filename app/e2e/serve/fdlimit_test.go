package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"companydocs/internal/e2e"
	"companydocs/internal/syncbuf"
)

// fdLimit is the file-descriptor limit the server runs under: enough to
// start and serve, so that idle client connections can use up the rest.
const fdLimit = 64

// TestSwapRetriedWhenFileDescriptorsRunOut runs the real server under a
// low file-descriptor limit (ulimit -n, which the Go runtime cannot raise
// past the hard limit), holds idle client connections until the process
// has no descriptor to spare, and publishes a new generation: the server
// stays up and keeps answering on the connections it has, serving the old
// generation; once connections are let go, the next poll swaps the new
// generation in. Before the fix, the failed open closed a nil bleve index
// and the process died.
func TestSwapRetriedWhenFileDescriptorsRunOut(t *testing.T) {
	dir := t.TempDir()
	sample := e2e.SampleFile(t)
	old := e2e.MustBuild(t, dir, 200, sample)
	srv := startLimitedServer(t, dir)
	held := srv.exhaust(t)
	next := e2e.MustBuild(t, dir, 300, sample)
	time.Sleep(5 * 200 * time.Millisecond) // five polls, each of which fails to open the generation
	if srv.exited() {
		t.Fatalf("the server died:\n%s", srv.stderr.String())
	}
	if got := servedGeneration(t, held[0]); got != old.ID {
		t.Fatalf("while out of descriptors the server serves %q, want the old %q", got, old.ID)
	}
	// bleve reports the failed open as "metadata missing", so the log can
	// only say that the open failed and will be retried.
	if !strings.Contains(srv.stderr.String(), `"reason":"open"`) {
		t.Errorf("the failed swap was not logged as one to retry:\n%s", srv.stderr.String())
	}
	for _, c := range held[1:] {
		c.Close()
	}
	e2e.Eventually(t, "the new generation to be swapped in", func() bool { return servedGeneration(t, held[0]) == next.ID })
	if srv.exited() {
		t.Fatalf("the server died:\n%s", srv.stderr.String())
	}
}

// limitedServer is a serve process under fdLimit descriptors.
type limitedServer struct {
	cmd    *exec.Cmd
	addr   string
	stderr *syncbuf.Buffer
	done   chan struct{}
}

func startLimitedServer(t *testing.T, dir string) *limitedServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, fdLimit), exe, "serve",
		"--data-dir", dir, "--addr", "127.0.0.1:0", "--poll-interval", "200ms", "--log-format", "json")
	cmd.Env = append(os.Environ(), e2e.RunMainEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &limitedServer{cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-s.done })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := e2e.ServingLine.FindStringSubmatch(sc.Text()); m != nil {
			s.addr = strings.TrimPrefix(m[1], "http://")
			go io.Copy(io.Discard, stdout)
			return s
		}
	}
	t.Fatalf("the server exited before serving:\n%s", s.stderr.String())
	return nil
}

func (s *limitedServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// openFiles counts the server process's descriptors.
func (s *limitedServer) openFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("/proc", fmt.Sprint(s.cmd.Process.Pid), "fd"))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// exhaust opens idle connections that the server accepts until it has
// one descriptor left (less than a generation takes to open), each
// checked with a request, and returns them.
func (s *limitedServer) exhaust(t *testing.T) []net.Conn {
	t.Helper()
	var held []net.Conn
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for s.openFiles(t) < fdLimit-1 {
		c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		servedGeneration(t, c) // the server has accepted it
	}
	t.Logf("%d idle connections hold the server's last descriptors (limit %d)", len(held), fdLimit)
	return held
}

// servedGeneration asks for /metrics on the open connection c and returns
// the generation the server says it serves.
func servedGeneration(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: companydocs\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	const metric = `companydocs_index_generation_info{generation="`
	_, rest, ok := strings.Cut(string(body), metric)
	if !ok {
		t.Fatalf("no %s in /metrics:\n%.2000s", metric, body)
	}
	id, _, _ := strings.Cut(rest, `"`)
	return id
}
