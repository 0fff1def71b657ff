package postgres

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"companydocs/ordering"
)

const endpointColumns = "id, account, url, description, secret, all_accounts, created_at"

func scanEndpoint(row pgx.CollectableRow) (ordering.EndpointRecord, error) {
	var e ordering.EndpointRecord
	err := row.Scan(&e.ID, &e.Account, &e.URL, &e.Description, &e.Secret, &e.AllAccounts, &e.CreatedAt)
	e.CreatedAt = utc(e.CreatedAt)
	return e, err
}

func (t webhookTx) endpoints(sql string, args ...any) ([]ordering.EndpointRecord, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, wrap(err, "read webhook endpoints")
	}
	list, err := pgx.CollectRows(rows, scanEndpoint)
	return list, wrap(err, "read webhook endpoints")
}

// WebhookEndpoint returns the endpoint, or nil.
func (t webhookTx) WebhookEndpoint(id string) (*ordering.EndpointRecord, error) {
	list, err := t.endpoints("SELECT "+endpointColumns+" FROM webhook_endpoints WHERE id = $1", id)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// WebhookEndpoints returns the account's endpoints (every one for ""); in
// Update it locks the account first, since the rules count them to
// enforce the cap.
func (t webhookTx) WebhookEndpoints(account string) ([]ordering.EndpointRecord, error) {
	if account == "" {
		return t.endpoints("SELECT " + endpointColumns + " FROM webhook_endpoints ORDER BY id")
	}
	if err := t.lockAccount(account); err != nil {
		return nil, wrap(err, "lock the account")
	}
	return t.endpoints("SELECT "+endpointColumns+" FROM webhook_endpoints WHERE account = $1 ORDER BY id", account)
}

// InsertWebhookEndpoint stores a new endpoint.
func (t webhookTx) InsertWebhookEndpoint(rec *ordering.EndpointRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	n, err := t.exec("INSERT INTO webhook_endpoints ("+endpointColumns+") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING",
		rec.ID, rec.Account, rec.URL, rec.Description, rec.Secret, rec.AllAccounts, rec.CreatedAt)
	return inserted(n, err, fmt.Sprintf("store webhook endpoint %s", rec.ID))
}

// DeleteWebhookEndpoint removes the endpoint and its deliveries,
// releasing their bodies.
func (t webhookTx) DeleteWebhookEndpoint(id string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	events, err := t.deleteDeliveries("DELETE FROM webhook_deliveries WHERE endpoint_id = $1 RETURNING event_id", id)
	if err != nil {
		return wrap(err, "delete the deliveries of webhook endpoint "+id)
	}
	if err := t.releaseBodies(events); err != nil {
		return err
	}
	_, err = t.exec("DELETE FROM webhook_endpoints WHERE id = $1", id)
	return wrap(err, "delete webhook endpoint "+id)
}

// deleteDeliveries runs a DELETE ... RETURNING event_id and returns the
// event ids of the deliveries it deleted.
func (t webhookTx) deleteDeliveries(sql string, args ...any) ([]string, error) {
	rows, err := t.tx.Query(t.ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// PutEventBody stores the body with its count of references.
func (t webhookTx) PutEventBody(eventID string, body []byte, refs int) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	if refs <= 0 {
		return fmt.Errorf("store the body of event %s with %d references", eventID, refs)
	}
	n, err := t.exec("INSERT INTO webhook_bodies (event_id, refs, body) VALUES ($1, $2, $3) ON CONFLICT (event_id) DO NOTHING", eventID, refs, body)
	return inserted(n, err, "store the webhook body of event "+eventID)
}

// EventBody returns the event's body, or nil.
func (t webhookTx) EventBody(eventID string) ([]byte, error) {
	var body []byte
	_, err := t.one("SELECT body FROM webhook_bodies WHERE event_id = $1", []any{eventID}, &body)
	return body, wrap(err, "read the webhook body of event "+eventID)
}

// releaseBodies drops the references of deleted deliveries (one event id
// each) and deletes the bodies left with none. The decrement locks each
// body's row, so that two nodes releasing the last two references of one
// body one after the other leave it with none, and the second deletes it.
func (t webhookTx) releaseBodies(events []string) error {
	if len(events) == 0 {
		return nil
	}
	_, err := t.exec(`UPDATE webhook_bodies b SET refs = b.refs - r.n
		FROM (SELECT event_id, count(*) AS n FROM unnest($1::text[]) AS event_id GROUP BY event_id) r
		WHERE b.event_id = r.event_id`, events)
	if err != nil {
		return wrap(err, "release webhook bodies")
	}
	_, err = t.exec("DELETE FROM webhook_bodies WHERE event_id = ANY($1) AND refs <= 0", events)
	return wrap(err, "delete released webhook bodies")
}

// Delivery returns the delivery of the event to the endpoint, or nil.
func (t webhookTx) Delivery(endpointID, eventID string) (*ordering.DeliveryRecord, error) {
	list, err := jsonRows[ordering.DeliveryRecord](t.txState, "SELECT record FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2"+t.forUpdate(), endpointID, eventID)
	if err != nil || len(list) == 0 {
		return nil, wrap(err, "read a webhook delivery")
	}
	return &list[0], nil
}

// PutDelivery stores a delivery, new or changed; its schedule stays.
func (t webhookTx) PutDelivery(endpointID string, d *ordering.DeliveryRecord) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encode the delivery of %s: %w", d.EventID, err)
	}
	_, err = t.exec(`INSERT INTO webhook_deliveries (endpoint_id, event_id, order_id, state, created_at, record)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (endpoint_id, event_id) DO UPDATE SET state = excluded.state, record = excluded.record`,
		endpointID, d.EventID, nullIfEmpty(d.OrderID), d.State, d.CreatedAt, raw)
	return wrap(err, "store the delivery of "+d.EventID)
}

// RecentDeliveries returns the endpoint's deliveries, newest event first.
func (t webhookTx) RecentDeliveries(endpointID string, limit int) ([]ordering.DeliveryRecord, error) {
	list, err := jsonRows[ordering.DeliveryRecord](t.txState, "SELECT record FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY event_id DESC LIMIT $2", endpointID, limit)
	return list, wrap(err, "list webhook deliveries")
}

// PruneDeliveries deletes the endpoint's oldest finished deliveries
// created before before, stopping at the first pending or newer one.
func (t webhookTx) PruneDeliveries(endpointID string, before time.Time, limit int) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	events, err := t.deleteDeliveries(`WITH oldest AS (
			SELECT event_id, state <> 'pending' AND created_at < $2 AS old FROM webhook_deliveries
			WHERE endpoint_id = $1 ORDER BY event_id LIMIT $3),
		stop AS (SELECT min(event_id) AS at FROM oldest WHERE NOT old)
		DELETE FROM webhook_deliveries WHERE endpoint_id = $1
			AND event_id IN (SELECT event_id FROM oldest, stop WHERE old AND (stop.at IS NULL OR event_id < stop.at))
		RETURNING event_id`,
		endpointID, before, limit)
	if err != nil {
		return wrap(err, "prune webhook deliveries")
	}
	return t.releaseBodies(events)
}

// ScheduleDelivery sets when the delivery is tried next and ends a claim.
func (t webhookTx) ScheduleDelivery(endpointID, eventID string, at time.Time) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	n, err := t.exec("UPDATE webhook_deliveries SET scheduled_at = $3, claimed_by = NULL, claimed_until = NULL WHERE endpoint_id = $1 AND event_id = $2", endpointID, eventID, at)
	if err != nil {
		return wrap(err, "schedule the delivery of "+eventID)
	} else if n == 0 {
		return fmt.Errorf("schedule the delivery of %s: %w", eventID, ordering.ErrNotFound)
	}
	return nil
}

// UnscheduleDelivery takes the delivery off the schedule and ends a claim.
func (t webhookTx) UnscheduleDelivery(endpointID, eventID string) error {
	if err := t.needWrite(); err != nil {
		return err
	}
	_, err := t.exec("UPDATE webhook_deliveries SET scheduled_at = NULL, claimed_by = NULL, claimed_until = NULL WHERE endpoint_id = $1 AND event_id = $2", endpointID, eventID)
	return wrap(err, "unschedule the delivery of "+eventID)
}

// CountScheduledDeliveries counts the deliveries in the schedule.
func (t webhookTx) CountScheduledDeliveries() (int, error) {
	var n int
	_, err := t.one("SELECT count(*) FROM webhook_deliveries WHERE scheduled_at IS NOT NULL", nil, &n)
	return n, wrap(err, "count scheduled deliveries")
}

// ClaimDueDeliveries picks each endpoint's earliest scheduled delivery if
// it is due, the endpoint is not busy in this process and no other node
// holds a live claim on it; in Update it claims the picked ones for
// lease. The claim marks the row with this node and a time
// (claimed_by, claimed_until) instead of moving its schedule: this
// process's busy already keeps one attempt per endpoint here and finds
// the delivery again until its attempt is recorded, while other nodes
// leave the endpoint alone until the attempt is recorded
// (ScheduleDelivery, UnscheduleDelivery end the claim) or the lease runs
// out, when the delivery of a node that died is tried again. The rows are
// locked with FOR UPDATE SKIP LOCKED, so of two nodes picking at once one
// gets the delivery and the other skips it. An endpoint held by another
// node counts toward next with the end of its claim.
func (t webhookTx) ClaimDueDeliveries(now time.Time, lease time.Duration, busy func(string) bool, limit int) ([]ordering.DueDelivery, time.Time, error) {
	firsts, err := t.firstScheduled(now)
	if err != nil {
		return nil, time.Time{}, err
	}
	var due []ordering.DueDelivery
	var next time.Time
	later := func(at time.Time) {
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	for _, f := range firsts {
		switch {
		case busy(f.EndpointID):
		case f.heldUntil.After(now):
			later(maxTime(f.heldUntil, f.At))
		case f.At.After(now):
			later(f.At)
		default:
			due = append(due, f.DueDelivery)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].At.Before(due[j].At) })
	if len(due) > limit {
		due, next = due[:limit], now
	}
	if !t.write || lease <= 0 || len(due) == 0 {
		return due, next, nil
	}
	due, err = t.claim(due, now, lease)
	return due, next, err
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// scheduled is an endpoint's earliest scheduled delivery and, when
// another node holds a live claim on the endpoint, when that claim ends.
type scheduled struct {
	ordering.DueDelivery
	heldUntil time.Time
}

// firstScheduled returns each endpoint's earliest scheduled delivery.
func (t webhookTx) firstScheduled(now time.Time) ([]scheduled, error) {
	rows, err := t.tx.Query(t.ctx, `WITH firsts AS (
			SELECT DISTINCT ON (endpoint_id) endpoint_id, event_id, scheduled_at FROM webhook_deliveries
			WHERE scheduled_at IS NOT NULL ORDER BY endpoint_id, scheduled_at, event_id)
		SELECT f.endpoint_id, f.event_id, f.scheduled_at, (SELECT max(c.claimed_until) FROM webhook_deliveries c
			WHERE c.endpoint_id = f.endpoint_id AND c.claimed_until > $1 AND c.claimed_by <> $2)
		FROM firsts f`, now, t.node)
	if err != nil {
		return nil, wrap(err, "read the delivery schedule")
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (scheduled, error) {
		var s scheduled
		var held *time.Time
		err := row.Scan(&s.EndpointID, &s.EventID, &s.At, &held)
		s.At = utc(s.At)
		if held != nil {
			s.heldUntil = utc(*held)
		}
		return s, err
	})
	return list, wrap(err, "read the delivery schedule")
}

// claim marks the picked deliveries that are still due, and that no other
// node holds or is claiming right now, as claimed by this node until
// now+lease, and returns those.
func (t webhookTx) claim(due []ordering.DueDelivery, now time.Time, lease time.Duration) ([]ordering.DueDelivery, error) {
	endpoints, events := make([]string, len(due)), make([]string, len(due))
	for i, d := range due {
		endpoints[i], events[i] = d.EndpointID, d.EventID
	}
	rows, err := t.tx.Query(t.ctx, `UPDATE webhook_deliveries SET claimed_by = $3, claimed_until = $4
		WHERE (endpoint_id, event_id) IN (
			SELECT endpoint_id, event_id FROM webhook_deliveries
			WHERE (endpoint_id, event_id) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND scheduled_at <= $5
				AND (claimed_until IS NULL OR claimed_until <= $5 OR claimed_by = $3)
			FOR UPDATE SKIP LOCKED)
		RETURNING endpoint_id, event_id`, endpoints, events, t.node, now.Add(lease), now)
	if err != nil {
		return nil, wrap(err, "claim due deliveries")
	}
	type key struct{ EndpointID, EventID string }
	claimed, err := pgx.CollectRows(rows, pgx.RowToStructByPos[key])
	if err != nil {
		return nil, wrap(err, "claim due deliveries")
	}
	got := map[key]bool{}
	for _, k := range claimed {
		got[k] = true
	}
	kept := due[:0]
	for _, d := range due {
		if got[key{d.EndpointID, d.EventID}] {
			kept = append(kept, d)
		}
	}
	return kept, nil
}
