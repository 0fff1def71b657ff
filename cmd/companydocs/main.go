// Command companydocs resolves German companies from any clue and orders
// official register documents for verified company profiles.
//
// Subcommands: serve, ingest, accounts, store, publish, nodes, search,
// resolve, version. Run "companydocs help". The command lives in package
// app; this is its process: the signals that end it and its exit code.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"companydocs/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
