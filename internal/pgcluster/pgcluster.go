// Package pgcluster runs a throw-away PostgreSQL cluster for tests and
// benchmarks: initdb in a temporary directory, then postgres on 127.0.0.1
// and a free port, as an unprivileged operating-system user when the
// caller is root (postgres refuses to run as root). A test binary starts
// one cluster in TestMain and gives each test a fresh database
// (CreateDatabase); Stop, Crash and Start let a test take the server away
// and bring it back on the same port and data.
//
// Missing server binaries are an error, never a skip: a machine without
// PostgreSQL must fail the tests, and the error says how to install it.
package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is the operating-system user the cluster runs as when the caller
// is root.
const User = "cdpostgres"

// BinDirs are searched, in order, for initdb and postgres.
var BinDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/local/pgsql/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin"}

// TestSettings suit a cluster that tests throw away: no fsync, but a
// commit still reaches the operating system before it is acknowledged
// (synchronous_commit stays on), so Crash loses nothing acknowledged.
var TestSettings = []string{"fsync=off", "full_page_writes=off", "max_connections=200", "jit=off"}

// Cluster is a throw-away PostgreSQL cluster on a loopback port.
type Cluster struct {
	Dir      string
	Port     int
	bin      string
	settings []string
	cred     *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan error
}

// dbSeq numbers the databases CreateDatabase makes.
var dbSeq atomic.Int64

// Start initialises a cluster in a temporary directory and starts it with
// the given postgres settings ("name=value"). Close it, also on failure
// of the caller.
func Start(ctx context.Context, settings ...string) (*Cluster, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, settings: settings}
	if c.cred, err = credential(); err != nil {
		return nil, err
	}
	if c.Dir, err = os.MkdirTemp("", "companydocs-pg-"); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	if c.cred != nil {
		if err := os.Chown(c.Dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			os.RemoveAll(c.Dir)
			return nil, fmt.Errorf("hand the cluster directory to %s: %w", User, err)
		}
	}
	if err := c.initdb(); err != nil {
		os.RemoveAll(c.Dir)
		return nil, err
	}
	if c.Port, err = freePort(); err != nil {
		os.RemoveAll(c.Dir)
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// BinDir returns the first of BinDirs holding initdb, or an error saying
// how to install PostgreSQL.
func BinDir() (string, error) {
	for _, d := range BinDirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb) in %s: run scripts/postgres.sh, or install postgresql-15 (apt-get install postgresql-15)", strings.Join(BinDirs, ", "))
}

// credential returns the credential of User, creating the user if
// needed, when running as root; nil otherwise.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(User)
	if err != nil {
		out, addErr := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", User).CombinedOutput()
		// another test binary may have created it meanwhile
		if u, err = user.Lookup(User); err != nil {
			return nil, fmt.Errorf("create user %s: %v: %s", User, addErr, out)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "data") }

func (c *Cluster) initdb() error {
	out, err := c.command("initdb", "-D", c.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	return nil
}

// Start runs postgres on the cluster's port and waits until it accepts
// connections; after Stop or Crash it brings the same data back.
func (c *Cluster) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd != nil {
		return errors.New("the cluster is running already")
	}
	args := []string{"-D", c.dataDir(), "-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(c.Port), "-k", c.Dir}
	for _, s := range c.settings {
		args = append(args, "-c", s)
	}
	cmd := c.command("postgres", args...)
	logf, err := os.OpenFile(filepath.Join(c.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("create postgres log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); logf.Close() }()
	if err := c.waitReady(ctx, done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return err
	}
	c.cmd, c.done = cmd, done
	return nil
}

func (c *Cluster) waitReady(ctx context.Context, done chan error) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		conn, err := c.Connect(ctx)
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case err := <-done:
			done <- err
			log, _ := os.ReadFile(filepath.Join(c.Dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %v: %s", err, log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("postgres did not accept connections within a minute")
}

// URL is the connection URL of database name.
func (c *Cluster) URL(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", c.Port, name)
}

// Connect opens a connection to the cluster's postgres database.
func (c *Cluster) Connect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, c.URL("postgres"))
}

// CreateDatabase creates a new, empty database and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context) (string, error) {
	conn, err := c.Connect(ctx)
	if err != nil {
		return "", fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(ctx)
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), dbSeq.Add(1))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return c.URL(name), nil
}

// Stop shuts postgres down (fast shutdown: sessions are ended, committed
// work is kept), SIGKILL after 30 s. The data stays for Start.
func (c *Cluster) Stop() { c.signal(syscall.SIGINT) }

// Crash stops postgres the way a crash would (immediate shutdown: no
// checkpoint, recovery on the next Start).
func (c *Cluster) Crash() { c.signal(syscall.SIGQUIT) }

func (c *Cluster) signal(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Signal(sig)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	c.cmd, c.done = nil, nil
}

// Close stops postgres and removes the cluster's directory.
func (c *Cluster) Close() {
	c.Stop()
	if c.Dir != "" {
		os.RemoveAll(c.Dir)
	}
}
