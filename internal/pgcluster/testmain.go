package pgcluster

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Runner is what a test binary's TestMain runs: *testing.M.
type Runner interface{ Run() int }

// RunTests is a package's TestMain around one throw-away cluster: it
// starts a cluster with TestSettings (within two minutes), hands it to
// use, runs the tests, stops the cluster and exits with the tests' code.
// A cluster that does not start fails the test binary, saying why.
func RunTests(m Runner, use func(*Cluster)) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := Start(ctx, TestSettings...)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL for the tests:", err)
		os.Exit(1)
	}
	use(c)
	code := m.Run()
	c.Close()
	os.Exit(code)
}
