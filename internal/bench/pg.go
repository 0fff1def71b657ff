package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs"
	"companydocs/internal/pgcluster"
	"companydocs/register"
	"companydocs/textfold"
)

// pgSettings tune the cluster for a bulk load and a read-only benchmark
// on this machine.
var pgSettings = []string{"shared_buffers=2GB", "effective_cache_size=8GB", "maintenance_work_mem=1GB",
	"work_mem=64MB", "max_connections=50", "fsync=off", "synchronous_commit=off",
	"full_page_writes=off", "max_wal_size=8GB", "jit=off"}

// StartPG starts a throw-away cluster (internal/pgcluster) tuned for the
// benchmark. Close it, also on failure.
func StartPG(ctx context.Context) (*pgcluster.Cluster, error) {
	return pgcluster.Start(ctx, pgSettings...)
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
// every corpus record into it with name_norm = textfold.Fold(name),
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
			ref, err := register.ParseCompanyNumber(r.CompanyNumber)
			if err == nil && r.Name != "" {
				rows <- []any{companydocs.ProfileID(ref), r.Name, textfold.Fold(r.Name)}
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
func PGSearcher(ctx context.Context, pg *pgcluster.Cluster, clients int, threshold float64) (Searcher, func(), error) {
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
		rows, err := c.Query(ctx, TrigramQuery, textfold.Fold(q.Query))
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	return search, closeAll, nil
}
