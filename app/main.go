// Package app is the companydocs command: its subcommands (serve, ingest,
// accounts, store, publish, nodes, search, resolve, version), their flags
// and configuration, and the wiring of the packages that do the work;
// cmd/companydocs calls Run. The command's end-to-end tests, which start
// the real Main, live in the packages under app/e2e.
package app

import (
	"companydocs/internal/cli"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

const usage = `companydocs resolves a German company from any clue and orders register documents.

Usage:
  companydocs serve    [flags]            serve the HTTP API (ingests the embedded sample on an empty data directory)
  companydocs ingest   [flags] FILE...    build a new index generation from dump files and make it current
  companydocs accounts create --name N --credits C [--json] | list | credit --name N --add C
  companydocs store check  [--data-dir D]            check orders.db page by page (also while a server runs)
  companydocs store backup --to FILE [--data-dir D]  write a checked, consistent copy of orders.db (also while a server runs)
  companydocs store check --store postgres://...     check the PostgreSQL store
  companydocs store migrate --from FILE --to postgres://...  copy an orders.db into PostgreSQL and verify the copy
  companydocs publish  --index-source URL --store postgres://...  upload an index generation for the nodes that follow (serve --index-source)
  companydocs nodes    --store postgres://...             list the published generations and which node serves which
  companydocs payments send-test-event [--server URL] [--expired] ORDER_ID  sign and post the Stripe event that pays an order (no Stripe needed)
  companydocs search   [flags] QUERY      print the candidates for a query
  companydocs resolve  --query COLUMN [flags] [FILE]  resolve every row of a CSV or TSV file (or stdin)
  companydocs version                     print the version and VCS revision (also --version)
  companydocs help                        show this text

Run "companydocs COMMAND -h" for the flags of a command. Flags that set up a
deployment (data directory, address, limits, logging) can also be set by an
environment variable COMPANYDOCS_<FLAG> (e.g. COMPANYDOCS_DATA_DIR), which the
flag's help names; flags of one invocation (--name, --credits, --to, --json,
--max-records ...) cannot.

Exit codes: 0 success (help included), 1 failure, 2 usage (an unknown
command or flag, a missing or out-of-range argument).
`

// Run runs the command line args (without the program name), says a
// failure's sentence on stderr and returns the exit code; ctx ends on
// SIGINT or SIGTERM.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := RunCommand(ctx, args, stdout, stderr)
	if line := ErrorLine(err); line != "" {
		fmt.Fprintln(stderr, line)
	}
	return ExitCode(err)
}

// ExitCode is the exit code of a command that returned err: 0 success or
// asked-for help (-h, --help, help), 1 failure,
// 2 usage (an unknown command or flag, a missing or out-of-range
// argument).
func ExitCode(err error) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	return 1
}

// errUsage marks a usage error (the packages that run subcommands
// return the same). Returned bare, the usage text has been printed
// already; wrapped, its sentence ends with a pointer to the help.
var errUsage = cli.ErrUsage

// ErrorLine is the one line printed for a failed command: the sentence
// alone, "" when the usage text or help was printed already.
func ErrorLine(err error) string {
	if err == nil || errors.Is(err, flag.ErrHelp) || err == errUsage {
		return ""
	}
	return "companydocs: " + err.Error()
}

// RunCommand runs the command line args (without the program name) and
// returns its error: Run says it and turns it into the exit code.
func RunCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "serve":
		m := NewMain()
		m.Stdout, m.Stderr = stdout, stderr
		if err := m.ParseFlags(args); err != nil {
			return err
		}
		defer setGC(serveGCPercent, serveMemoryLimit)()
		return m.RunUntil(ctx)
	case "ingest":
		return runIngest(ctx, args, stdout, stderr)
	case "accounts":
		return runAccounts(args, stdout, stderr)
	case "search":
		return runSearch(ctx, args, stdout, stderr)
	case "resolve":
		return runResolve(ctx, args, stdout, stderr)
	case "store":
		return runStore(ctx, args, stdout, stderr)
	case "publish":
		return runPublish(ctx, args, stdout, stderr)
	case "nodes":
		return runNodes(ctx, args, stdout, stderr)
	case "payments":
		return runPayments(ctx, args, stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "unknown command %q\n\n%s", cmd, usage)
	return errUsage
}
