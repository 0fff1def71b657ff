package postgres

import (
	"time"

	"companydocs/ordering"
)

var _ ordering.PaymentTx = (*txn)(nil)

// ClaimPaymentEvent inserts the event's row unless it is there: of two
// transactions inserting one id, the second waits for the first and then
// finds the conflict.
func (t paymentTx) ClaimPaymentEvent(provider, eventID string, at time.Time) (bool, error) {
	if err := t.needWrite(); err != nil {
		return false, err
	}
	n, err := t.exec("INSERT INTO payment_events (provider, event_id, applied_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", provider, eventID, at)
	if err != nil {
		return false, wrap(err, "claim payment event "+eventID)
	}
	return n == 1, nil
}

// PrunePaymentEvents deletes up to limit ids applied before before.
func (t paymentTx) PrunePaymentEvents(before time.Time, limit int) (int, error) {
	if err := t.needWrite(); err != nil {
		return 0, err
	}
	n, err := t.exec(`DELETE FROM payment_events WHERE (provider, event_id) IN (`+oldPaymentEvents+`)`, before, limit)
	return int(n), wrap(err, "prune payment events")
}

// oldPaymentEvents selects up to $2 ids applied before $1, by the index on
// the applied time (migration 00008).
const oldPaymentEvents = `SELECT provider, event_id FROM payment_events WHERE applied_at < $1 LIMIT $2`

// PaymentEvents pages through the applied ids by provider, then id.
func (t paymentTx) PaymentEvents(after ordering.AppliedPaymentEvent, limit int) ([]ordering.AppliedPaymentEvent, error) {
	rows, err := t.tx.Query(t.ctx, `SELECT provider, event_id, applied_at FROM payment_events
		WHERE (provider, event_id) > ($1, $2) ORDER BY provider, event_id LIMIT $3`, after.Provider, after.EventID, limit)
	if err != nil {
		return nil, wrap(err, "read payment events")
	}
	defer rows.Close()
	var out []ordering.AppliedPaymentEvent
	for rows.Next() {
		var e ordering.AppliedPaymentEvent
		if err := rows.Scan(&e.Provider, &e.EventID, &e.AppliedAt); err != nil {
			return nil, wrap(err, "read payment events")
		}
		e.AppliedAt = e.AppliedAt.UTC()
		out = append(out, e)
	}
	return out, wrap(rows.Err(), "read payment events")
}

// ScheduleRefund inserts or moves the order's refund.
func (t paymentTx) ScheduleRefund(orderID string, at time.Time) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("INSERT INTO refunds_due (order_id, due_at) VALUES ($1, $2) ON CONFLICT (order_id) DO UPDATE SET due_at = EXCLUDED.due_at", orderID, at)
	return wrap(err, "schedule the refund of "+orderID)
}

// UnscheduleRefund deletes the order's refund from the schedule.
func (t paymentTx) UnscheduleRefund(orderID string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("DELETE FROM refunds_due WHERE order_id = $1", orderID)
	return wrap(err, "unschedule the refund of "+orderID)
}

// ClaimDueRefunds moves the earliest due refunds, skipping rows another
// node holds locked, to now+lease and returns them.
func (t paymentTx) ClaimDueRefunds(now time.Time, lease time.Duration, limit int) ([]string, time.Time, error) {
	if err := t.needWrite(); err != nil {
		return nil, time.Time{}, err
	}
	rows, err := t.tx.Query(t.ctx, `UPDATE refunds_due SET due_at = $2 WHERE order_id IN (
		SELECT order_id FROM refunds_due WHERE due_at <= $1 ORDER BY due_at, order_id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING order_id`, now, now.Add(lease), limit)
	if err != nil {
		return nil, time.Time{}, wrap(err, "claim due refunds")
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, time.Time{}, wrap(err, "claim due refunds")
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, wrap(err, "claim due refunds")
	}
	var next *time.Time
	if _, err := t.one("SELECT min(due_at) FROM refunds_due WHERE due_at > $1", []any{now}, &next); err != nil {
		return nil, time.Time{}, wrap(err, "next due refund")
	}
	var at time.Time
	if next != nil {
		at = *next
	}
	if len(ids) == limit {
		at = now
	}
	return ids, at, nil
}

// CountScheduledRefunds counts the schedule.
func (t paymentTx) CountScheduledRefunds() (int, error) {
	var n int
	_, err := t.one("SELECT count(*) FROM refunds_due", nil, &n)
	return n, wrap(err, "count scheduled refunds")
}
