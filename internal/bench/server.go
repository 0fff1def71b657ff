package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Server is a companydocs server process started by the benchmark.
type Server struct {
	URL  string
	cmd  *exec.Cmd
	done chan error
	log  *bytes.Buffer
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// StartServer runs "bin serve" on a free loopback port with the search
// rate limit off and waits until /readyz answers 200.
func StartServer(ctx context.Context, bin, dataDir string, extra ...string) (*Server, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"serve", "--data-dir", dataDir, "--addr", addr, "--search-rate", "0", "--log-format", "json", "--log-level", "warn"}, extra...)
	s := &Server{URL: "http://" + addr, cmd: exec.Command(bin, args...), done: make(chan error, 1), log: &bytes.Buffer{}}
	s.cmd.Stdout, s.cmd.Stderr = io.Discard, &tailWriter{buf: s.log, max: 64 << 10}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	if err := s.waitReady(ctx, 10*time.Minute); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w; server log: %s", err, s.log.String())
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.done:
			s.done <- err
			return fmt.Errorf("server exited before it was ready: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("server not ready in time")
}

// Pid is the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Memory reads the server's current and peak resident memory.
func (s *Server) Memory() (ProcMemory, error) { return ReadProcMemory(s.Pid()) }

// Stop ends the server with SIGTERM (SIGKILL after 30 s) and waits for it.
func (s *Server) Stop() error {
	if s.cmd.ProcessState != nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		return err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return <-s.done
	}
}

// tailWriter keeps the last bytes written (for error messages).
type tailWriter struct {
	buf *bytes.Buffer
	max int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	if over := w.buf.Len() - w.max; over > 0 {
		w.buf.Next(over)
	}
	return len(p), nil
}

// Post sends a JSON body and decodes a JSON answer into dst (when not nil).
func Post(ctx context.Context, c *http.Client, url, token string, body, dst any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if dst != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, dst); err != nil {
			return resp.StatusCode, fmt.Errorf("decode answer: %w", err)
		}
	}
	return resp.StatusCode, nil
}

// NewClient returns an HTTP client that keeps enough idle connections for
// conns concurrent requests.
func NewClient(conns int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, DisableCompression: true,
		IdleConnTimeout: time.Minute,
	}}
}

// ProcessRun is what running a process to its end cost.
type ProcessRun struct {
	Wall time.Duration `json:"wall"`
	// CPU is user plus system time: unlike Wall it does not grow when
	// other processes compete for the cores.
	CPU     time.Duration `json:"cpu"`
	PeakRSS int64         `json:"peak_rss_bytes"` // ru_maxrss
}

// RunProcess runs a command to the end and returns its wall time, CPU
// time and peak resident memory.
func RunProcess(cmd *exec.Cmd) (ProcessRun, error) {
	start := time.Now()
	err := cmd.Run()
	run := ProcessRun{Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		run.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			run.PeakRSS = ru.Maxrss << 10
		}
	}
	if err != nil {
		return run, fmt.Errorf("run %s: %w", cmd.Path, err)
	}
	return run, nil
}
