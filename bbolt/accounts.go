package bbolt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"companydocs/ordering"
)

// Account returns the account, or nil.
func (t accountTx) Account(name string) (*ordering.AccountRecord, error) {
	var rec ordering.AccountRecord
	found, err := getJSON(t.read(bucketAccounts), []byte(name), &rec)
	if !found || err != nil {
		return nil, err
	}
	return &rec, nil
}

// Accounts returns every account in name order.
func (t accountTx) Accounts() ([]ordering.AccountRecord, error) {
	var out []ordering.AccountRecord
	err := t.read(bucketAccounts).ForEach(func(k, v []byte) error {
		var rec ordering.AccountRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode account %q: %w", k, err)
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}

// CreateAccount stores a new account and its key hash.
func (t accountTx) CreateAccount(rec *ordering.AccountRecord) error {
	if t.read(bucketAccounts).Get([]byte(rec.Name)) != nil || t.read(bucketKeys).Get(rec.KeyHash) != nil {
		return ordering.ErrExists
	}
	if err := t.write(bucketKeys).Put(rec.KeyHash, []byte(rec.Name)); err != nil {
		return fmt.Errorf("store key of %q: %w", rec.Name, err)
	}
	return putJSON(t.write(bucketAccounts), []byte(rec.Name), rec)
}

// AccountForKey returns the account name the key hash leads to, or "".
func (t accountTx) AccountForKey(keyHash []byte) (string, error) {
	return string(t.read(bucketKeys).Get(keyHash)), nil
}

// SetAccountKey replaces the account's key hash in the record and in the
// keys bucket.
func (t accountTx) SetAccountKey(account string, keyHash []byte) error {
	return t.changeAccount(account, func(rec *ordering.AccountRecord) error {
		keys := t.write(bucketKeys)
		if err := keys.Delete(rec.KeyHash); err != nil {
			return fmt.Errorf("delete old key of %q: %w", account, err)
		}
		rec.KeyHash = bytes.Clone(keyHash)
		if err := keys.Put(rec.KeyHash, []byte(account)); err != nil {
			return fmt.Errorf("store key of %q: %w", account, err)
		}
		return nil
	})
}

// AddCredits changes the balance by n; the rules checked that it stays
// at or above zero (one writer at a time: nothing changes it meanwhile).
func (t accountTx) AddCredits(account string, n int64) (balance int64, err error) {
	err = t.changeAccount(account, func(rec *ordering.AccountRecord) error {
		rec.Credits += n
		balance = rec.Credits
		return nil
	})
	return balance, err
}

// changeAccount reads the account, lets change modify it and stores it,
// unless change fails.
func (t accountTx) changeAccount(name string, change func(*ordering.AccountRecord) error) error {
	rec, err := t.Account(name)
	if err != nil {
		return err
	}
	if rec == nil {
		return ordering.ErrNotFound
	}
	if err := change(rec); err != nil {
		return err
	}
	return putJSON(t.write(bucketAccounts), []byte(name), rec)
}
