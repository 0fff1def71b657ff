// Package e2e is the support of the command's end-to-end tests (the
// packages under app/e2e): it starts the real app.Main on a loopback port
// over a throw-away data directory, the sample and real records those
// servers ingest, HTTP helpers that record every exchange for the
// OpenAPI check, accounts and sessions, nodes that publish and follow,
// processes that are killed, and the PostgreSQL, object store and Stripe
// set-ups they need. Main is the test binary's TestMain: it also lets the
// binary act as the companydocs command, so that a test can start it as a
// process of its own. Neither the binary nor app imports it.
package e2e

import (
	"os"
	"path/filepath"
)

// RepoRoot is the repository's directory: the nearest directory above the
// working directory (a test's package directory) that holds go.mod. It
// panics outside the repository, where no test can run.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			panic("no go.mod above the working directory")
		}
		dir = parent
	}
}
