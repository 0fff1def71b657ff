package ordering

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"companydocs"
)

// DeliveryRecord is one event at one endpoint. Its signed request body,
// the same on every retry and at every endpoint, is stored once per event
// (WebhookTx.PutEventBody).
type DeliveryRecord struct {
	companydocs.WebhookDelivery
	// Body is set only in a record stored before bodies were kept once
	// per event, as a bbolt file opened read-only still holds them
	// (opened for writing, the store moves them; PostgreSQL's migration
	// 00004 does). New records leave it out.
	Body json.RawMessage `json:"body,omitempty"`
}

// webhookBody is the Standard Webhooks payload shape: type, timestamp and
// data, here the order as GET shows it.
type webhookBody struct {
	Type      string          `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// FanOutEvents takes up to limit events from the outbox and, in one write
// transaction, makes one delivery per matching endpoint and removes the
// events: an event is never lost or fanned out twice, whenever the
// process dies. Claims run one at a time across processes and take the
// oldest events, so an order's deliveries are made in the order of its
// events (an event commits only after the order's previous one). It
// returns how many events it took.
func (s *Webhooks) FanOutEvents(limit int) (int, error) {
	if empty, err := s.outboxEmpty(); err != nil || empty {
		return 0, err // no empty commit (and fsync) per wake-up
	}
	n := 0
	err := s.store.Update(context.Background(), func(tx Tx) error {
		n = 0
		endpoints, err := tx.WebhookEndpoints("")
		if err != nil {
			return err
		}
		events, err := tx.ClaimEvents(limit)
		if err != nil {
			return err
		}
		for i := range events {
			if err := fanOut(tx, endpoints, &events[i]); err != nil {
				return err
			}
			if err := tx.DeleteEvent(events[i].ID); err != nil {
				return err
			}
		}
		n = len(events)
		return nil
	})
	return n, err
}

// outboxEmpty reports whether the outbox holds no event: a read of its
// first event, where counting would walk them all on every wake-up.
func (s *Webhooks) outboxEmpty() (bool, error) {
	var first []Event
	err := s.store.View(context.Background(), func(tx Tx) (err error) {
		first, err = tx.Events("", 1)
		return err
	})
	return len(first) == 0, err
}

// fanOut writes the deliveries of one event, due at once, and the body
// they share.
func fanOut(tx Tx, endpoints []EndpointRecord, e *Event) error {
	var receivers []string
	for _, ep := range endpoints {
		if ep.AllAccounts || ep.Account == e.Account {
			receivers = append(receivers, ep.ID)
		}
	}
	if len(receivers) == 0 {
		return nil
	}
	body, err := json.Marshal(webhookBody{Type: e.Type, Timestamp: e.At, Data: e.Payload})
	if err != nil {
		return fmt.Errorf("encode webhook body of %s: %w", e.ID, err)
	}
	if err := tx.PutEventBody(e.ID, body, len(receivers)); err != nil {
		return fmt.Errorf("store webhook body of %s: %w", e.ID, err)
	}
	for _, id := range receivers {
		next := e.At
		d := DeliveryRecord{WebhookDelivery: companydocs.WebhookDelivery{EventID: e.ID, EventType: e.Type,
			OrderID: e.OrderID, State: companydocs.DeliveryPending, CreatedAt: e.At, NextAttempt: &next, Attempts: []companydocs.WebhookAttempt{}}}
		if err := tx.PutDelivery(id, &d); err != nil {
			return err
		}
		if err := tx.ScheduleDelivery(id, e.ID, next); err != nil {
			return err
		}
	}
	return nil
}

// DueWebhooks returns, for each endpoint that busy does not name, its
// earliest delivery that is due at now, at most limit in all, oldest due
// first; and the earliest time a pending delivery not returned falls due
// (zero when none), for the dispatcher's timer.
func (s *Webhooks) DueWebhooks(now time.Time, busy func(endpointID string) bool, limit int) ([]companydocs.WebhookTask, time.Time, error) {
	var next time.Time
	var tasks []companydocs.WebhookTask
	err := s.store.Update(context.Background(), func(tx Tx) error {
		due, n, err := tx.ClaimDueDeliveries(now, s.lease, busy, limit)
		if err != nil {
			return err
		}
		next, tasks = n, make([]companydocs.WebhookTask, 0, len(due))
		for _, d := range due {
			t, err := task(tx, d)
			if err != nil {
				return err
			}
			tasks = append(tasks, t)
		}
		return nil
	})
	return tasks, next, err
}

func task(tx Tx, due DueDelivery) (companydocs.WebhookTask, error) {
	ep, err := tx.WebhookEndpoint(due.EndpointID)
	if err != nil {
		return companydocs.WebhookTask{}, err
	}
	d, err := tx.Delivery(due.EndpointID, due.EventID)
	if err != nil {
		return companydocs.WebhookTask{}, err
	}
	if ep == nil || d == nil {
		return companydocs.WebhookTask{}, fmt.Errorf("scheduled delivery %s of event %s is missing", due.EndpointID, due.EventID)
	}
	body, err := DeliveryBody(tx, d)
	if err != nil {
		return companydocs.WebhookTask{}, err
	}
	return companydocs.WebhookTask{EndpointID: ep.ID, URL: ep.URL, Secret: ep.Secret, EventID: d.EventID,
		Body: body, Attempt: attemptsMade(d) + 1, CreatedAt: d.CreatedAt}, nil
}

// DeliveryBody returns the signed body of a delivery: its event's, or
// the one an old record carries itself.
func DeliveryBody(tx Tx, d *DeliveryRecord) ([]byte, error) {
	if len(d.Body) > 0 {
		return d.Body, nil
	}
	body, err := tx.EventBody(d.EventID)
	if err == nil && body == nil {
		err = fmt.Errorf("the body of event %s, which a delivery refers to, is missing", d.EventID)
	}
	return body, err
}

func attemptsMade(d *DeliveryRecord) int {
	if len(d.Attempts) == 0 {
		return 0
	}
	return d.Attempts[len(d.Attempts)-1].Attempt
}

// RecordWebhookAttempt stores the outcome of an attempt: delivered and
// failed end the delivery, pending sets its next attempt. A delivery
// whose endpoint was deleted meanwhile is ignored. Concurrent calls
// may share a commit (the store's Update).
func (s *Webhooks) RecordWebhookAttempt(r companydocs.WebhookResult) error {
	return s.store.Update(context.Background(), func(tx Tx) error {
		d, err := tx.Delivery(r.EndpointID, r.EventID)
		if err != nil || d == nil {
			return err
		}
		d.Attempts = append(d.Attempts, r.Attempt)
		if len(d.Attempts) > keptAttempts {
			d.Attempts = d.Attempts[len(d.Attempts)-keptAttempts:]
		}
		d.State, d.NextAttempt = r.State, nil
		if r.State == companydocs.DeliveryPending {
			next := r.NextAttempt.UTC()
			d.NextAttempt = &next
			err = tx.ScheduleDelivery(r.EndpointID, r.EventID, next)
		} else if err = tx.UnscheduleDelivery(r.EndpointID, r.EventID); err == nil {
			err = tx.PruneDeliveries(r.EndpointID, s.now().Add(-keepDeliveries), pruneStep)
		}
		if err != nil {
			return err
		}
		return tx.PutDelivery(r.EndpointID, d)
	})
}

// PendingWebhooks counts the deliveries not yet delivered or failed.
func (s *Webhooks) PendingWebhooks() (n int, err error) {
	err = s.store.View(context.Background(), func(tx Tx) error {
		n, err = tx.CountScheduledDeliveries()
		return err
	})
	return n, err
}
