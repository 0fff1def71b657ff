package bbolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"

	"companydocs"
	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// checkRecords checks what bbolt's page check cannot see, since bbolt
// keeps no checksum of its data pages: a damaged byte inside a key or a
// value. Every record must decode and every reference between buckets
// must hold: an account's key hash leads back to it, a session, an order
// and each index entry name an account or order that exists. A damaged
// byte almost always breaks one of these.
func checkRecords(tx *bolt.Tx) error {
	if err := checkBucketNames(tx); err != nil {
		return err
	}
	accounts, err := checkAccounts(tx)
	if err != nil {
		return err
	}
	if err := checkSessions(tx, accounts); err != nil {
		return err
	}
	orders, err := checkOrders(tx, accounts)
	if err != nil {
		return err
	}
	if err := checkOrderIndexes(tx, orders); err != nil {
		return err
	}
	if err := checkLifecycle(tx, accounts); err != nil {
		return err
	}
	if err := checkWatches(tx, accounts); err != nil {
		return err
	}
	return checkWebhooks(tx, accounts)
}

// checkLifecycle checks the buckets of the order lifecycle: every status
// index entry names an order in that status, every document reference a
// delivered order with that document, every outbox event an order of its
// account (or, the event of a watch, an account); and every delivered
// order has its document reference.
func checkLifecycle(tx *bolt.Tx, accounts map[string]bool) error {
	for _, check := range []func(*bolt.Tx, map[string]bool) error{
		checkStatusIndex, checkDocumentIndex, checkOutbox, checkDeliveredDocuments,
	} {
		if err := check(tx, accounts); err != nil {
			return err
		}
	}
	return nil
}

func checkStatusIndex(tx *bolt.Tx, _ map[string]bool) error {
	return forEach(tx, bucketOrderStatus, func(k, v []byte) error {
		status, id, _ := bytes.Cut(k, []byte{0})
		rec, err := storedOrder(tx, string(id))
		if err != nil || rec.Order.Status != string(status) || rec.Account != string(v) {
			return fmt.Errorf("the entry names order %q in status %s, which does not match", id, status)
		}
		return nil
	})
}

func checkDocumentIndex(tx *bolt.Tx, _ map[string]bool) error {
	return forEach(tx, bucketDocuments, func(k, v []byte) error {
		sha, id, _ := bytes.Cut(k, []byte{0})
		rec, err := storedOrder(tx, string(id))
		if err != nil || rec.Order.Document == nil || rec.Order.Document.SHA256 != string(sha) {
			return fmt.Errorf("the entry names order %q with document %s, which does not match", id, sha)
		}
		return nil
	})
}

func checkOutbox(tx *bolt.Tx, accounts map[string]bool) error {
	return forEach(tx, bucketOutbox, func(k, v []byte) error {
		var e ordering.Event
		if err := json.Unmarshal(v, &e); err != nil {
			return err
		}
		if e.OrderID == "" {
			if e.ID != string(k) || e.Type != companydocs.EventCompanyChanged || !accounts[e.Account] {
				return fmt.Errorf("the event of type %s names no order, and account %q", e.Type, e.Account)
			}
			return nil
		}
		rec, err := storedOrder(tx, e.OrderID)
		if e.ID != string(k) || err != nil || rec.Account != e.Account {
			return fmt.Errorf("the event names order %q of account %q, which does not match", e.OrderID, e.Account)
		}
		return nil
	})
}

func checkDeliveredDocuments(tx *bolt.Tx, _ map[string]bool) error {
	return forEach(tx, bucketOrders, func(k, v []byte) error {
		var rec ordering.OrderRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if d := rec.Order.Document; d != nil && (tx.Bucket(bucketDocuments) == nil || tx.Bucket(bucketDocuments).Get(key(d.SHA256, rec.Order.ID)) == nil) {
			return fmt.Errorf("the delivered order has no reference to its document %s", d.SHA256)
		}
		return nil
	})
}

func checkBucketNames(tx *bolt.Tx) error {
	known := map[string]bool{}
	for _, b := range allBuckets {
		known[string(b)] = true
	}
	return tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !known[string(name)] {
			return fmt.Errorf("unknown bucket %q (a damaged name?)", name)
		}
		return nil
	})
}

// forEach runs fn over a bucket that may be missing (a database older than
// the bucket; Open creates it).
func forEach(tx *bolt.Tx, name []byte, fn func(k, v []byte) error) error {
	b := tx.Bucket(name)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if err := fn(k, v); err != nil {
			return fmt.Errorf("bucket %s, key %q: %w", name, k, err)
		}
		return nil
	})
}

func checkAccounts(tx *bolt.Tx) (map[string]bool, error) {
	accounts := map[string]bool{}
	keys := tx.Bucket(bucketKeys)
	err := forEach(tx, bucketAccounts, func(k, v []byte) error {
		var rec ordering.AccountRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if rec.Name != string(k) {
			return fmt.Errorf("the record names account %q", rec.Name)
		}
		if keys == nil || !bytes.Equal(keys.Get(rec.KeyHash), k) {
			return fmt.Errorf("the account's key hash does not lead back to it")
		}
		accounts[rec.Name] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return accounts, forEach(tx, bucketKeys, func(k, v []byte) error {
		if !accounts[string(v)] {
			return fmt.Errorf("the key names account %q, which does not exist", v)
		}
		return nil
	})
}

func checkSessions(tx *bolt.Tx, accounts map[string]bool) error {
	return forEach(tx, bucketSessions, func(k, v []byte) error {
		var rec ordering.SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if !accounts[rec.Account] || len(k) != 32 {
			return fmt.Errorf("a session of account %q, which does not exist, or a damaged token hash", rec.Account)
		}
		return nil
	})
}

// checkOrders returns the account of every order.
func checkOrders(tx *bolt.Tx, accounts map[string]bool) (map[string]string, error) {
	orders := map[string]string{}
	return orders, forEach(tx, bucketOrders, func(k, v []byte) error {
		var rec ordering.OrderRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		if rec.Order.ID != string(k) || !accounts[rec.Account] {
			return fmt.Errorf("the record is order %q of account %q, which does not match", rec.Order.ID, rec.Account)
		}
		orders[rec.Order.ID] = rec.Account
		return nil
	})
}

// checkOrderIndexes checks that every index entry names a stored order of
// the account its key starts with.
func checkOrderIndexes(tx *bolt.Tx, orders map[string]string) error {
	for _, name := range [][]byte{bucketAccountOrders, bucketIdempotency, bucketOpenOrders} {
		err := forEach(tx, name, func(k, v []byte) error {
			owner, ok := orders[string(v)]
			if !ok {
				return fmt.Errorf("the entry names order %q, which does not exist", v)
			}
			if account, _, _ := bytes.Cut(k, []byte{0}); string(account) != owner {
				return fmt.Errorf("the entry names order %q of another account", v)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// checkWebhooks checks that every endpoint belongs to an account, every
// delivery to an endpoint, every pending entry to a pending delivery, and
// that each stored body is counted with the deliveries that refer to it.
func checkWebhooks(tx *bolt.Tx, accounts map[string]bool) error {
	endpoints, err := checkEndpoints(tx, accounts)
	if err != nil {
		return err
	}
	refs, err := checkDeliveries(tx, endpoints)
	if err != nil {
		return err
	}
	if err := checkBodies(tx, refs); err != nil {
		return err
	}
	if err := checkPending(tx); err != nil {
		return err
	}
	return checkDue(tx)
}

// checkEndpoints returns the id of every endpoint.
func checkEndpoints(tx *bolt.Tx, accounts map[string]bool) (map[string]bool, error) {
	endpoints := map[string]bool{}
	return endpoints, forEach(tx, bucketWebhooks, func(k, v []byte) error {
		var ep ordering.EndpointRecord
		if err := json.Unmarshal(v, &ep); err != nil {
			return err
		}
		if ep.ID != string(k) || !accounts[ep.Account] || !strings.HasPrefix(ep.Secret, "whsec_") {
			return fmt.Errorf("the record is endpoint %q of account %q, which does not match", ep.ID, ep.Account)
		}
		endpoints[ep.ID] = true
		return nil
	})
}

// checkDeliveries returns, for each event, the number of its deliveries
// without a body of their own.
func checkDeliveries(tx *bolt.Tx, endpoints map[string]bool) (map[string]uint32, error) {
	refs := map[string]uint32{}
	return refs, forEach(tx, bucketWebhookDeliveries, func(k, v []byte) error {
		var d ordering.DeliveryRecord
		if err := json.Unmarshal(v, &d); err != nil {
			return err
		}
		if ep, id, _ := bytes.Cut(k, []byte{0}); !endpoints[string(ep)] || string(id) != d.EventID {
			return fmt.Errorf("the delivery of event %q names a missing endpoint or another event", d.EventID)
		}
		if len(d.Body) == 0 {
			refs[d.EventID]++
		}
		return nil
	})
}

func checkPending(tx *bolt.Tx) error {
	return forEach(tx, bucketWebhookPending, func(k, v []byte) error {
		d := tx.Bucket(bucketWebhookDeliveries).Get(k)
		var rec ordering.DeliveryRecord
		if len(v) != 8 || d == nil || json.Unmarshal(d, &rec) != nil || rec.State != "pending" {
			return fmt.Errorf("the entry names no pending delivery")
		}
		if due := tx.Bucket(bucketWebhookDue); due != nil && due.Get(dueKey(k, v)) == nil {
			return fmt.Errorf("the pending delivery is missing from the due order")
		}
		return nil
	})
}

func checkDue(tx *bolt.Tx) error {
	return forEach(tx, bucketWebhookDue, func(k, _ []byte) error {
		ep, rest, ok := bytes.Cut(k, []byte{0})
		if !ok || len(rest) < 8 {
			return fmt.Errorf("malformed due entry")
		}
		at := tx.Bucket(bucketWebhookPending).Get(key(string(ep), string(rest[8:])))
		if !bytes.Equal(at, rest[:8]) {
			return fmt.Errorf("the due entry names no pending delivery due then")
		}
		return nil
	})
}

// storedOrder reads an order an entry names; a missing one is an error.
func storedOrder(btx *bolt.Tx, id string) (*ordering.OrderRecord, error) {
	return newTx(btx, nil).mustOrder(id)
}

// checkBodies checks that every body has its count of references, which
// is the number of deliveries of its event (refs), and that no delivery
// refers to a body that is missing. A database written before bodies
// were stored apart (opened read-only, not yet moved) has neither bucket,
// and its deliveries carry their bodies.
func checkBodies(tx *bolt.Tx, refs map[string]uint32) error {
	err := forEach(tx, bucketWebhookBodyRefs, func(k, v []byte) error {
		if len(v) != 4 || binary.BigEndian.Uint32(v) != refs[string(k)] {
			return fmt.Errorf("the body is counted with %x references, and %d deliveries refer to it", v, refs[string(k)])
		}
		if b := tx.Bucket(bucketWebhookBodies); b == nil || b.Get(k) == nil {
			return fmt.Errorf("the count names a body that is not stored")
		}
		delete(refs, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	for id := range refs {
		return fmt.Errorf("a delivery of event %q refers to a body that is not stored", id)
	}
	return forEach(tx, bucketWebhookBodies, func(k, _ []byte) error {
		if b := tx.Bucket(bucketWebhookBodyRefs); b == nil || b.Get(k) == nil {
			return fmt.Errorf("the body is stored without its count of references")
		}
		return nil
	})
}

// checkWatches checks that every watch decodes under its id, names an
// account, and that the two indexes of watches and the records agree.
func checkWatches(tx *bolt.Tx, accounts map[string]bool) error {
	byAccount, byProfile := tx.Bucket(bucketAccountWatches), tx.Bucket(bucketProfileWatches)
	n := 0
	err := forEach(tx, bucketWatches, func(k, v []byte) error {
		rec, err := decodeWatch(k, v)
		switch {
		case err != nil:
			return err
		case rec.ID != string(k) || !accounts[rec.Account]:
			return fmt.Errorf("the record names watch %q of account %q", rec.ID, rec.Account)
		case byAccount == nil || byAccount.Get(key(rec.Account, rec.ID)) == nil,
			byProfile == nil || string(byProfile.Get(key(rec.Account, rec.CompanyProfileID))) != rec.ID:
			return fmt.Errorf("the watch is missing from its indexes")
		}
		n++
		return nil
	})
	if err != nil {
		return err
	}
	for _, b := range []*bolt.Bucket{byAccount, byProfile} {
		if b != nil && b.Stats().KeyN != n {
			return fmt.Errorf("the watch indexes hold %d entries for %d watches", b.Stats().KeyN, n)
		}
	}
	return nil
}
