package bbolt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"companydocs/ordering"
)

// ClaimPaymentEvent records the provider's event id unless it is there.
func (t paymentTx) ClaimPaymentEvent(provider, eventID string, at time.Time) (bool, error) {
	k := key(provider, eventID)
	if b := t.read(bucketPaymentEvents); b != nil && b.Get(k) != nil {
		return false, nil
	}
	if err := t.write(bucketPaymentEvents).Put(k, nanos(at)); err != nil {
		return false, fmt.Errorf("store payment event: %w", err)
	}
	return true, nil
}

// PrunePaymentEvents deletes up to limit ids applied before before. The
// bucket is keyed by id, so it is read whole: it holds the ids of the
// days kept (paymentEventsKept in package ordering), and the pruning
// runs hourly.
func (t paymentTx) PrunePaymentEvents(before time.Time, limit int) (int, error) {
	b := t.read(bucketPaymentEvents)
	if b == nil {
		return 0, nil
	}
	var old [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(old) < limit; k, v = c.Next() {
		if len(v) == 8 && int64(binary.BigEndian.Uint64(v)) < before.UnixNano() {
			old = append(old, append([]byte(nil), k...))
		}
	}
	w := t.write(bucketPaymentEvents)
	for _, k := range old {
		if err := w.Delete(k); err != nil {
			return 0, fmt.Errorf("prune payment events: %w", err)
		}
	}
	return len(old), nil
}

// PaymentEvents pages through the applied ids in key order (provider,
// then id).
func (t paymentTx) PaymentEvents(after ordering.AppliedPaymentEvent, limit int) ([]ordering.AppliedPaymentEvent, error) {
	b := t.read(bucketPaymentEvents)
	if b == nil {
		return nil, nil
	}
	from := ""
	if after != (ordering.AppliedPaymentEvent{}) {
		from = string(key(after.Provider, after.EventID))
	}
	c := b.Cursor()
	k, v := firstAfter(c, from)
	var out []ordering.AppliedPaymentEvent
	for ; k != nil && len(out) < limit; k, v = c.Next() {
		provider, id, ok := bytes.Cut(k, []byte{0})
		if !ok || len(v) != 8 {
			return nil, fmt.Errorf("%w: payment event %q", ordering.ErrDamaged, k)
		}
		out = append(out, ordering.AppliedPaymentEvent{Provider: string(provider), EventID: string(id),
			AppliedAt: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()})
	}
	return out, nil
}

// ScheduleRefund sets the order's refund due at at.
func (t paymentTx) ScheduleRefund(orderID string, at time.Time) error {
	if err := t.write(bucketRefundsDue).Put([]byte(orderID), nanos(at)); err != nil {
		return fmt.Errorf("schedule refund: %w", err)
	}
	return nil
}

// UnscheduleRefund removes the order's refund from the schedule.
func (t paymentTx) UnscheduleRefund(orderID string) error {
	if b := t.read(bucketRefundsDue); b == nil || b.Get([]byte(orderID)) == nil {
		return nil
	}
	if err := t.write(bucketRefundsDue).Delete([]byte(orderID)); err != nil {
		return fmt.Errorf("unschedule refund: %w", err)
	}
	return nil
}

// ClaimDueRefunds reads the schedule and returns the due refunds earliest
// first. It writes nothing and ignores lease: one process holds the file
// and one loop of it asks for refunds, so a refund claimed by a process
// that was killed is due again at once in the next one.
func (t paymentTx) ClaimDueRefunds(now time.Time, _ time.Duration, limit int) ([]string, time.Time, error) {
	type entry struct {
		id string
		at time.Time
	}
	var due []entry
	var next time.Time
	b := t.read(bucketRefundsDue)
	if b == nil {
		return nil, next, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		at := time.Unix(0, int64(binary.BigEndian.Uint64(v)))
		if at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			return nil
		}
		due = append(due, entry{string(k), at})
		return nil
	})
	if err != nil {
		return nil, next, err
	}
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	if len(due) > limit {
		due, next = due[:limit], now
	}
	ids := make([]string, len(due))
	for i, e := range due {
		ids[i] = e.id
	}
	return ids, next, nil
}

// CountScheduledRefunds counts the schedule.
func (t paymentTx) CountScheduledRefunds() (int, error) {
	b := t.read(bucketRefundsDue)
	if b == nil {
		return 0, nil
	}
	return b.Stats().KeyN, nil
}

var _ ordering.PaymentTx = (*tx)(nil)
