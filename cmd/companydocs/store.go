package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"companydocs/bbolt"
	"companydocs/internal/atomicfile"
	"companydocs/ordering"
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

// storeSocketFile is the unix socket in the data directory on which a
// running server hands out consistent copies of orders.db: bbolt's lock
// keeps every other process out of the file while the server runs.
const storeSocketFile = "store.sock"

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
	online, err := copyFromServer(ctx, dataDir, tmp)
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
		return bbolt.Stats{}, fmt.Errorf("a running server holds %s and does not answer on %s: stop it, or check again once it serves", path, storeSocketFile)
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
	online, err := copyFromServer(ctx, dataDir, tmp)
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
		return fmt.Errorf("a running server holds %s and does not answer on %s: stop it, or back up again once it serves", path, storeSocketFile)
	} else if err != nil {
		return explainStoreError(path, err)
	}
	defer db.Close()
	return db.Snapshot(func(_ int64, db io.WriterTo) error {
		_, err := db.WriteTo(w)
		return err
	})
}

// copyFromServer asks a running server for a copy of its database. It
// returns false, and no error, when no server listens.
func copyFromServer(ctx context.Context, dataDir string, w io.Writer) (bool, error) {
	client, sock := socketClient(dataDir)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://store/backup", nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if noServer(err) {
		return false, nil // no server, or one that was killed and left its socket
	} else if err != nil {
		return false, fmt.Errorf("ask the server on %s for a copy: %w", sock, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return false, fmt.Errorf("the server on %s could not copy its database: %s", sock, msg)
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return false, fmt.Errorf("copy from the server on %s: %w", sock, err)
	}
	if n != resp.ContentLength {
		return false, fmt.Errorf("copy from the server on %s: got %d of %d bytes", sock, n, resp.ContentLength)
	}
	return true, nil
}

// storeSocket serves consistent copies of the order database to "store
// backup" and "store check", and the accounts commands (accountsocket.go),
// on a unix socket only the server's user may use (mode 0600, and the
// peer's uid is checked).
type storeSocket struct {
	srv  *http.Server
	path string
}

// listenStore starts the socket. The caller holds orders.db's lock, so a
// socket file left there belongs to a server that is gone.
func listenStore(dataDir string, db *bbolt.DB, accounts *ordering.Accounts, logger *slog.Logger) (*storeSocket, error) {
	path := filepath.Join(dataDir, storeSocketFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		if !sameUser(r) {
			http.Error(w, "only the server's user may copy its database", http.StatusForbidden)
			return
		}
		serveBackup(w, db, logger)
	})
	serveAccounts(mux, accounts, logger)
	s := &storeSocket{path: path, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, peerKey{}, c) }}}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("store socket stopped", "path", path, "err", err)
		}
	}()
	return s, nil
}

func serveBackup(w http.ResponseWriter, db *bbolt.DB, logger *slog.Logger) {
	start := time.Now()
	err := db.Snapshot(func(size int64, db io.WriterTo) error {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		_, err := db.WriteTo(w)
		return err
	})
	if err != nil {
		logger.Error("copy of the order database failed", "err", err)
		return // the client sees a short body
	}
	logger.Info("copied the order database for a backup or check", "took", time.Since(start))
}

type peerKey struct{}

// sameUser reports whether the peer of r runs as the server's user or root.
func sameUser(r *http.Request) bool {
	c, ok := r.Context().Value(peerKey{}).(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := c.SyscallConn()
	if err != nil {
		return false
	}
	var cred *syscall.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	})
	return err == nil && cred != nil && (cred.Uid == uint32(os.Getuid()) || cred.Uid == 0)
}

// Close stops the socket and removes its file.
func (s *storeSocket) Close() error {
	if s == nil {
		return nil
	}
	err := s.srv.Close()
	if rmErr := os.Remove(s.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, rmErr)
	}
	return err
}
