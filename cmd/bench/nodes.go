package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"companydocs/internal/bench"
	"companydocs/internal/pgcluster"
)

// storeFlags are the order benchmarks' choice of store and nodes.
type storeFlags struct {
	store    *string
	nodes    *int
	poolSize *int
}

func addStoreFlags(fs *flag.FlagSet) storeFlags {
	return storeFlags{
		store:    fs.String("store", "bbolt", "order store: bbolt (orders.db in the data directory) or postgres (a throw-away cluster the nodes share)"),
		nodes:    fs.Int("nodes", 1, "serve processes; more than 1 needs -store postgres (each further node gets a data directory with hard links to the index)"),
		poolSize: fs.Int("pool-size", 0, "--store-pool-size of each node (0: the server's default)"),
	}
}

// orderNodes are the servers an order benchmark talks to: one on
// orders.db, or one or more sharing a PostgreSQL database. Client i uses
// node i modulo the number of nodes.
type orderNodes struct {
	bin, dataDir string
	nodes        int
	poolSize     int
	pg           *pgcluster.Cluster
	storeURL     string
	servers      []*bench.Server
}

// newOrderNodes prepares the store; the servers start with start, after
// the accounts exist (orders.db is locked while a server runs).
func newOrderNodes(ctx context.Context, bin, dataDir string, f storeFlags) (*orderNodes, error) {
	o := &orderNodes{bin: bin, dataDir: dataDir, nodes: *f.nodes, poolSize: *f.poolSize}
	switch {
	case o.nodes < 1:
		return nil, fmt.Errorf("-nodes must be 1 or more, got %d", o.nodes)
	case *f.store == "bbolt" && o.nodes > 1:
		return nil, fmt.Errorf("-nodes %d needs -store postgres: orders.db belongs to one server", o.nodes)
	case *f.store == "bbolt":
		return o, nil
	case *f.store != "postgres":
		return nil, fmt.Errorf("-store must be bbolt or postgres, got %q", *f.store)
	}
	var err error
	o.pg, o.storeURL, err = bench.StartOrderPG(ctx)
	return o, err
}

// describe names the store and nodes for the result tables.
func (o *orderNodes) describe() string {
	if o.pg == nil {
		return "bbolt, 1 node"
	}
	pool := "default pool"
	if o.poolSize > 0 {
		pool = fmt.Sprintf("pool %d", o.poolSize)
	}
	return fmt.Sprintf("postgres, %d node(s), %s", o.nodes, pool)
}

// storeArgs are the flags that point a command at the store.
func (o *orderNodes) storeArgs() []string {
	if o.pg == nil {
		return []string{"--data-dir", o.dataDir}
	}
	return []string{"--data-dir", o.dataDir, "--store", o.storeURL}
}

// start runs the servers with extra flags.
func (o *orderNodes) start(ctx context.Context, extra ...string) error {
	for i := range o.nodes {
		dir := o.dataDir
		if i > 0 {
			dir = o.dataDir + "-node" + strconv.Itoa(i+1)
			if err := bench.LinkIndex(o.dataDir, dir); err != nil {
				return fmt.Errorf("data directory of node %d: %w", i+1, err)
			}
		}
		args := extra
		if o.pg != nil {
			args = append(append([]string{}, extra...), "--store", o.storeURL, "--store-pool-size", strconv.Itoa(o.poolSize))
		}
		srv, err := bench.StartServer(ctx, o.bin, dir, args...)
		if err != nil {
			return fmt.Errorf("node %d: %w", i+1, err)
		}
		o.servers = append(o.servers, srv)
	}
	return nil
}

// url is the base URL client i talks to.
func (o *orderNodes) url(i int) string { return o.servers[i%len(o.servers)].URL }

// pids lists the servers' process ids (for perf record -p).
func (o *orderNodes) pids() string {
	var ps []string
	for _, s := range o.servers {
		ps = append(ps, strconv.Itoa(s.Pid()))
	}
	return strings.Join(ps, ",")
}

func (o *orderNodes) close() {
	for _, s := range o.servers {
		s.Stop()
	}
	if o.pg != nil {
		o.pg.Close()
	}
}

// pgInsight is where the database's time went during the measured runs.
type pgInsight struct {
	Statements []bench.Statement `json:"statements,omitempty"`
	Waits      []bench.Wait      `json:"waits,omitempty"`
}

// observe resets pg_stat_statements and samples wait events until the
// returned function is called, which reads both (nothing on bbolt).
func (o *orderNodes) observe(ctx context.Context) (func() pgInsight, error) {
	if o.pg == nil {
		return func() pgInsight { return pgInsight{} }, nil
	}
	if err := bench.ResetStatements(ctx, o.storeURL); err != nil {
		return nil, err
	}
	w, err := bench.SampleWaits(ctx, o.storeURL, 10*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return func() pgInsight {
		in := pgInsight{Waits: w.Stop()}
		in.Statements, _ = bench.TopStatements(ctx, o.storeURL, 20)
		return in
	}, nil
}

// printInsight prints the wait events and the costliest statements.
func printInsight(in pgInsight) {
	if len(in.Waits) == 0 && len(in.Statements) == 0 {
		return
	}
	fmt.Println("\nPostgreSQL client backends, sampled every 10 ms (mean busy backends per state; CPU = running, no wait event):")
	fmt.Println("\n| state | backends |\n|---|---:|")
	for _, w := range in.Waits {
		fmt.Printf("| %s | %.2f |\n", w.Event, w.Backends)
	}
	fmt.Println("\nStatements by total execution time (pg_stat_statements):")
	fmt.Println("\n| calls | total ms | mean ms | rows/call | statement |\n|---:|---:|---:|---:|---|")
	for _, s := range in.Statements {
		q := s.Query
		if len(q) > 110 {
			q = q[:110] + "..."
		}
		fmt.Printf("| %d | %.0f | %.3f | %.1f | `%s` |\n", s.Calls, float64(s.Total)/float64(time.Millisecond), float64(s.Mean)/float64(time.Millisecond), s.PerCall, strings.ReplaceAll(q, "|", "\\|"))
	}
}
