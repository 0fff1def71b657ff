package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs"
	"companydocs/ordering"
)

const accountColumns = "name, role, credits, key_hash, created_at"

func scanAccount(row pgx.CollectableRow) (ordering.AccountRecord, error) {
	var a ordering.AccountRecord
	err := row.Scan(&a.Name, &a.Role, &a.Credits, &a.KeyHash, &a.CreatedAt)
	a.CreatedAt = a.CreatedAt.UTC()
	return a, err
}

// Account returns the account, locking its row in Update.
func (t *txn) Account(name string) (*ordering.AccountRecord, error) {
	rows, err := t.tx.Query(t.ctx, "SELECT "+accountColumns+" FROM accounts WHERE name = $1"+t.forUpdate(), name)
	if err != nil {
		return nil, fmt.Errorf("read account %q: %w", name, err)
	}
	a, err := pgx.CollectOneRow(rows, scanAccount)
	if err == pgx.ErrNoRows {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("read account %q: %w", name, err)
	}
	return &a, nil
}

// Accounts returns every account in name order.
func (t *txn) Accounts() ([]ordering.AccountRecord, error) {
	rows, err := t.tx.Query(t.ctx, "SELECT "+accountColumns+" FROM accounts ORDER BY name")
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	list, err := pgx.CollectRows(rows, scanAccount)
	if err != nil {
		return nil, fmt.Errorf("list accounts: %w", err)
	}
	return list, nil
}

// CreateAccount inserts the account: ErrExists when the name or the key
// hash is taken. An account without a role (one stored before roles) is
// a client.
func (t *txn) CreateAccount(rec *ordering.AccountRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	role := rec.Role
	if role == "" {
		role = companydocs.RoleClient
	}
	n, err := t.exec("INSERT INTO accounts ("+accountColumns+") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		rec.Name, role, rec.Credits, rec.KeyHash, rec.CreatedAt)
	return inserted(n, err, fmt.Sprintf("create account %q", rec.Name))
}

// AccountForKey returns the name of the account with the key hash, or "".
func (t *txn) AccountForKey(keyHash []byte) (string, error) {
	var name string
	if _, err := t.one("SELECT name FROM accounts WHERE key_hash = $1", []any{keyHash}, &name); err != nil {
		return "", fmt.Errorf("look up an API key: %w", err)
	}
	return name, nil
}

// SetAccountKey replaces the account's key hash.
func (t *txn) SetAccountKey(account string, keyHash []byte) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	n, err := t.exec("UPDATE accounts SET key_hash = $2 WHERE name = $1", account, keyHash)
	if err != nil {
		return fmt.Errorf("replace the key of account %q: %w", account, err)
	}
	if n == 0 {
		return fmt.Errorf("replace the key of account %q: %w", account, ordering.ErrNotFound)
	}
	return nil
}

// AddCredits adds n credits and returns the new balance.
func (t *txn) AddCredits(account string, n int64) (int64, error) {
	if err := t.needWrite(); err != nil {
		return 0, err
	}
	var balance int64
	found, err := t.one("UPDATE accounts SET credits = credits + $2 WHERE name = $1 RETURNING credits", []any{account, n}, &balance)
	if err != nil {
		return 0, fmt.Errorf("add credits to account %q: %w", account, err)
	} else if !found {
		return 0, fmt.Errorf("add credits to account %q: %w", account, ordering.ErrNotFound)
	}
	return balance, nil
}

// DebitCredits takes cost credits in one conditional UPDATE, so that no
// interleaving of nodes takes more than the balance (and CHECK (credits
// >= 0) stands behind it).
func (t *txn) DebitCredits(account string, cost int64) (int64, error) {
	if err := t.needWrite(); err != nil {
		return 0, err
	}
	var balance int64
	found, err := t.one("UPDATE accounts SET credits = credits - $2 WHERE name = $1 AND credits >= $2 RETURNING credits", []any{account, cost}, &balance)
	if err != nil {
		return 0, fmt.Errorf("debit account %q: %w", account, err)
	} else if found {
		return balance, nil
	}
	found, err = t.one("SELECT credits FROM accounts WHERE name = $1", []any{account}, &balance)
	switch {
	case err != nil:
		return 0, fmt.Errorf("read the balance of account %q: %w", account, err)
	case !found:
		return 0, fmt.Errorf("debit account %q: %w", account, ordering.ErrNotFound)
	}
	return balance, ordering.ErrInsufficientCredits
}

// utc returns t in UTC, as the rules write times (pgx reads them in the
// local zone).
func utc(t time.Time) time.Time { return t.UTC() }
