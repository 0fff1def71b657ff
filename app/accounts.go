package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"companydocs"
	"companydocs/bbolt"
	"companydocs/ordering"
	"companydocs/postgres"
)

const accountsUsage = `usage:
  companydocs accounts create --name N --credits C [--json]
  companydocs accounts create --operator --name N [--credits C] [--json]
  companydocs accounts list [--json]
  companydocs accounts credit --name N --add C

accounts works on orders.db in the data directory (--data-dir): through the
socket store.sock of a server running on that directory, which makes the
change itself (a new key and a new balance count at once), or, with no
server, on the file directly. With --store postgres://... (COMPANYDOCS_STORE,
then DATABASE_URL) it works on the PostgreSQL store, also while servers run
on it.`

// accountsSocketTimeout bounds an accounts command sent to a running
// server: one small transaction, or a server that hangs.
const accountsSocketTimeout = 30 * time.Second

// runAccounts administers accounts: through a running server's store
// socket, else directly in the order database. Help and usage errors
// touch nothing; working directly, it holds the data directory's lock, as
// a server does, while it works.
func runAccounts(args []string, stdout, stderr io.Writer) error {
	if err := checkAccountsCommand(args, stdout, stderr); err != nil {
		return err
	}
	fs, opts := newAccountsFlagSet(args[0], stdout, stderr)
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if err := checkAccountsArgs(args[0], fs.Args(), opts.name, opts.credits, opts.add); err != nil {
		return err
	}
	req := opts.request()
	url := storeURL(fs, opts.store)
	if url == "" {
		ctx, cancel := context.WithTimeout(context.Background(), accountsSocketTimeout)
		defer cancel()
		online, err := accountsOnServer(ctx, opts.dataDir, args[0], req, opts.asJSON, stdout)
		if online || err != nil {
			return err
		}
	}
	db, release, err := openAccountsStore(opts.dataDir, url)
	if err != nil {
		return err
	}
	defer release()
	return accountsDirect(ordering.NewAccounts(db, ordering.Options{SweepInterval: -1}), args[0], req, opts.asJSON, stdout)
}

// checkAccountsCommand refuses a missing or unknown accounts command and
// answers help, before any flag is read: help and usage errors touch
// nothing.
func checkAccountsCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, accountsUsage)
		return errUsage
	}
	switch args[0] {
	case "create", "list", "credit":
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Fprintln(stdout, accountsUsage)
		return flag.ErrHelp
	default:
		fmt.Fprintf(stderr, "unknown accounts command %q\n%s\n", args[0], accountsUsage)
		return errUsage
	}
}

// accountsFlags are the flags of an accounts command.
type accountsFlags struct {
	dataDir, name string
	store         string
	credits, add  int
	asJSON        bool
	operator      bool
}

// newAccountsFlagSet declares the flags of one accounts command, and only
// those, so that its help lists what it takes and another command's flag
// is refused.
func newAccountsFlagSet(command string, stdout, stderr io.Writer) (*flagSet, *accountsFlags) {
	opts := &accountsFlags{}
	fs := newFlagSet("accounts "+command, stdout, stderr)
	fs.String(&opts.dataDir, "data-dir", defaultDataDir, "data directory holding orders.db")
	fs.StringVar(&opts.store, "store", "", "the PostgreSQL store (postgres://...) instead of orders.db (env "+envName("store")+", then DATABASE_URL)")
	switch command {
	case "create":
		fs.Synopsis = "usage:\n  companydocs accounts create --name N --credits C [--json]\n  companydocs accounts create --operator --name N [--credits C] [--json]"
		fs.StringVar(&opts.name, "name", "", "account name")
		fs.IntVar(&opts.credits, "credits", 0, "starting credits")
		fs.BoolVar(&opts.operator, "operator", false, "create an operator account")
		fs.BoolVar(&opts.asJSON, "json", false, "print JSON")
	case "list":
		fs.Synopsis = "usage: companydocs accounts list [--json]"
		fs.BoolVar(&opts.asJSON, "json", false, "print JSON")
	case "credit":
		fs.Synopsis = "usage: companydocs accounts credit --name N --add C"
		fs.StringVar(&opts.name, "name", "", "account name")
		fs.IntVar(&opts.add, "add", 0, "credits to add, negative to take away")
	}
	return fs, opts
}

// request is the command's request, the same whether a server's socket
// or the store itself carries it out.
func (o *accountsFlags) request() bbolt.AccountRequest {
	role := companydocs.RoleClient
	if o.operator {
		role = companydocs.RoleOperator
	}
	return bbolt.AccountRequest{Name: o.name, Role: role, Credits: int64(o.credits), Add: int64(o.add)}
}

// accountsDirect runs an accounts command on the store itself.
func accountsDirect(svc *ordering.Accounts, command string, req bbolt.AccountRequest, asJSON bool, stdout io.Writer) error {
	switch command {
	case "create":
		key, err := svc.CreateAccountWithRole(req.Name, req.Role, req.Credits)
		if err != nil {
			return err
		}
		return printCreated(bbolt.CreatedAccount{Name: req.Name, APIKey: key, Credits: req.Credits, Role: req.Role}, asJSON, stdout)
	case "list":
		accounts, err := svc.All()
		if err != nil {
			return err
		}
		return printAccounts(accounts, asJSON, stdout)
	case "credit":
		if err := svc.AddCredits(req.Name, req.Add); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Added %d credits to %s.\n", req.Add, req.Name)
		return nil
	}
	return fmt.Errorf("unknown accounts command %q: %w", command, errUsage)
}

// accountsOnServer runs an accounts command through the store socket of
// the server running on dataDir, printing what accountsDirect prints.
// online is false, and nothing happened, when no server listens.
func accountsOnServer(ctx context.Context, dataDir, command string, req bbolt.AccountRequest, asJSON bool, stdout io.Writer) (online bool, err error) {
	switch command {
	case "create":
		var created bbolt.CreatedAccount
		if online, err = bbolt.AskServer(ctx, dataDir, http.MethodPost, "/accounts", req, &created); !online || err != nil {
			return online, err
		}
		return true, printCreated(created, asJSON, stdout)
	case "list":
		var accounts []ordering.Account
		if online, err = bbolt.AskServer(ctx, dataDir, http.MethodGet, "/accounts", nil, &accounts); !online || err != nil {
			return online, err
		}
		return true, printAccounts(accounts, asJSON, stdout)
	case "credit":
		var done struct{}
		if online, err = bbolt.AskServer(ctx, dataDir, http.MethodPost, "/accounts/credit", bbolt.AccountRequest{Name: req.Name, Add: req.Add}, &done); !online || err != nil {
			return online, err
		}
		fmt.Fprintf(stdout, "Added %d credits to %s.\n", req.Add, req.Name)
		return true, nil
	}
	return false, fmt.Errorf("unknown accounts command %q: %w", command, errUsage)
}

// openAccountsStore opens the PostgreSQL store the URL names, which
// servers may share meanwhile, or else orders.db in dataDir under the data
// directory's lock; release closes what it opened.
func openAccountsStore(dataDir, url string) (ordering.Store, func(), error) {
	if url != "" {
		if !postgresURL(url) {
			return nil, nil, fmt.Errorf("--store (%s) must be a postgres:// URL, or empty for orders.db: %w", envName("store"), errUsage)
		}
		db, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 2})
		if err != nil {
			return nil, nil, fmt.Errorf("open the order store in PostgreSQL (--store): %w", err)
		}
		return db, func() { db.Close() }, nil
	}
	lock, err := lockAccountsDataDir(dataDir)
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dataDir, bbolt.DatabaseFile)
	db, err := bbolt.Open(path, bbolt.Options{})
	if errors.Is(err, bbolt.ErrInUse) {
		err = fmt.Errorf("a running companydocs server holds %s and does not answer on %s: run this command again once it serves, or stop the server, run it, then start the server again", path, bbolt.SocketFile)
	} else if err != nil {
		err = explainStoreError(path, err)
	}
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	return db, func() { db.Close(); lock.Close() }, nil
}

// checkAccountsArgs finds usage errors before anything is opened.
func checkAccountsArgs(command string, rest []string, name string, credits, add int) error {
	switch {
	case len(rest) > 0:
		return fmt.Errorf("accounts %s takes no arguments, got %q: %w", command, rest, errUsage)
	case command == "create" && name == "":
		return fmt.Errorf("accounts create needs --name: %w", errUsage)
	case command == "create" && credits < 0:
		return fmt.Errorf("accounts create needs --credits of 0 or more, got %d: %w", credits, errUsage)
	case command == "credit" && (name == "" || add == 0):
		return fmt.Errorf("accounts credit needs --name and a non-zero --add: %w", errUsage)
	}
	return nil
}

// lockAccountsDataDir takes the data directory's lock, which a running
// server holds from its start (its first ingest included) to its end.
func lockAccountsDataDir(dataDir string) (*os.File, error) {
	if st, err := os.Stat(dataDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("the data directory %s does not exist: start the server once, or pass --data-dir", dataDir)
	}
	lock, err := lockDataDir(dataDir, "accounts")
	var inUse *DataDirInUseError
	if errors.As(err, &inUse) {
		return nil, fmt.Errorf("%w and does not answer on %s yet: run this command again once the server serves (for a server on PostgreSQL, pass --store), or stop the server, run it, then start the server again", err, bbolt.SocketFile)
	}
	return lock, err
}

func printCreated(a bbolt.CreatedAccount, asJSON bool, stdout io.Writer) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(a)
	}
	fmt.Fprintf(stdout, "Created %s account %s with %d credits.\nAPI key (shown only now, store it safely): %s\n", a.Role, a.Name, a.Credits, a.APIKey)
	return nil
}

func printAccounts(accounts []ordering.Account, asJSON bool, stdout io.Writer) error {
	if asJSON {
		return json.NewEncoder(stdout).Encode(accounts)
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tROLE\tCREDITS\tCREATED")
	for _, a := range accounts {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", a.Name, a.Role, a.Credits, a.CreatedAt.Format("2006-01-02 15:04"))
	}
	return w.Flush()
}
