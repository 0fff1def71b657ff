package pgcluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var cluster *Cluster

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	c, err := Start(ctx, TestSettings...)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start PostgreSQL:", err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	c.Close()
	os.Exit(code)
}

// TestMissingBinariesSayHowToInstall: without PostgreSQL the error names
// the script that installs it (the tests fail on it, never skip).
func TestMissingBinariesSayHowToInstall(t *testing.T) {
	saved := BinDirs
	BinDirs = []string{t.TempDir()}
	defer func() { BinDirs = saved }()
	_, err := Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "scripts/postgres.sh") {
		t.Fatalf("Start without binaries: %v; want an error naming scripts/postgres.sh", err)
	}
}

// TestDatabasesAreSeparate: each CreateDatabase is a new, empty database.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := mustDatabase(t), mustDatabase(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	mustExec(t, a, "CREATE TABLE t (x int)")
	mustExec(t, b, "CREATE TABLE t (x int)") // would fail in the same database
	conn, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("fresh table: %d rows, %v", n, err)
	}
}

// TestCrashAndStartKeepCommittedRows: after an immediate shutdown the
// server is gone, and Start brings back every committed row on the same
// port.
func TestCrashAndStartKeepCommittedRows(t *testing.T) {
	ctx := context.Background()
	url := mustDatabase(t)
	mustExec(t, url, "CREATE TABLE t (x int)")
	mustExec(t, url, "INSERT INTO t SELECT generate_series(1, 1000)")
	cluster.Crash()
	if conn, err := pgx.Connect(ctx, url); err == nil {
		conn.Close(ctx)
		t.Fatal("connected to a crashed cluster")
	}
	if err := cluster.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("after the crash: %d rows, %v; want 1000", n, err)
	}
}

func mustDatabase(t *testing.T) string {
	t.Helper()
	url, err := cluster.CreateDatabase(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return url
}

func mustExec(t *testing.T, url, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
