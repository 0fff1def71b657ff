// Command bench measures companydocs: ingest throughput and memory, search
// latency over HTTP per query kind and concurrency, order creation
// throughput, a PostgreSQL pg_trgm baseline on the same name queries, and
// CPU and allocation profiles of the search path.
//
// Usage:
//
//	bench queries -gleif FILE... -o QUERIES.jsonl [-profiles PROFILES.txt] CORPUS...
//	bench ingest  -bin BIN -data-dir DIR FILE...
//	bench edits   -every N -o DIR CORPUS...
//	bench search  -bin BIN -data-dir DIR -queries QUERIES.jsonl
//	bench compare -bin BIN -data-dir DIR -base-bin BIN -base-data-dir DIR -queries QUERIES.jsonl
//	bench orders  -bin BIN -data-dir DIR -profiles PROFILES.txt [-store postgres -nodes N -pool-size P]
//	bench lifecycle -bin BIN -data-dir DIR -profiles PROFILES.txt [-store postgres -nodes N -pool-size P]
//	bench pg      -bin BIN -data-dir DIR -queries QUERIES.jsonl CORPUS...
//	bench profile -data-dir DIR -queries QUERIES.jsonl -cpu CPU.pprof -mem MEM.pprof
//	bench costs   -data-dir DIR -queries QUERIES.jsonl
//	bench follow  -bin BIN -data-dir DIR
//
// Every run talks to loopback addresses only and is bounded by a request
// count and a duration. Results are printed as Markdown tables and, with
// -json FILE, written as JSON.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const usage = `bench measures companydocs. Commands:
  queries   build a labelled query set (and orderable profile ids) from a corpus
  ingest    time an ingest: records/s, peak RSS, bytes on disk
  edits     copy OffeneRegister dumps with every n-th record edited as the register edits them (for the change record)
  search    search latency over HTTP at 1, 4 and 16 clients, per query kind; serving RSS
  compare   two builds side by side: both servers at once, rounds alternating, p99 per kind with the ratio's interval
  orders    order creation throughput and latency with 32 clients (bbolt, or PostgreSQL on one or more nodes)
  lifecycle complete order lifecycles (create, pay, request, deliver a PDF) with webhooks to a local receiver (same stores)
  pg        the same name queries against PostgreSQL pg_trgm and companydocs, side by side
  profile   CPU and allocation profiles of the search path (in process); CPU time and allocations per query
  costs     the cost account of one search per query kind: index searches, CPU time by stage, allocations (in process)
  follow    publish and follow: publish, a node on an empty data directory to ready, its download against cp -r, a second publish to every node serving it
Run "bench COMMAND -h" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command")
	}
	cmds := map[string]func(context.Context, []string) error{
		"queries": runQueries, "ingest": runIngest, "edits": runEdits, "search": runSearch, "compare": runCompare,
		"orders": runOrders, "lifecycle": runLifecycle, "pg": runPG, "profile": runProfile, "costs": runCosts,
		"follow": runFollow,
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd(ctx, args[1:])
}
