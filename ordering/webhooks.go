package ordering

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"time"

	"companydocs"

	bolt "go.etcd.io/bbolt"
)

// Limits of webhook endpoints.
const (
	// MaxWebhooksPerAccount caps the endpoints of one account, so that no
	// account multiplies the deliveries of every event.
	MaxWebhooksPerAccount = 10
	maxWebhookURL         = 2000
	maxWebhookDescription = 200
	// webhookSecretBytes is the key size: 32 random bytes (Standard
	// Webhooks asks for 24 to 64).
	webhookSecretBytes = 32
	// keptAttempts bounds the attempts a delivery record remembers.
	keptAttempts = 20
	// recentDeliveries is how many deliveries the deliveries route shows.
	recentDeliveries = 100
	// keepDeliveries is how long finished deliveries stay stored. Each
	// delivery that finishes removes up to pruneStep of its endpoint's
	// oldest finished ones past it, so the bucket stays bounded without a
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

// DeliveryRecord is one event at one endpoint; Body is the signed
// request body, the same on every retry.
type DeliveryRecord struct {
	companydocs.WebhookDelivery
	Body json.RawMessage `json:"body"`
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
func (s *Service) CreateWebhook(ctx context.Context, account, rawURL, description string) (*companydocs.WebhookEndpoint, error) {
	role, err := s.roleOf(account)
	if err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(ctx, rawURL); err != nil {
		return nil, err
	}
	if len(description) > maxWebhookDescription {
		return nil, companydocs.Errorf(companydocs.EVALIDATION, "The description is longer than %d bytes.", maxWebhookDescription)
	}
	var key [webhookSecretBytes]byte
	rand.Read(key[:])
	rec := EndpointRecord{Account: account, AllAccounts: role == companydocs.RoleOperator,
		WebhookEndpoint: companydocs.WebhookEndpoint{ID: s.ids.nextWithPrefix(webhookIDPrefix), URL: rawURL, Description: description,
			CreatedAt: s.now().UTC(), Secret: "whsec_" + base64.StdEncoding.EncodeToString(key[:])}}
	err = s.db.Update(func(tx *bolt.Tx) error {
		n := 0
		err := tx.Bucket(bucketWebhooks).ForEach(func(_, v []byte) error {
			var ep EndpointRecord
			if err := json.Unmarshal(v, &ep); err != nil {
				return err
			}
			if ep.Account == account {
				n++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("count webhook endpoints: %w", err)
		}
		if n >= MaxWebhooksPerAccount {
			return companydocs.Errorf(companydocs.EVALIDATION, "An account may register at most %d webhook endpoints; delete one first.", MaxWebhooksPerAccount)
		}
		return putJSON(tx.Bucket(bucketWebhooks), rec.ID, rec)
	})
	if err != nil {
		return nil, err
	}
	return &rec.WebhookEndpoint, nil
}

// checkWebhookURL checks the shape here and the network rules (scheme,
// addresses) through Options.CheckWebhookURL.
func (s *Service) checkWebhookURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	switch {
	case rawURL == "":
		return companydocs.Errorf(companydocs.EVALIDATION, "The field \"url\" is required: the https URL that receives the events.")
	case len(rawURL) > maxWebhookURL:
		return companydocs.Errorf(companydocs.EVALIDATION, "The url is longer than %d bytes.", maxWebhookURL)
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return companydocs.Errorf(companydocs.EVALIDATION, "The url %q is not an absolute http(s) URL.", rawURL)
	case u.User != nil:
		return companydocs.Errorf(companydocs.EVALIDATION, "The url must not carry a user name or password.")
	}
	if s.checkURL != nil {
		return s.checkURL(ctx, rawURL)
	}
	return nil
}

// Webhooks lists the account's endpoints, without their secrets.
func (s *Service) Webhooks(ctx context.Context, account string) ([]companydocs.WebhookEndpoint, error) {
	out := []companydocs.WebhookEndpoint{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketWebhooks).ForEach(func(_, v []byte) error {
			var ep EndpointRecord
			if err := json.Unmarshal(v, &ep); err != nil {
				return err
			}
			if ep.Account == account {
				ep.Secret = ""
				out = append(out, ep.WebhookEndpoint)
			}
			return nil
		})
	})
	return out, err
}

// DeleteWebhook removes the account's endpoint with its deliveries;
// another account's endpoint is not_found.
func (s *Service) DeleteWebhook(ctx context.Context, account, id string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if _, err := ownEndpoint(tx, account, id); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketWebhookDeliveries, bucketWebhookPending, bucketWebhookDue} {
			if err := deletePrefix(tx.Bucket(name), []byte(id+"\x00")); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketWebhooks).Delete([]byte(id))
	})
}

// WebhookDeliveries returns the endpoint's most recent deliveries, newest
// event first, each with its latest attempts.
func (s *Service) WebhookDeliveries(ctx context.Context, account, id string) ([]companydocs.WebhookDelivery, error) {
	out := []companydocs.WebhookDelivery{}
	err := s.db.View(func(tx *bolt.Tx) error {
		if _, err := ownEndpoint(tx, account, id); err != nil {
			return err
		}
		prefix := []byte(id + "\x00")
		c := tx.Bucket(bucketWebhookDeliveries).Cursor()
		k, _ := c.Seek([]byte(id + "\x01"))
		var v []byte
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < recentDeliveries; k, v = c.Prev() {
			var d DeliveryRecord
			if err := json.Unmarshal(v, &d); err != nil {
				return fmt.Errorf("decode delivery %q: %w", k, err)
			}
			out = append(out, d.WebhookDelivery)
		}
		return nil
	})
	return out, err
}

func ownEndpoint(tx *bolt.Tx, account, id string) (*EndpointRecord, error) {
	v := tx.Bucket(bucketWebhooks).Get([]byte(id))
	if v == nil {
		return nil, errNoWebhook(id)
	}
	var ep EndpointRecord
	if err := json.Unmarshal(v, &ep); err != nil {
		return nil, fmt.Errorf("decode webhook endpoint %s: %w", id, err)
	}
	if ep.Account != account {
		return nil, errNoWebhook(id)
	}
	return &ep, nil
}

func errNoWebhook(id string) error {
	return companydocs.Errorf(companydocs.ENOTFOUND, "No webhook endpoint %q exists for this account.", id)
}

// FanOutEvents takes up to limit events from the outbox and, in one write
// transaction, makes one delivery per matching endpoint and removes the
// events: an event is never lost or fanned out twice, whenever the
// process dies. It returns how many events it took.
func (s *Service) FanOutEvents(limit int) (int, error) {
	if depth, _, err := s.OutboxStats(); err != nil || depth == 0 {
		return 0, err // no empty commit (and fsync) per wake-up
	}
	n := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		n = 0
		endpoints, err := allEndpoints(tx)
		if err != nil {
			return err
		}
		out := tx.Bucket(bucketOutbox)
		c := out.Cursor()
		for k, v := c.First(); k != nil && n < limit; k, v = c.First() {
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode event %s: %w", k, err)
			}
			if err := fanOut(tx, endpoints, &e); err != nil {
				return err
			}
			if err := out.Delete(k); err != nil {
				return fmt.Errorf("remove event %s: %w", k, err)
			}
			n++
		}
		return nil
	})
	return n, err
}

func allEndpoints(tx *bolt.Tx) ([]EndpointRecord, error) {
	var out []EndpointRecord
	err := tx.Bucket(bucketWebhooks).ForEach(func(k, v []byte) error {
		var ep EndpointRecord
		if err := json.Unmarshal(v, &ep); err != nil {
			return fmt.Errorf("decode webhook endpoint %s: %w", k, err)
		}
		out = append(out, ep)
		return nil
	})
	return out, err
}

// fanOut writes the deliveries of one event, due at once.
func fanOut(tx *bolt.Tx, endpoints []EndpointRecord, e *Event) error {
	body, err := json.Marshal(webhookBody{Type: e.Type, Timestamp: e.At, Data: e.Payload})
	if err != nil {
		return fmt.Errorf("encode webhook body of %s: %w", e.ID, err)
	}
	for _, ep := range endpoints {
		if !ep.AllAccounts && ep.Account != e.Account {
			continue
		}
		k := key(ep.ID, e.ID)
		next := e.At
		d := DeliveryRecord{Body: body, WebhookDelivery: companydocs.WebhookDelivery{EventID: e.ID, EventType: e.Type,
			OrderID: e.OrderID, State: companydocs.DeliveryPending, CreatedAt: e.At, NextAttempt: &next, Attempts: []companydocs.WebhookAttempt{}}}
		if err := putJSON(tx.Bucket(bucketWebhookDeliveries), string(k), d); err != nil {
			return err
		}
		if err := putPending(tx, k, next); err != nil {
			return err
		}
	}
	return nil
}

// putPending sets when the pending delivery k (endpoint 0 event) is next
// due, in the pending bucket and in the endpoint's due order.
func putPending(tx *bolt.Tx, k []byte, next time.Time) error {
	if err := deletePending(tx, k); err != nil {
		return err
	}
	if err := tx.Bucket(bucketWebhookPending).Put(k, nanos(next)); err != nil {
		return fmt.Errorf("store pending delivery: %w", err)
	}
	if err := tx.Bucket(bucketWebhookDue).Put(dueKey(k, nanos(next)), nil); err != nil {
		return fmt.Errorf("store due delivery: %w", err)
	}
	return nil
}

// deletePending removes the pending delivery k, if there is one.
func deletePending(tx *bolt.Tx, k []byte) error {
	pending := tx.Bucket(bucketWebhookPending)
	at := pending.Get(k)
	if at == nil {
		return nil
	}
	if err := tx.Bucket(bucketWebhookDue).Delete(dueKey(k, at)); err != nil {
		return fmt.Errorf("remove due delivery: %w", err)
	}
	if err := pending.Delete(k); err != nil {
		return fmt.Errorf("remove pending delivery: %w", err)
	}
	return nil
}

// dueKey is the key of pending delivery k (endpoint 0 event), due at at
// (8 bytes), in bucketWebhookDue: endpoint 0 at event.
func dueKey(k, at []byte) []byte {
	ep, event, _ := bytes.Cut(k, []byte{0})
	out := make([]byte, 0, len(k)+len(at))
	out = append(append(append(out, ep...), 0), at...)
	return append(out, event...)
}

// indexDueWebhooks builds bucketWebhookDue for a database written before it.
func indexDueWebhooks(tx *bolt.Tx) error {
	due := tx.Bucket(bucketWebhookDue)
	return tx.Bucket(bucketWebhookPending).ForEach(func(k, v []byte) error {
		return due.Put(dueKey(k, v), nil)
	})
}

// DueWebhooks returns, for each endpoint that busy does not name, its
// earliest delivery that is due at now, at most limit in all, oldest due
// first; and the earliest time a pending delivery not returned falls due
// (zero when none), for the dispatcher's timer.
func (s *Service) DueWebhooks(now time.Time, busy func(endpointID string) bool, limit int) ([]companydocs.WebhookTask, time.Time, error) {
	var next time.Time
	var tasks []companydocs.WebhookTask
	err := s.db.View(func(tx *bolt.Tx) error {
		var due []dueDelivery
		// Each endpoint's earliest pending delivery is the first key under
		// its prefix in the due order: one seek an endpoint, however long
		// its backlog.
		c := tx.Bucket(bucketWebhookDue).Cursor()
		err := tx.Bucket(bucketWebhooks).ForEach(func(ep, _ []byte) error {
			if busy(string(ep)) {
				return nil
			}
			prefix := append(bytes.Clone(ep), 0)
			k, _ := c.Seek(prefix)
			if k == nil || !bytes.HasPrefix(k, prefix) || len(k) < len(prefix)+8 {
				return nil
			}
			at := int64(binary.BigEndian.Uint64(k[len(prefix):]))
			if at > now.UnixNano() {
				if t := time.Unix(0, at); next.IsZero() || t.Before(next) {
					next = t
				}
				return nil
			}
			due = append(due, dueDelivery{k: key(string(ep), string(k[len(prefix)+8:])), at: at})
			return nil
		})
		if err != nil {
			return err
		}
		sort.Slice(due, func(i, j int) bool { return due[i].at < due[j].at })
		for _, d := range due {
			if len(tasks) == limit {
				next = now // more are due
				break
			}
			t, err := task(tx, d.k)
			if err != nil {
				return err
			}
			tasks = append(tasks, t)
		}
		return nil
	})
	return tasks, next, err
}

// dueDelivery is an endpoint's earliest pending delivery, due at at.
type dueDelivery struct {
	k  []byte // endpoint 0 event
	at int64
}

func task(tx *bolt.Tx, k []byte) (companydocs.WebhookTask, error) {
	epID, _, _ := bytes.Cut(k, []byte{0})
	var ep EndpointRecord
	var d DeliveryRecord
	if err := getJSON(tx.Bucket(bucketWebhooks), epID, &ep); err != nil {
		return companydocs.WebhookTask{}, err
	}
	if err := getJSON(tx.Bucket(bucketWebhookDeliveries), k, &d); err != nil {
		return companydocs.WebhookTask{}, err
	}
	return companydocs.WebhookTask{EndpointID: ep.ID, URL: ep.URL, Secret: ep.Secret, EventID: d.EventID,
		Body: bytes.Clone(d.Body), Attempt: attemptsMade(&d) + 1, CreatedAt: d.CreatedAt}, nil
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
// share a transaction (bbolt Batch).
func (s *Service) RecordWebhookAttempt(r companydocs.WebhookResult) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		k := key(r.EndpointID, r.EventID)
		var d DeliveryRecord
		if tx.Bucket(bucketWebhookDeliveries).Get(k) == nil {
			return nil
		}
		if err := getJSON(tx.Bucket(bucketWebhookDeliveries), k, &d); err != nil {
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
			if err := putPending(tx, k, next); err != nil {
				return err
			}
		} else if err := deletePending(tx, k); err != nil {
			return err
		} else if err := pruneDeliveries(tx, r.EndpointID, s.now().Add(-keepDeliveries)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketWebhookDeliveries), string(k), d)
	})
}

// pruneDeliveries removes up to pruneStep of the endpoint's oldest
// deliveries that are finished and older than before; a pending one at
// the head waits (at most RetryFor).
func pruneDeliveries(tx *bolt.Tx, endpointID string, before time.Time) error {
	b := tx.Bucket(bucketWebhookDeliveries)
	prefix := []byte(endpointID + "\x00")
	for range pruneStep {
		k, v := b.Cursor().Seek(prefix)
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return nil
		}
		var d DeliveryRecord
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("decode delivery %q: %w", k, err)
		}
		if d.State == companydocs.DeliveryPending || !d.CreatedAt.Before(before) {
			return nil
		}
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("prune delivery %q: %w", k, err)
		}
	}
	return nil
}

// PendingWebhooks counts the deliveries not yet delivered or failed.
func (s *Service) PendingWebhooks() (n int, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketWebhookPending).Stats().KeyN
		return nil
	})
	return n, err
}

func nanos(t time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(t.UnixNano()))
}

func putJSON(b *bolt.Bucket, k string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", k, err)
	}
	if err := b.Put([]byte(k), raw); err != nil {
		return fmt.Errorf("store %q: %w", k, err)
	}
	return nil
}

func getJSON(b *bolt.Bucket, k []byte, v any) error {
	raw := b.Get(k)
	if raw == nil {
		return fmt.Errorf("record %q is missing", k)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decode %q: %w", k, err)
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
