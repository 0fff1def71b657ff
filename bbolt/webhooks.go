package bbolt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"companydocs"
	"companydocs/ordering"
)

// WebhookEndpoint returns the endpoint, or nil.
func (t webhookTx) WebhookEndpoint(id string) (*ordering.EndpointRecord, error) {
	var ep ordering.EndpointRecord
	found, err := getJSON(t.read(bucketWebhooks), []byte(id), &ep)
	if !found || err != nil {
		return nil, err
	}
	return &ep, nil
}

// WebhookEndpoints returns the account's endpoints, or all for "".
func (t webhookTx) WebhookEndpoints(account string) ([]ordering.EndpointRecord, error) {
	var out []ordering.EndpointRecord
	err := t.read(bucketWebhooks).ForEach(func(k, v []byte) error {
		var ep ordering.EndpointRecord
		if err := json.Unmarshal(v, &ep); err != nil {
			return fmt.Errorf("decode webhook endpoint %s: %w", k, err)
		}
		if account == "" || ep.Account == account {
			out = append(out, ep)
		}
		return nil
	})
	return out, err
}

// InsertWebhookEndpoint stores a new endpoint.
func (t webhookTx) InsertWebhookEndpoint(rec *ordering.EndpointRecord) error {
	if t.read(bucketWebhooks).Get([]byte(rec.ID)) != nil {
		return ordering.ErrExists
	}
	return putJSON(t.write(bucketWebhooks), []byte(rec.ID), rec)
}

// DeleteWebhookEndpoint removes the endpoint, its deliveries (releasing
// their bodies) and their schedule.
func (t webhookTx) DeleteWebhookEndpoint(id string) error {
	prefix := []byte(id + "\x00")
	c := t.read(bucketWebhookDeliveries).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if err := t.releaseBody(k[len(prefix):]); err != nil {
			return err
		}
	}
	for _, name := range [][]byte{bucketWebhookDeliveries, bucketWebhookPending, bucketWebhookDue} {
		if err := deletePrefix(t.write(name), []byte(id+"\x00")); err != nil {
			return err
		}
	}
	return t.write(bucketWebhooks).Delete([]byte(id))
}

// Delivery returns the delivery, or nil.
func (t webhookTx) Delivery(endpointID, eventID string) (*ordering.DeliveryRecord, error) {
	var d ordering.DeliveryRecord
	found, err := getJSON(t.read(bucketWebhookDeliveries), key(endpointID, eventID), &d)
	if !found || err != nil {
		return nil, err
	}
	return &d, nil
}

// PutDelivery stores the delivery under endpoint 0 event.
func (t webhookTx) PutDelivery(endpointID string, d *ordering.DeliveryRecord) error {
	return putJSON(t.write(bucketWebhookDeliveries), key(endpointID, d.EventID), d)
}

// RecentDeliveries walks the endpoint's deliveries backwards.
func (t webhookTx) RecentDeliveries(endpointID string, limit int) ([]ordering.DeliveryRecord, error) {
	prefix := key(endpointID, "")
	c := t.read(bucketWebhookDeliveries).Cursor()
	var out []ordering.DeliveryRecord
	for k, v := lastUnder(c, prefix, nil); k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Prev() {
		var d ordering.DeliveryRecord
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("decode delivery %q: %w", k, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// PruneDeliveries deletes the endpoint's first deliveries while they are
// finished and older than before.
func (t webhookTx) PruneDeliveries(endpointID string, before time.Time, limit int) error {
	prefix := key(endpointID, "")
	for range limit {
		k, v := t.read(bucketWebhookDeliveries).Cursor().Seek(prefix)
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		var d ordering.DeliveryRecord
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("decode delivery %q: %w", k, err)
		}
		if d.State == companydocs.DeliveryPending || !d.CreatedAt.Before(before) {
			return nil
		}
		if err := t.write(bucketWebhookDeliveries).Delete(k); err != nil {
			return fmt.Errorf("prune delivery %q: %w", k, err)
		}
		if err := t.releaseBody([]byte(d.EventID)); err != nil {
			return err
		}
	}
	return nil
}

// ScheduleDelivery sets when the delivery is next due, in the pending
// bucket and in the endpoint's due order.
func (t webhookTx) ScheduleDelivery(endpointID, eventID string, at time.Time) error {
	k := key(endpointID, eventID)
	if err := t.UnscheduleDelivery(endpointID, eventID); err != nil {
		return err
	}
	if err := t.write(bucketWebhookPending).Put(k, nanos(at)); err != nil {
		return fmt.Errorf("store pending delivery: %w", err)
	}
	if err := t.write(bucketWebhookDue).Put(dueKey(k, nanos(at)), nil); err != nil {
		return fmt.Errorf("store due delivery: %w", err)
	}
	return nil
}

// UnscheduleDelivery removes the delivery from both schedule buckets.
func (t webhookTx) UnscheduleDelivery(endpointID, eventID string) error {
	k := key(endpointID, eventID)
	at := t.read(bucketWebhookPending).Get(k)
	if at == nil {
		return nil
	}
	if err := t.write(bucketWebhookDue).Delete(dueKey(k, at)); err != nil {
		return fmt.Errorf("remove due delivery: %w", err)
	}
	if err := t.write(bucketWebhookPending).Delete(k); err != nil {
		return fmt.Errorf("remove pending delivery: %w", err)
	}
	return nil
}

// CountScheduledDeliveries counts the pending bucket.
func (t webhookTx) CountScheduledDeliveries() (int, error) {
	return t.read(bucketWebhookPending).Stats().KeyN, nil
}

// ClaimDueDeliveries reads each endpoint's earliest due delivery. It
// writes nothing and ignores lease: one process holds the file, and busy
// keeps one attempt per endpoint in it.
func (t webhookTx) ClaimDueDeliveries(now time.Time, _ time.Duration, busy func(string) bool, limit int) ([]ordering.DueDelivery, time.Time, error) {
	due, next := t.earliestDue(now, busy)
	sort.Slice(due, func(i, j int) bool { return due[i].At.Before(due[j].At) })
	if len(due) > limit {
		due, next = due[:limit], now // more are due
	}
	return due, next, nil
}

// earliestDue returns each endpoint's earliest pending delivery that is
// due, and the earliest time of those that are not. Each is the first key
// under the endpoint's prefix in the due order: one seek an endpoint,
// however long its backlog.
func (t webhookTx) earliestDue(now time.Time, busy func(string) bool) (due []ordering.DueDelivery, next time.Time) {
	c := t.read(bucketWebhookDue).Cursor()
	endpoints := t.read(bucketWebhooks).Cursor()
	for ep, _ := endpoints.First(); ep != nil; ep, _ = endpoints.Next() {
		if busy(string(ep)) {
			continue
		}
		prefix := append(bytes.Clone(ep), 0)
		k, _ := c.Seek(prefix)
		if k == nil || !bytes.HasPrefix(k, prefix) || len(k) < len(prefix)+8 {
			continue
		}
		at := time.Unix(0, int64(binary.BigEndian.Uint64(k[len(prefix):])))
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		due = append(due, ordering.DueDelivery{EndpointID: string(ep), EventID: string(k[len(prefix)+8:]), At: at})
	}
	return due, next
}

// PutEventBody stores the body and its count of references.
func (t webhookTx) PutEventBody(eventID string, body []byte, refs int) error {
	id := []byte(eventID)
	if refs <= 0 {
		return fmt.Errorf("store the body of event %s with %d references", eventID, refs)
	}
	if t.read(bucketWebhookBodies).Get(id) != nil {
		return ordering.ErrExists
	}
	bodies := t.write(bucketWebhookBodies)
	bodies.FillPercent = 1 // ids grow: fill pages before they split
	if err := bodies.Put(id, body); err != nil {
		return fmt.Errorf("store the body of event %s: %w", eventID, err)
	}
	return t.setBodyRefs(id, uint32(refs))
}

// EventBody returns a copy of the event's body, or nil.
func (t webhookTx) EventBody(eventID string) ([]byte, error) {
	return bytes.Clone(t.read(bucketWebhookBodies).Get([]byte(eventID))), nil
}

// releaseBody drops a deleted delivery's reference to its event's body,
// and the body with the last reference.
func (t webhookTx) releaseBody(eventID []byte) error {
	refs := bodyRefs(t.txState, eventID)
	switch {
	case refs == 0:
		return fmt.Errorf("a delivery of event %s refers to no stored body", eventID)
	case refs > 1:
		return t.setBodyRefs(eventID, refs-1)
	}
	if err := t.write(bucketWebhookBodyRefs).Delete(eventID); err != nil {
		return fmt.Errorf("release the body of event %s: %w", eventID, err)
	}
	if err := t.write(bucketWebhookBodies).Delete(eventID); err != nil {
		return fmt.Errorf("delete the body of event %s: %w", eventID, err)
	}
	return nil
}

// bodyRefs returns how many deliveries refer to the event's body (0 when
// none is stored).
func bodyRefs(t *txState, eventID []byte) uint32 {
	if v := t.read(bucketWebhookBodyRefs).Get(eventID); len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (t webhookTx) setBodyRefs(eventID []byte, refs uint32) error {
	refsBucket := t.write(bucketWebhookBodyRefs)
	refsBucket.FillPercent = 1
	if err := refsBucket.Put(eventID, binary.BigEndian.AppendUint32(nil, refs)); err != nil {
		return fmt.Errorf("count the references to the body of event %s: %w", eventID, err)
	}
	return nil
}
