package bbolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// Bucket names. Keys built from several parts join them with a zero byte,
// which account names, profile ids and plan ids cannot contain.
var (
	bucketAccounts      = []byte("accounts")       // account name -> AccountRecord JSON
	bucketKeys          = []byte("keys")           // sha256(api key) -> account name
	bucketSessions      = []byte("sessions")       // sha256(token) -> SessionRecord JSON
	bucketOrders        = []byte("orders")         // order id -> OrderRecord JSON
	bucketAccountOrders = []byte("account_orders") // account 0 order id -> order id (ids sort by time)
	bucketIdempotency   = []byte("idempotency")    // account 0 Idempotency-Key -> order id
	bucketOpenOrders    = []byte("open_orders")    // account 0 profile 0 document 0 plan -> order id
	bucketOrderStatus   = []byte("order_status")   // status 0 order id -> account (the operator queue, oldest first)
	bucketDocuments     = []byte("documents")      // sha256 hex 0 order id -> "" (documents on disk that orders reference)
	bucketOutbox        = []byte("outbox")         // event id -> Event JSON, until the dispatcher has it

	bucketWebhooks          = []byte("webhooks")           // endpoint id -> EndpointRecord JSON (with the secret)
	bucketWebhookDeliveries = []byte("webhook_deliveries") // endpoint id 0 event id -> DeliveryRecord JSON
	bucketWebhookPending    = []byte("webhook_pending")    // endpoint id 0 event id -> next attempt (unix ns, 8 bytes)
	bucketWebhookDue        = []byte("webhook_due")        // endpoint id 0 next attempt (8 bytes) event id -> nothing: each endpoint's pending deliveries in due order
)

// The signed body of each event with deliveries, stored once however many
// endpoints receive it, and how many deliveries refer to it: the last
// delivery deleted deletes the body. Open moves the bodies of a database
// written before these buckets out of its delivery records.
var (
	bucketWebhookBodies   = []byte("webhook_bodies")    // event id -> signed body
	bucketWebhookBodyRefs = []byte("webhook_body_refs") // event id -> deliveries referring to the body (4 bytes)
)

// bucketAccountSessions indexes sessions by account, oldest first: key
// account 0 created (8 bytes) sha256(token), no value. Open builds it for
// a database written before it existed.
var bucketAccountSessions = []byte("account_sessions")

// Watches: the records, each account's in id order, and the one watch of
// an account and profile.
var (
	bucketWatches        = []byte("watches")         // watch id -> WatchRecord JSON
	bucketAccountWatches = []byte("account_watches") // account 0 watch id -> nothing
	bucketProfileWatches = []byte("profile_watches") // account 0 profile id -> watch id
)

// Payments through a provider: the provider events applied, and the
// refunds to ask of a provider with when each is due. Pending refunds
// are few (those a provider has not yet made), so the claim reads the
// whole schedule.
var (
	bucketPaymentEvents = []byte("payment_events") // provider 0 event id -> applied at (unix ns, 8 bytes)
	bucketRefundsDue    = []byte("refunds_due")    // order id -> next attempt (unix ns, 8 bytes)
)

var allBuckets = [][]byte{bucketPaymentEvents, bucketRefundsDue, bucketAccounts, bucketKeys, bucketSessions, bucketAccountSessions, bucketOrders, bucketAccountOrders, bucketIdempotency, bucketOpenOrders, bucketOrderStatus, bucketDocuments, bucketOutbox, bucketWebhooks, bucketWebhookDeliveries, bucketWebhookPending, bucketWebhookDue, bucketWebhookBodies, bucketWebhookBodyRefs, bucketWatches, bucketAccountWatches, bucketProfileWatches}

// createBuckets creates the buckets a file lacks and builds the indexes
// that files written before them lack.
func createBuckets(tx *bolt.Tx) error {
	indexed := tx.Bucket(bucketAccountSessions) != nil
	statusIndexed := tx.Bucket(bucketOrderStatus) != nil
	dueIndexed := tx.Bucket(bucketWebhookDue) != nil
	bodiesApart := tx.Bucket(bucketWebhookBodies) != nil
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("bucket %s: %w", name, err)
		}
	}
	if !statusIndexed {
		if err := indexStatuses(tx); err != nil {
			return err
		}
	}
	if !dueIndexed {
		if err := indexDueWebhooks(tx); err != nil {
			return err
		}
	}
	if !bodiesApart {
		if err := moveDeliveryBodies(tx); err != nil {
			return err
		}
	}
	if !indexed {
		return indexSessions(tx)
	}
	return nil
}

// indexStatuses builds the status index of a database written before it
// existed.
func indexStatuses(tx *bolt.Tx) error {
	st := tx.Bucket(bucketOrderStatus)
	return tx.Bucket(bucketOrders).ForEach(func(k, v []byte) error {
		var rec ordering.OrderRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode order %s: %w", k, err)
		}
		return st.Put(key(rec.Order.Status, rec.Order.ID), []byte(rec.Account))
	})
}

// indexDueWebhooks builds bucketWebhookDue for a database written before it.
func indexDueWebhooks(tx *bolt.Tx) error {
	due := tx.Bucket(bucketWebhookDue)
	return tx.Bucket(bucketWebhookPending).ForEach(func(k, v []byte) error {
		return due.Put(dueKey(k, v), nil)
	})
}

// indexSessions builds bucketAccountSessions for a database written before
// the index existed.
func indexSessions(tx *bolt.Tx) error {
	index := tx.Bucket(bucketAccountSessions)
	return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
		var rec ordering.SessionRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return fmt.Errorf("decode session: %w", err)
		}
		return index.Put(accountSessionKey(&rec, k), nil)
	})
}

// key joins parts with a zero byte.
func key(parts ...string) []byte {
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for i, p := range parts {
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, p...)
	}
	return b
}

// accountSessionKey is the key of a session in bucketAccountSessions:
// account 0 creation time (8 bytes, big-endian Unix nanoseconds) token
// hash, so that an account's sessions are one key range, oldest first.
func accountSessionKey(rec *ordering.SessionRecord, hash []byte) []byte {
	k := make([]byte, 0, len(rec.Account)+1+8+len(hash))
	k = append(k, rec.Account...)
	k = append(k, 0)
	k = binary.BigEndian.AppendUint64(k, uint64(rec.CreatedAt.UnixNano()))
	return append(k, hash...)
}

// dueKey is the key of pending delivery k (endpoint 0 event), due at at
// (8 bytes), in bucketWebhookDue: endpoint 0 at event.
func dueKey(k, at []byte) []byte {
	ep, event, _ := bytes.Cut(k, []byte{0})
	out := make([]byte, 0, len(k)+len(at))
	out = append(append(append(out, ep...), 0), at...)
	return append(out, event...)
}

func nanos(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
}

// bodyMoveBatch is how many delivery records moveDeliveryBodies reads
// before it writes them back: a bucket must not change under ForEach.
const bodyMoveBatch = 1000

// moveDeliveryBodies moves the signed body out of every delivery record
// of a database written before bucketWebhookBodies: each event's body is
// stored once, with a reference per delivery, and the records are
// written back without it. The body's bytes are kept as they were
// stored, so that its signature does not change.
func moveDeliveryBodies(tx *bolt.Tx) error {
	deliveries := tx.Bucket(bucketWebhookDeliveries)
	var after []byte
	for {
		batch, err := deliveriesAfter(deliveries, after, bodyMoveBatch)
		if err != nil || len(batch) == 0 {
			return err
		}
		for _, d := range batch {
			if err := moveBody(tx, d.key, &d.rec); err != nil {
				return err
			}
		}
		after = batch[len(batch)-1].key
	}
}

type storedDelivery struct {
	key []byte
	rec ordering.DeliveryRecord
}

// deliveriesAfter decodes up to limit delivery records with keys above
// after (nil for the first).
func deliveriesAfter(b *bolt.Bucket, after []byte, limit int) ([]storedDelivery, error) {
	var out []storedDelivery
	c := b.Cursor()
	k, v := c.First()
	if after != nil {
		if k, v = c.Seek(after); bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	for ; k != nil && len(out) < limit; k, v = c.Next() {
		d := storedDelivery{key: bytes.Clone(k)}
		if err := json.Unmarshal(v, &d.rec); err != nil {
			return nil, fmt.Errorf("decode delivery %q: %w", k, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// moveBody stores the record's body as its event's (or counts one more
// reference to the one stored) and writes the record back without it.
func moveBody(btx *bolt.Tx, k []byte, d *ordering.DeliveryRecord) error {
	if len(d.Body) == 0 {
		return fmt.Errorf("delivery %q carries no body", k)
	}
	t := newTx(btx, nil)
	id := []byte(d.EventID)
	refs := bodyRefs(t.txState, id)
	if refs == 0 {
		if err := btx.Bucket(bucketWebhookBodies).Put(id, d.Body); err != nil {
			return fmt.Errorf("store the body of event %s: %w", id, err)
		}
	}
	if err := t.setBodyRefs(id, refs+1); err != nil {
		return err
	}
	d.Body = nil
	return putJSON(btx.Bucket(bucketWebhookDeliveries), k, d)
}
