package bbolt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// Watch returns the watch, or nil. Writes run one at a time here, so no
// lock is needed.
func (t watchTx) Watch(id string) (*ordering.WatchRecord, error) {
	b := t.read(bucketWatches)
	if b == nil {
		return nil, nil // a file written before watches, opened read-only
	}
	var rec ordering.WatchRecord
	found, err := getJSON(b, []byte(id), &rec)
	if !found || err != nil {
		return nil, err
	}
	return &rec, nil
}

// Watches returns up to limit watches with ids above after.
func (t watchTx) Watches(after string, limit int) ([]ordering.WatchRecord, error) {
	b := t.read(bucketWatches)
	if b == nil {
		return nil, nil
	}
	var out []ordering.WatchRecord
	c := b.Cursor()
	k, v := firstAfter(c, after)
	for ; k != nil && len(out) < limit; k, v = c.Next() {
		rec, err := decodeWatch(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

func decodeWatch(k, v []byte) (ordering.WatchRecord, error) {
	var rec ordering.WatchRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return rec, fmt.Errorf("decode watch %s: %w", k, err)
	}
	return rec, nil
}

// AccountWatches returns the account's watches in id order.
func (t watchTx) AccountWatches(account string) ([]ordering.WatchRecord, error) {
	index, records := t.read(bucketAccountWatches), t.read(bucketWatches)
	if index == nil || records == nil {
		return nil, nil
	}
	var out []ordering.WatchRecord
	prefix := key(account, "")
	c := index.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[len(prefix):]
		v := records.Get(id)
		if v == nil {
			return nil, fmt.Errorf("watch %s of account %s is indexed but missing", id, account)
		}
		rec, err := decodeWatch(id, v)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// ProfileWatch returns the id of the account's watch of the profile.
func (t watchTx) ProfileWatch(account, profileID string) (string, error) {
	b := t.read(bucketProfileWatches)
	if b == nil {
		return "", nil
	}
	return string(b.Get(key(account, profileID))), nil
}

// InsertWatch stores a new watch and its two index entries.
func (t watchTx) InsertWatch(rec *ordering.WatchRecord) error {
	if t.read(bucketWatches).Get([]byte(rec.ID)) != nil || t.read(bucketProfileWatches).Get(key(rec.Account, rec.CompanyProfileID)) != nil {
		return ordering.ErrExists
	}
	if err := t.putWatch(rec); err != nil {
		return err
	}
	if err := t.write(bucketAccountWatches).Put(key(rec.Account, rec.ID), nil); err != nil {
		return fmt.Errorf("index watch %s: %w", rec.ID, err)
	}
	if err := t.write(bucketProfileWatches).Put(key(rec.Account, rec.CompanyProfileID), []byte(rec.ID)); err != nil {
		return fmt.Errorf("index watch %s: %w", rec.ID, err)
	}
	return nil
}

// putWatch stores the record; ids grow, so pages are filled before they
// split.
func (t watchTx) putWatch(rec *ordering.WatchRecord) error {
	b := t.write(bucketWatches)
	b.FillPercent = 0.9
	return putJSON(b, []byte(rec.ID), rec)
}

// UpdateWatch replaces a stored watch, moving its profile index entry
// when its profile changed.
func (t watchTx) UpdateWatch(rec *ordering.WatchRecord) error {
	raw := t.read(bucketWatches).Get([]byte(rec.ID))
	if raw == nil {
		return ordering.ErrNotFound
	}
	var old struct { // its profile only: the snapshot is not decoded again
		CompanyProfileID string `json:"company_profile_id"`
	}
	if err := json.Unmarshal(raw, &old); err != nil {
		return fmt.Errorf("decode watch %s: %w", rec.ID, err)
	}
	if old.CompanyProfileID != rec.CompanyProfileID {
		byProfile := t.write(bucketProfileWatches)
		if byProfile.Get(key(rec.Account, rec.CompanyProfileID)) != nil {
			return ordering.ErrExists
		}
		if err := byProfile.Delete(key(rec.Account, old.CompanyProfileID)); err != nil {
			return fmt.Errorf("move watch %s: %w", rec.ID, err)
		}
		if err := byProfile.Put(key(rec.Account, rec.CompanyProfileID), []byte(rec.ID)); err != nil {
			return fmt.Errorf("move watch %s: %w", rec.ID, err)
		}
	}
	return t.putWatch(rec)
}

// DeleteWatch removes a watch and its index entries.
func (t watchTx) DeleteWatch(id string) error {
	rec, err := t.Watch(id)
	if err != nil || rec == nil {
		return err
	}
	for _, del := range []struct {
		b *bolt.Bucket
		k []byte
	}{
		{t.write(bucketWatches), []byte(id)},
		{t.write(bucketAccountWatches), key(rec.Account, id)},
		{t.write(bucketProfileWatches), key(rec.Account, rec.CompanyProfileID)},
	} {
		if err := del.b.Delete(del.k); err != nil {
			return fmt.Errorf("delete watch %s: %w", id, err)
		}
	}
	return nil
}
