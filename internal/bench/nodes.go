package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/internal/pgcluster"
)

// OrderPGSettings keep the cluster of the order benchmarks as durable as
// a production database (fsync, synchronous_commit and full_page_writes
// stay on, as bbolt fsyncs every commit), and load pg_stat_statements to
// say where the time goes.
var OrderPGSettings = []string{"shared_buffers=256MB", "max_connections=100", "jit=off",
	"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=top"}

// StartOrderPG starts a throw-away cluster (internal/pgcluster) with
// OrderPGSettings and creates the database the servers share; it returns
// the cluster (close it, also on failure) and the database's URL.
func StartOrderPG(ctx context.Context) (*pgcluster.Cluster, string, error) {
	pg, err := pgcluster.Start(ctx, OrderPGSettings...)
	if err != nil {
		return nil, "", err
	}
	url, err := pg.CreateDatabase(ctx)
	if err == nil {
		err = execOn(ctx, url, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	}
	if err != nil {
		pg.Close()
		return nil, "", err
	}
	return pg, url, nil
}

func execOn(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to the order database: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// LinkIndex makes dst a data directory of its own (a second node needs
// one: serve locks its directory) holding the index generations of src as
// hard links: generations are read-only once published, so the nodes
// share their bytes and serve the same profile ids. Lock and publishing
// files are left out.
func LinkIndex(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	root := filepath.Join(src, "index")
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if name == "LOCK" || name == "PUBLISHING" || strings.HasPrefix(name, ".building-") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		return os.Link(path, target)
	})
}

// Statement is one row of pg_stat_statements.
type Statement struct {
	Query   string        `json:"query"`
	Calls   int64         `json:"calls"`
	Total   time.Duration `json:"total"`
	Mean    time.Duration `json:"mean"`
	PerCall float64       `json:"rows_per_call"`
}

// ResetStatements empties pg_stat_statements (before a measured run).
func ResetStatements(ctx context.Context, url string) error {
	return execOn(ctx, url, "SELECT pg_stat_statements_reset()")
}

// TopStatements returns the n statements that took the most execution
// time since the last reset.
func TopStatements(ctx context.Context, url string, n int) ([]Statement, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to the order database: %w", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT query, calls, total_exec_time, rows FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		return nil, fmt.Errorf("read pg_stat_statements: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Statement, error) {
		var s Statement
		var totalMS float64
		var nrows int64
		err := r.Scan(&s.Query, &s.Calls, &totalMS, &nrows)
		s.Total = time.Duration(totalMS * float64(time.Millisecond))
		if s.Calls > 0 {
			s.Mean, s.PerCall = s.Total/time.Duration(s.Calls), float64(nrows)/float64(s.Calls)
		}
		s.Query = strings.Join(strings.Fields(s.Query), " ")
		return s, err
	})
}

// WaitSampler counts what the database's busy client backends are doing,
// sampled every interval from pg_stat_activity: a wait event
// ("Lock:advisory", "IO:WALSync", "Client:ClientRead" ...) or "CPU" when
// a backend runs without waiting.
type WaitSampler struct {
	mu      sync.Mutex
	counts  map[string]int
	samples int
	stop    context.CancelFunc
	done    chan struct{}
}

// SampleWaits starts sampling the backends of url's database.
func SampleWaits(ctx context.Context, url string, interval time.Duration) (*WaitSampler, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to the order database: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	w := &WaitSampler{counts: map[string]int{}, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer conn.Close(context.Background())
		for ctx.Err() == nil {
			w.sample(ctx, conn)
			select {
			case <-ctx.Done():
			case <-time.After(interval):
			}
		}
	}()
	return w, nil
}

func (w *WaitSampler) sample(ctx context.Context, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') FROM pg_stat_activity
		WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`)
	if err != nil {
		return
	}
	events, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.samples++
	for _, e := range events {
		w.counts[e]++
	}
}

// Wait is one wait event and the mean number of busy backends in it.
type Wait struct {
	Event    string  `json:"event"`
	Backends float64 `json:"backends"`
}

// Stop ends the sampling and returns the events, the most frequent
// first: how many backends were in each, on average over the samples.
func (w *WaitSampler) Stop() []Wait {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Wait
	for e, n := range w.counts {
		out = append(out, Wait{Event: e, Backends: float64(n) / float64(max(1, w.samples))})
	}
	slices.SortFunc(out, func(a, b Wait) int {
		if a.Backends != b.Backends {
			if a.Backends > b.Backends {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Event, b.Event)
	})
	return out
}
