package bbolt

import (
	"bytes"
	"encoding/json"
	"fmt"

	"companydocs/ordering"

	bolt "go.etcd.io/bbolt"
)

// tx is an ordering.Tx over a bbolt transaction: one part per kind of
// record (ordering's AccountTx, SessionTx, OrderTx, OutboxTx, WebhookTx,
// WatchTx, PaymentTx), each in the file named for it, all over the one
// bbolt transaction they share, so that a transaction stays one however
// many parts it touches.
type tx struct {
	*txState
	accountTx
	sessionTx
	orderTx
	outboxTx
	webhookTx
	watchTx
	paymentTx
}

// txState is what the parts of a tx share: the bbolt transaction, and
// whether a method changed anything, so that the group commit can leave
// out a write that failed before writing instead of running its group
// again.
type txState struct {
	tx    *bolt.Tx
	wrote bool
	group *groupCommit // nil in a read transaction
}

// The parts of a tx, one per kind of record.
type (
	accountTx struct{ *txState }
	sessionTx struct{ *txState }
	orderTx   struct{ *txState }
	outboxTx  struct{ *txState }
	webhookTx struct{ *txState }
	watchTx   struct{ *txState }
	paymentTx struct{ *txState }
)

// newTx makes a tx over btx; group is nil in a read transaction.
func newTx(btx *bolt.Tx, group *groupCommit) *tx {
	s := &txState{tx: btx, group: group}
	return &tx{txState: s, accountTx: accountTx{s}, sessionTx: sessionTx{s}, orderTx: orderTx{s},
		outboxTx: outboxTx{s}, webhookTx: webhookTx{s}, watchTx: watchTx{s}, paymentTx: paymentTx{s}}
}

var _ ordering.Tx = (*tx)(nil)

// read returns a bucket to read from.
func (t *txState) read(name []byte) *bolt.Bucket { return t.tx.Bucket(name) }

// write returns a bucket to change.
func (t *txState) write(name []byte) *bolt.Bucket {
	t.wrote = true
	return t.tx.Bucket(name)
}

// getJSON decodes the value of k into v; found is false when there is none.
func getJSON(b *bolt.Bucket, k []byte, v any) (found bool, err error) {
	raw := b.Get(k)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %q: %w", k, err)
	}
	return true, nil
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", k, err)
	}
	if err := b.Put(k, raw); err != nil {
		return fmt.Errorf("store %q: %w", k, err)
	}
	return nil
}

func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("delete %q: %w", k, err)
		}
	}
	return nil
}

// lastUnder positions c on the last key with prefix below limit (all keys
// with prefix when limit is nil) and returns it.
func lastUnder(c *bolt.Cursor, prefix, limit []byte) (k, v []byte) {
	if limit == nil {
		limit = append(bytes.Clone(prefix[:len(prefix)-1]), prefix[len(prefix)-1]+1)
	}
	if seek, _ := c.Seek(limit); seek == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k != nil && !bytes.HasPrefix(k, prefix) {
		return nil, nil
	}
	return k, v
}
