package ordering

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"companydocs"
)

// Webhooks keeps the accounts' webhook endpoints and delivers the outbox
// to them: FanOutEvents turns each event into one delivery per endpoint
// that receives it, DueWebhooks and RecordWebhookAttempt serve the
// dispatcher.
type Webhooks struct {
	*core
	checkURL func(ctx context.Context, rawURL string) error
	lease    time.Duration // of a claimed webhook delivery
}

// Limits of webhook endpoints.
const (
	// MaxWebhooksPerAccount is companydocs.MaxWebhooksPerAccount.
	MaxWebhooksPerAccount = companydocs.MaxWebhooksPerAccount
	// webhookSecretBytes is the key size: 32 random bytes (Standard
	// Webhooks asks for 24 to 64).
	webhookSecretBytes = 32
	// keptAttempts bounds the attempts a delivery record remembers.
	keptAttempts = 20
	// recentDeliveries is how many deliveries the deliveries route shows.
	recentDeliveries = 100
	// keepDeliveries is how long finished deliveries stay stored. Each
	// delivery that finishes removes up to pruneStep of its endpoint's
	// oldest finished ones past it, so the stored deliveries stay bounded without a
	// sweep.
	keepDeliveries = 30 * 24 * time.Hour
	pruneStep      = 2
)

const webhookIDPrefix = "wh_"

// EndpointRecord is a stored endpoint: the secret is kept in clear, since
// every delivery is signed with it.
type EndpointRecord struct {
	companydocs.WebhookEndpoint
	Account string `json:"account"`
	// AllAccounts is set for an operator's endpoint, which receives the
	// events of every account (roles never change).
	AllAccounts bool `json:"all_accounts,omitempty"`
}

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

// CreateWebhook registers an endpoint for the account and returns it with
// its secret, which no other answer shows again.
func (s *Webhooks) CreateWebhook(ctx context.Context, account, rawURL, description string) (*companydocs.WebhookEndpoint, error) {
	role, err := s.roleOf(account)
	if err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(ctx, rawURL); err != nil {
		return nil, err
	}
	if err := companydocs.CheckLength("description", description, companydocs.MaxWebhookDescription); err != nil {
		return nil, err
	}
	var key [webhookSecretBytes]byte
	rand.Read(key[:])
	rec := EndpointRecord{Account: account, AllAccounts: role == companydocs.RoleOperator,
		WebhookEndpoint: companydocs.WebhookEndpoint{ID: s.ids.nextWithPrefix(webhookIDPrefix), URL: rawURL, Description: description,
			CreatedAt: s.now().UTC(), Secret: "whsec_" + base64.StdEncoding.EncodeToString(key[:])}}
	err = s.store.Update(ctx, func(tx Tx) error {
		// Reading the account locks it, so that concurrent registrations
		// of one account count one after the other.
		if _, err := getAccount(tx, account); err != nil {
			return err
		}
		eps, err := tx.WebhookEndpoints(account)
		if err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if len(eps) >= MaxWebhooksPerAccount {
			return companydocs.Refusal(companydocs.EVALIDATION, "refusal.too_many_webhooks", companydocs.Args{"max": MaxWebhooksPerAccount})
		}
		return tx.InsertWebhookEndpoint(&rec)
	})
	if err != nil {
		return nil, err
	}
	return &rec.WebhookEndpoint, nil
}

// checkWebhookURL checks the shape here and the network rules (scheme,
// addresses) through Options.CheckWebhookURL.
func (s *Webhooks) checkWebhookURL(ctx context.Context, rawURL string) error {
	if err := companydocs.CheckLength("url", rawURL, companydocs.MaxWebhookURL); err != nil {
		return err
	}
	u, err := url.Parse(rawURL)
	switch {
	case rawURL == "":
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_url_required", nil)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_url_not_absolute", companydocs.Args{"url": rawURL})
	case u.User != nil:
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.webhook_url_credentials", nil)
	}
	if s.checkURL != nil {
		return s.checkURL(ctx, rawURL)
	}
	return nil
}

// Webhooks lists the account's endpoints, without their secrets.
func (s *Webhooks) Webhooks(ctx context.Context, account string) ([]companydocs.WebhookEndpoint, error) {
	var eps []EndpointRecord
	err := s.store.View(ctx, func(tx Tx) (err error) {
		eps, err = tx.WebhookEndpoints(account)
		return err
	})
	out := make([]companydocs.WebhookEndpoint, 0, len(eps))
	for _, ep := range eps {
		ep.Secret = ""
		out = append(out, ep.WebhookEndpoint)
	}
	return out, err
}

// DeleteWebhook removes the account's endpoint with its deliveries;
// another account's endpoint is not_found.
func (s *Webhooks) DeleteWebhook(ctx context.Context, account, id string) error {
	return s.store.Update(ctx, func(tx Tx) error {
		if _, err := ownEndpoint(tx, account, id); err != nil {
			return err
		}
		return tx.DeleteWebhookEndpoint(id)
	})
}

// WebhookDeliveries returns the endpoint's most recent deliveries, newest
// event first, each with its latest attempts.
func (s *Webhooks) WebhookDeliveries(ctx context.Context, account, id string) ([]companydocs.WebhookDelivery, error) {
	var ds []DeliveryRecord
	err := s.store.View(ctx, func(tx Tx) error {
		if _, err := ownEndpoint(tx, account, id); err != nil {
			return err
		}
		var err error
		ds, err = tx.RecentDeliveries(id, recentDeliveries)
		return err
	})
	out := make([]companydocs.WebhookDelivery, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.WebhookDelivery)
	}
	return out, err
}

func ownEndpoint(tx Tx, account, id string) (*EndpointRecord, error) {
	ep, err := tx.WebhookEndpoint(id)
	if err != nil {
		return nil, err
	}
	if ep == nil || ep.Account != account {
		return nil, errNoWebhook(id)
	}
	return ep, nil
}

func errNoWebhook(id string) error {
	return companydocs.Refusal(companydocs.ENOTFOUND, "refusal.no_such_webhook", companydocs.Args{"webhook": id})
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
