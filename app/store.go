package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"companydocs/bbolt"
	"companydocs/internal/atomicfile"
)

const storeUsage = `usage:
  companydocs store check  [--data-dir D] [--store-check-timeout T]
  companydocs store backup --to FILE [--force] [--data-dir D]
  companydocs store check  --store postgres://...
  companydocs store migrate --from FILE --to postgres://... [--allow-existing-data]

check reads every page of orders.db and every record, and exits 1 when the
file is damaged. backup writes a consistent copy to FILE, checks the copy,
and only then puts it in place. Both work while a server runs: they reach
its database through the socket store.sock in the data directory.
With --store (COMPANYDOCS_STORE, then DATABASE_URL), check checks the
PostgreSQL store; PostgreSQL is backed up with pg_dump, not with backup.
migrate copies an orders.db into PostgreSQL and verifies the copy.`

// storeAdvice is what to do about a damaged order database.
func storeAdvice(path string) string {
	return fmt.Sprintf("Stop the server, then either restore %[1]s from a backup made with \"companydocs store backup\" (check it first with \"companydocs store check\"), or move %[1]s away to start with an empty order database on purpose.", path)
}

// explainStoreError adds what to do to the errors of bbolt.Open and
// ordering.NewOrders.
func explainStoreError(path string, err error) error {
	switch {
	case errors.Is(err, bbolt.ErrDamaged):
		return fmt.Errorf("%w\n%s", err, storeAdvice(path))
	case errors.Is(err, bbolt.ErrCheckTimeout):
		return fmt.Errorf("%w: %s was not fully checked; raise --store-check-timeout, or skip the check with --skip-store-check", err, path)
	}
	return err
}

// runStore runs "companydocs store check|backup".
func runStore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "migrate" {
		return runMigrate(ctx, args[1:], stdout, stderr)
	}
	if err := checkStoreCommand(args, stdout, stderr); err != nil {
		return err
	}
	var (
		dataDir, to, store string
		force              bool
		timeout            time.Duration
	)
	fs := newFlagSet("store "+args[0], stdout, stderr)
	fs.Synopsis = "usage:\n  companydocs store check  [--data-dir D] [--store-check-timeout T]\n  companydocs store check  --store postgres://..."
	fs.String(&dataDir, "data-dir", defaultDataDir, "data directory holding orders.db")
	fs.Duration(&timeout, "store-check-timeout", 10*time.Minute, "how long the check may take")
	fs.StringVar(&store, "store", "", "the PostgreSQL store (postgres://...) instead of orders.db (env "+envName("store")+", then DATABASE_URL)")
	if args[0] == "backup" {
		fs.Synopsis = "usage: companydocs store backup --to FILE [--force] [--data-dir D] [--store-check-timeout T]"
		fs.StringVar(&to, "to", "", "file to write the backup to")
		fs.BoolVar(&force, "force", false, "replace --to if it exists")
	}
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("store %s takes no arguments, got %q: %w", args[0], fs.Args(), errUsage)
	}
	if url := storeURL(fs, store); url != "" {
		return storePostgres(ctx, args[0], url, stdout)
	}
	if args[0] == "check" {
		return storeCheck(ctx, dataDir, timeout, stdout)
	}
	if to == "" {
		return fmt.Errorf("store backup needs --to FILE: %w", errUsage)
	}
	return storeBackup(ctx, dataDir, to, force, timeout, stdout)
}

// checkStoreCommand answers help and refuses a missing or unknown store
// command.
func checkStoreCommand(args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprintln(stdout, storeUsage)
		return flag.ErrHelp
	case len(args) == 0:
		fmt.Fprintln(stderr, storeUsage)
		return errUsage
	case args[0] != "check" && args[0] != "backup":
		fmt.Fprintf(stderr, "unknown store command %q\n%s\n", args[0], storeUsage)
		return errUsage
	}
	return nil
}

// storeCheck checks orders.db: through the running server's socket (on a
// fresh copy) or, with no server, the file itself, read-only.
func storeCheck(ctx context.Context, dataDir string, timeout time.Duration, stdout io.Writer) error {
	path := filepath.Join(dataDir, bbolt.DatabaseFile)
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no order database to check: %w", err)
	}
	tmp, err := os.CreateTemp(dataDir, ".orders.db.check-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	online, err := bbolt.CopyFromServer(ctx, dataDir, tmp)
	if err != nil {
		return err
	}
	target := path
	if online {
		target = tmp.Name()
	}
	st, err := checkFile(target, timeout)
	if err != nil {
		return explainStoreError(path, err)
	}
	how := "no server running"
	if online {
		how = "a copy taken from the running server"
	}
	fmt.Fprintf(stdout, "%s is consistent (%s): %d bytes, %d accounts, %d sessions, %d orders.\n", path, how, st.Bytes, st.Accounts, st.Sessions, st.Orders)
	return nil
}

// checkFile opens a database read-only, which checks it, and counts it.
func checkFile(path string, timeout time.Duration) (bbolt.Stats, error) {
	db, err := bbolt.Open(path, bbolt.Options{ReadOnly: true, CheckTimeout: timeout})
	if errors.Is(err, bbolt.ErrInUse) {
		return bbolt.Stats{}, fmt.Errorf("a running server holds %s and does not answer on %s: stop it, or check again once it serves", path, bbolt.SocketFile)
	} else if err != nil {
		return bbolt.Stats{}, err
	}
	defer db.Close()
	return db.Stats()
}

// storeBackup writes a consistent copy of orders.db to a temporary file
// beside to, fsyncs it, checks it, and renames it to to.
func storeBackup(ctx context.Context, dataDir, to string, force bool, timeout time.Duration, stdout io.Writer) error {
	if _, err := os.Lstat(to); err == nil && !force {
		return fmt.Errorf("%s exists; choose another file, or replace it with --force", to)
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), "."+filepath.Base(to)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	defer tmp.Close()
	online, err := bbolt.CopyFromServer(ctx, dataDir, tmp)
	if err == nil && !online {
		err = copyOffline(filepath.Join(dataDir, bbolt.DatabaseFile), tmp, timeout)
	}
	if err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	st, err := checkFile(tmp.Name(), timeout)
	if err != nil {
		return fmt.Errorf("the backup copy does not pass the check, nothing was written to %s: %w", to, err)
	}
	if err := publishBackup(tmp.Name(), to, force); err != nil {
		return err
	}
	from := "the file (no server running)"
	if online {
		from = "the running server"
	}
	fmt.Fprintf(stdout, "Backed up %s from %s to %s: %d bytes, %d accounts, %d sessions, %d orders; the copy passes the check.\n",
		filepath.Join(dataDir, bbolt.DatabaseFile), from, to, st.Bytes, st.Accounts, st.Sessions, st.Orders)
	return nil
}

// publishBackup renames tmp to to (a hard link when to must not be
// replaced, so that a file made meanwhile is not overwritten), then
// fsyncs the directory.
func publishBackup(tmp, to string, force bool) error {
	if force {
		return atomicfile.Rename(tmp, to)
	}
	if err := os.Link(tmp, to); err != nil {
		return fmt.Errorf("write backup: %w", err)
	}
	return atomicfile.SyncDir(filepath.Dir(to))
}

// copyOffline copies orders.db when no server runs, after checking it.
func copyOffline(path string, w io.Writer, timeout time.Duration) error {
	db, err := bbolt.Open(path, bbolt.Options{ReadOnly: true, CheckTimeout: timeout})
	if errors.Is(err, bbolt.ErrInUse) {
		return fmt.Errorf("a running server holds %s and does not answer on %s: stop it, or back up again once it serves", path, bbolt.SocketFile)
	} else if err != nil {
		return explainStoreError(path, err)
	}
	defer db.Close()
	return db.Snapshot(func(_ int64, db io.WriterTo) error {
		_, err := db.WriteTo(w)
		return err
	})
}
