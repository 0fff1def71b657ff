package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs"
)

// PGUser is the operating-system user the benchmark's PostgreSQL runs as
// when the benchmark runs as root (postgres refuses to run as root).
const PGUser = "cdbench"

// PGBinDirs are searched, in order, for initdb and postgres.
var PGBinDirs = []string{"/usr/lib/postgresql/15/bin", "/usr/local/bin", "/usr/local/pgsql/bin"}

// PG is a throw-away PostgreSQL cluster on a loopback port.
type PG struct {
	Dir  string
	Port int
	bin  string
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan error
}

// StartPG initialises a cluster in a temporary directory and starts it on
// 127.0.0.1 and a free port. Stop it with Stop, also on failure.
func StartPG(ctx context.Context) (*PG, error) {
	bin, err := pgBinDir()
	if err != nil {
		return nil, err
	}
	pg := &PG{bin: bin, done: make(chan error, 1)}
	if pg.cred, err = pgCredential(); err != nil {
		return nil, err
	}
	if pg.Dir, err = os.MkdirTemp("", "cdbench-pg-"); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	if pg.cred != nil {
		if err := os.Chown(pg.Dir, int(pg.cred.Uid), int(pg.cred.Gid)); err != nil {
			os.RemoveAll(pg.Dir)
			return nil, fmt.Errorf("hand the cluster directory to %s: %w", PGUser, err)
		}
	}
	if err := pg.initdb(); err != nil {
		os.RemoveAll(pg.Dir)
		return nil, err
	}
	if err := pg.start(ctx); err != nil {
		pg.Stop()
		return nil, err
	}
	return pg, nil
}

func pgBinDir() (string, error) {
	for _, d := range PGBinDirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb) in %s: install postgresql-15", strings.Join(PGBinDirs, ", "))
}

// pgCredential returns the credential of PGUser, creating the user if
// needed, when running as root; nil otherwise.
func pgCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(PGUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PGUser).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("create user %s: %v: %s", PGUser, err, out)
		}
		if u, err = user.Lookup(PGUser); err != nil {
			return nil, fmt.Errorf("look up user %s: %w", PGUser, err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func (pg *PG) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(pg.bin, name), args...)
	cmd.Dir = pg.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	if pg.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: pg.cred}
	}
	return cmd
}

func (pg *PG) initdb() error {
	out, err := pg.command("initdb", "-D", filepath.Join(pg.Dir, "data"), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale").CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb: %v: %s", err, out)
	}
	return nil
}

// start runs postgres in the foreground of a child process, tuned for a
// bulk load and a read-only benchmark on this machine.
func (pg *PG) start(ctx context.Context) error {
	port, err := FreePort()
	if err != nil {
		return err
	}
	pg.Port = port
	pg.cmd = pg.command("postgres", "-D", filepath.Join(pg.Dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-k", pg.Dir,
		"-c", "shared_buffers=2GB", "-c", "effective_cache_size=8GB", "-c", "maintenance_work_mem=1GB",
		"-c", "work_mem=64MB", "-c", "max_connections=50", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_wal_size=8GB", "-c", "jit=off")
	logf, err := os.Create(filepath.Join(pg.Dir, "postgres.log"))
	if err != nil {
		return fmt.Errorf("create postgres log: %w", err)
	}
	pg.cmd.Stdout, pg.cmd.Stderr = logf, logf
	if err := pg.cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	go func() { pg.done <- pg.cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		conn, err := pg.Connect(ctx)
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		select {
		case err := <-pg.done:
			pg.done <- err
			log, _ := os.ReadFile(filepath.Join(pg.Dir, "postgres.log"))
			return fmt.Errorf("postgres exited: %v: %s", err, log)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return errors.New("postgres did not accept connections within a minute")
}

// Connect opens a connection to the cluster's postgres database.
func (pg *PG) Connect(ctx context.Context) (*pgx.Conn, error) {
	return pgx.Connect(ctx, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.Port))
}

// Stop shuts the cluster down (fast shutdown, SIGKILL after 30 s) and
// removes its directory.
func (pg *PG) Stop() {
	if pg.cmd != nil && pg.cmd.Process != nil && pg.cmd.ProcessState == nil {
		_ = pg.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-pg.done:
		case <-time.After(30 * time.Second):
			_ = pg.cmd.Process.Kill()
			<-pg.done
		}
	}
	if pg.Dir != "" {
		os.RemoveAll(pg.Dir)
	}
}

// PGLoad reports how long loading and indexing took and how large the
// table and its index are.
type PGLoad struct {
	Rows       int64
	Load       time.Duration
	Index      time.Duration
	TableBytes int64
	IndexBytes int64
}

// LoadCorpus creates the companies table (id, name, name_norm), copies
// every corpus record into it with name_norm = companydocs.Fold(name),
// and builds a GIN trigram index on name_norm.
func LoadCorpus(ctx context.Context, conn *pgx.Conn, corpus []string, workers int) (PGLoad, error) {
	var res PGLoad
	for _, stmt := range []string{
		"CREATE EXTENSION IF NOT EXISTS pg_trgm",
		"CREATE UNLOGGED TABLE companies (id text NOT NULL, name text NOT NULL, name_norm text NOT NULL)",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return res, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	start := time.Now()
	rows := make(chan []any, 4096)
	scanErr := make(chan error, 1)
	go func() {
		scanErr <- ScanRecords(corpus, workers, func(_ int, r *Record) {
			ref, err := companydocs.ParseCompanyNumber(r.CompanyNumber)
			if err == nil && r.Name != "" {
				rows <- []any{companydocs.ProfileID(ref), r.Name, companydocs.Fold(r.Name)}
			}
		})
		close(rows)
	}()
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"companies"}, []string{"id", "name", "name_norm"}, &chanSource{ch: rows})
	for range rows { // drain if the copy stopped early
	}
	if serr := <-scanErr; err == nil {
		err = serr
	}
	if err != nil {
		return res, fmt.Errorf("copy corpus into postgres: %w", err)
	}
	res.Rows, res.Load = n, time.Since(start)
	start = time.Now()
	for _, stmt := range []string{
		"CREATE INDEX companies_name_trgm ON companies USING gin (name_norm gin_trgm_ops)",
		"ANALYZE companies",
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			return res, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	res.Index = time.Since(start)
	err = conn.QueryRow(ctx, "SELECT pg_table_size('companies'), pg_relation_size('companies_name_trgm')").Scan(&res.TableBytes, &res.IndexBytes)
	return res, err
}

// chanSource feeds CopyFrom from a channel of rows.
type chanSource struct {
	ch  chan []any
	row []any
}

func (s *chanSource) Next() bool {
	var ok bool
	s.row, ok = <-s.ch
	return ok
}
func (s *chanSource) Values() ([]any, error) { return s.row, nil }
func (s *chanSource) Err() error             { return nil }

// TrigramQuery is the query the pg_trgm side answers: the ten names most
// similar to the folded query among those above the similarity threshold.
const TrigramQuery = "SELECT id FROM companies WHERE name_norm % $1 ORDER BY similarity(name_norm, $1) DESC LIMIT 10"

// PGSearcher answers queries over one connection per client; the query
// text is folded like the indexed names. The threshold is set on each
// connection.
func PGSearcher(ctx context.Context, pg *PG, clients int, threshold float64) (Searcher, func(), error) {
	conns := make(chan *pgx.Conn, clients)
	closeAll := func() {
		for len(conns) > 0 {
			c := <-conns
			c.Close(context.Background())
		}
	}
	for range clients {
		c, err := pg.Connect(ctx)
		if err == nil {
			_, err = c.Exec(ctx, fmt.Sprintf("SET pg_trgm.similarity_threshold = %g", threshold))
		}
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connect to postgres: %w", err)
		}
		conns <- c
	}
	search := func(ctx context.Context, q Query) ([]string, error) {
		c := <-conns
		defer func() { conns <- c }()
		if c.IsClosed() { // a cancelled query closes its connection
			fresh, err := pg.Connect(ctx)
			if err != nil {
				return nil, err
			}
			if _, err := fresh.Exec(ctx, fmt.Sprintf("SET pg_trgm.similarity_threshold = %g", threshold)); err != nil {
				return nil, err
			}
			c = fresh
		}
		rows, err := c.Query(ctx, TrigramQuery, companydocs.Fold(q.Query))
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	return search, closeAll, nil
}
