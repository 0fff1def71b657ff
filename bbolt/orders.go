package bbolt

import (
	"bytes"
	"fmt"
	"strings"

	"companydocs/ordering"
)

// Order returns the order with the id, or nil.
func (t orderTx) Order(id string) (*ordering.OrderRecord, error) {
	var rec ordering.OrderRecord
	found, err := getJSON(t.read(bucketOrders), []byte(id), &rec)
	if !found || err != nil {
		return nil, err
	}
	return &rec, nil
}

// InsertOrder writes the order and its entries in the account and status
// indexes.
func (t orderTx) InsertOrder(rec *ordering.OrderRecord) error {
	id := []byte(rec.Order.ID)
	orders := t.write(bucketOrders)
	if orders.Get(id) != nil {
		return ordering.ErrExists
	}
	// Order ids grow, so new orders go to the last page: filling pages
	// before they split (instead of halving them) halves the pages a
	// commit writes for its orders and the file space they take.
	orders.FillPercent = 1
	if err := putJSON(orders, id, rec); err != nil {
		return fmt.Errorf("order: %w", err)
	}
	if err := t.write(bucketAccountOrders).Put(key(rec.Account, rec.Order.ID), id); err != nil {
		return fmt.Errorf("index order %s: %w", id, err)
	}
	return t.indexStatus(rec)
}

// UpdateOrder replaces the order and moves its status index entry.
func (t orderTx) UpdateOrder(rec *ordering.OrderRecord, from string) error {
	id := []byte(rec.Order.ID)
	if t.read(bucketOrders).Get(id) == nil {
		return ordering.ErrNotFound
	}
	if err := t.write(bucketOrderStatus).Delete(key(from, rec.Order.ID)); err != nil {
		return fmt.Errorf("unindex order %s: %w", id, err)
	}
	if err := t.indexStatus(rec); err != nil {
		return err
	}
	return putJSON(t.write(bucketOrders), id, rec)
}

func (t orderTx) indexStatus(rec *ordering.OrderRecord) error {
	if err := t.write(bucketOrderStatus).Put(key(rec.Order.Status, rec.Order.ID), []byte(rec.Account)); err != nil {
		return fmt.Errorf("index order %s: %w", rec.Order.ID, err)
	}
	return nil
}

// IdempotentOrder returns the order bound to the account's key, or "".
func (t orderTx) IdempotentOrder(account, idemKey string) (string, error) {
	return string(t.read(bucketIdempotency).Get(key(account, idemKey))), nil
}

// ClaimIdempotencyKey binds the key to orderID unless an order holds it.
func (t orderTx) ClaimIdempotencyKey(account, idemKey, orderID string) (string, error) {
	return t.claim(bucketIdempotency, key(account, idemKey), orderID)
}

// OpenOrder returns the open order of the slot, or "".
func (t orderTx) OpenOrder(slot ordering.OpenSlot) (string, error) {
	return string(t.read(bucketOpenOrders).Get(slotKey(slot))), nil
}

// ClaimOpenOrder makes orderID the slot's open order unless one holds it.
func (t orderTx) ClaimOpenOrder(slot ordering.OpenSlot, orderID string) (string, error) {
	return t.claim(bucketOpenOrders, slotKey(slot), orderID)
}

func (t orderTx) claim(bucket, k []byte, orderID string) (holder string, err error) {
	if id := t.read(bucket).Get(k); id != nil {
		return string(id), nil
	}
	if err := t.write(bucket).Put(k, []byte(orderID)); err != nil {
		return "", fmt.Errorf("index order %s in %s: %w", orderID, bucket, err)
	}
	return "", nil
}

// ReleaseOpenOrder frees the slot (the rules checked its holder).
func (t orderTx) ReleaseOpenOrder(slot ordering.OpenSlot) error {
	if err := t.write(bucketOpenOrders).Delete(slotKey(slot)); err != nil {
		return fmt.Errorf("free the open-order slot: %w", err)
	}
	return nil
}

// slotKey: account 0 profile 0 document type 0 plan.
func slotKey(s ordering.OpenSlot) []byte {
	return key(s.Account, s.ProfileID, string(s.DocumentType), s.PlanID)
}

// AccountOrders walks the account's index backwards from just below
// before (or from the end).
func (t orderTx) AccountOrders(account, status, before string, limit int) ([]*ordering.OrderRecord, error) {
	prefix := key(account, "")
	var start []byte
	if before != "" {
		start = key(account, before)
	}
	c := t.read(bucketAccountOrders).Cursor()
	var out []*ordering.OrderRecord
	for k, v := lastUnder(c, prefix, start); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Prev() {
		rec, err := t.mustOrder(string(v))
		if err != nil {
			return nil, err
		}
		if status == "" || rec.Order.Status == status {
			out = append(out, rec)
		}
	}
	return out, nil
}

// QueuedOrders walks the orders oldest first: the orders bucket (ids sort
// by time) or, for one status, the status index.
func (t orderTx) QueuedOrders(status, after string, limit int) ([]*ordering.OrderRecord, error) {
	c := t.read(bucketOrders).Cursor()
	prefix := []byte{}
	if status != "" {
		c = t.read(bucketOrderStatus).Cursor()
		prefix = key(status, "")
	}
	from := append(bytes.Clone(prefix), after...)
	k, _ := c.Seek(from)
	if after != "" && bytes.Equal(k, from) {
		k, _ = c.Next()
	}
	var out []*ordering.OrderRecord
	for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, _ = c.Next() {
		rec, err := t.mustOrder(string(k[len(prefix):]))
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

// mustOrder reads an order an index names: its absence is damage.
func (t orderTx) mustOrder(id string) (*ordering.OrderRecord, error) {
	rec, err := t.Order(id)
	if err == nil && rec == nil {
		err = fmt.Errorf("an index names order %q, which is missing", id)
	}
	return rec, err
}

// CountOrdersByStatus counts the entries of the status index.
func (t orderTx) CountOrdersByStatus() (map[string]int, error) {
	counts := map[string]int{}
	err := t.read(bucketOrderStatus).ForEach(func(k, _ []byte) error {
		status, _, _ := strings.Cut(string(k), "\x00")
		counts[status]++
		return nil
	})
	return counts, err
}

// AddDocumentRef records the order's document.
func (t orderTx) AddDocumentRef(sha256, orderID string) error {
	if err := t.write(bucketDocuments).Put(key(sha256, orderID), []byte{}); err != nil {
		return fmt.Errorf("reference document of order %s: %w", orderID, err)
	}
	return nil
}

// DocumentRefs calls fn with every reference, in SHA-256 order.
func (t orderTx) DocumentRefs(fn func(sha256, orderID string) error) error {
	return t.read(bucketDocuments).ForEach(func(k, _ []byte) error {
		sha, id, _ := bytes.Cut(k, []byte{0})
		return fn(string(sha), string(id))
	})
}
