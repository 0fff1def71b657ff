package postgres

import (
	"encoding/json"
	"fmt"

	"companydocs/ordering"
)

// Watch returns the watch, locking its row in Update: a comparison reads
// it again under the lock, so that a second node comparing the same
// generation waits and then sees the watch advanced.
func (t watchTx) Watch(id string) (*ordering.WatchRecord, error) {
	list, err := jsonRows[ordering.WatchRecord](t.txState, "SELECT record FROM watches WHERE id = $1"+t.forUpdate(), id)
	if err != nil || len(list) == 0 {
		return nil, wrap(err, "read watch "+id)
	}
	return &list[0], nil
}

// Watches returns up to limit watches with ids above after.
func (t watchTx) Watches(after string, limit int) ([]ordering.WatchRecord, error) {
	list, err := jsonRows[ordering.WatchRecord](t.txState, "SELECT record FROM watches WHERE id > $1 ORDER BY id LIMIT $2", after, limit)
	return list, wrap(err, "list watches")
}

// AccountWatches returns the account's watches in id order.
func (t watchTx) AccountWatches(account string) ([]ordering.WatchRecord, error) {
	list, err := jsonRows[ordering.WatchRecord](t.txState, "SELECT record FROM watches WHERE account = $1 ORDER BY id", account)
	return list, wrap(err, "list the watches of "+account)
}

// ProfileWatch returns the id of the account's watch of the profile.
func (t watchTx) ProfileWatch(account, profileID string) (string, error) {
	var id string
	_, err := t.one("SELECT id FROM watches WHERE account = $1 AND profile_id = $2", []any{account, profileID}, &id)
	return id, wrap(err, "find a watch")
}

func watchRecord(rec *ordering.WatchRecord) ([]byte, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("encode watch %s: %w", rec.ID, err)
	}
	return raw, nil
}

// InsertWatch stores a new watch: ErrExists when the id, or the account
// and profile, are taken.
func (t watchTx) InsertWatch(rec *ordering.WatchRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	raw, err := watchRecord(rec)
	if err != nil {
		return err
	}
	n, err := t.exec(`INSERT INTO watches (id, account, profile_id, generation, ended, record)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
		rec.ID, rec.Account, rec.CompanyProfileID, rec.Generation, rec.Ended, raw)
	return inserted(n, err, "store watch "+rec.ID)
}

// UpdateWatch replaces a stored watch, its profile included (a move).
func (t watchTx) UpdateWatch(rec *ordering.WatchRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	raw, err := watchRecord(rec)
	if err != nil {
		return err
	}
	n, err := t.exec("UPDATE watches SET profile_id = $2, generation = $3, ended = $4, record = $5 WHERE id = $1",
		rec.ID, rec.CompanyProfileID, rec.Generation, rec.Ended, raw)
	if err != nil {
		return fmt.Errorf("update watch %s: %w", rec.ID, err)
	} else if n == 0 {
		return fmt.Errorf("update watch %s: %w", rec.ID, ordering.ErrNotFound)
	}
	return nil
}

// DeleteWatch removes a watch.
func (t watchTx) DeleteWatch(id string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("DELETE FROM watches WHERE id = $1", id)
	return wrap(err, "delete watch "+id)
}
