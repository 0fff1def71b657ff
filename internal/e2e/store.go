package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"companydocs/app"
	"companydocs/bbolt"
	"companydocs/ordering"
)

// RunCmd runs the command line and returns its error and output.
func RunCmd(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := app.RunCommand(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), err
}

// OrderService is Accounts and Orders over the order database in a data
// directory, for tests that fill or inspect it while no server runs.
type OrderService struct {
	*ordering.Accounts
	*ordering.Orders
	db *bbolt.DB
}

// Close stops the session sweep and closes the database.
func (s *OrderService) Close() error {
	s.Accounts.Close()
	return s.db.Close()
}

// OpenOrderService opens the order database in dir and Accounts over it.
func OpenOrderService(tb testing.TB, dir string, opts ordering.Options) (*OrderService, *bbolt.DB) {
	tb.Helper()
	db, err := bbolt.Open(filepath.Join(dir, bbolt.DatabaseFile), bbolt.Options{})
	if err != nil {
		tb.Fatalf("open the order database: %v", err)
	}
	opts.SweepInterval = -1
	docs, err := bbolt.OpenDocuments(db, filepath.Join(dir, ordering.DocumentsDir))
	if err != nil {
		db.Close()
		tb.Fatalf("open the documents: %v", err)
	}
	opts.Documents = docs
	svc, err := ordering.New(db, nil, nil, opts)
	if err != nil {
		db.Close()
		tb.Fatalf("open the order database: %v", err)
	}
	return &OrderService{Accounts: ordering.NewAccounts(db, opts), Orders: svc.Orders, db: db}, db
}

// StoreAccounts creates n accounts in dir's order database before a
// server opens it and returns their API keys by name.
func StoreAccounts(t *testing.T, dir string, n int) map[string]string {
	t.Helper()
	svc, _ := OpenOrderService(t, dir, ordering.Options{})
	defer svc.Close()
	keys := map[string]string{}
	for i := range n {
		name := fmt.Sprintf("store-%d", i)
		var err error
		if keys[name], err = svc.CreateAccount(name, 1000); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
