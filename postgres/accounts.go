package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

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
func (t accountTx) Account(name string) (*ordering.AccountRecord, error) {
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
func (t accountTx) Accounts() ([]ordering.AccountRecord, error) {
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
// hash is taken. The uniqueness stays here: only the database's primary
// key and unique constraint decide two nodes creating the same name or
// key at once.
func (t accountTx) CreateAccount(rec *ordering.AccountRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	n, err := t.exec("INSERT INTO accounts ("+accountColumns+") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
		rec.Name, rec.Role, rec.Credits, rec.KeyHash, rec.CreatedAt)
	return inserted(n, err, fmt.Sprintf("create account %q", rec.Name))
}

// AccountForKey returns the name of the account with the key hash, or "".
func (t accountTx) AccountForKey(keyHash []byte) (string, error) {
	var name string
	if _, err := t.one("SELECT name FROM accounts WHERE key_hash = $1", []any{keyHash}, &name); err != nil {
		return "", fmt.Errorf("look up an API key: %w", err)
	}
	return name, nil
}

// SetAccountKey replaces the account's key hash.
func (t accountTx) SetAccountKey(account string, keyHash []byte) error {
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

// AddCredits changes the balance by n and returns the new one. The rules
// checked the balance with the account's row locked (Account in Update),
// so no other node changes it before this commits; CHECK (credits >= 0)
// stands behind them and is never the answer a client gets.
func (t accountTx) AddCredits(account string, n int64) (int64, error) {
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

// utc returns t in UTC, as the rules write times (pgx reads them in the
// local zone).
func utc(t time.Time) time.Time { return t.UTC() }
