package ordering

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"time"

	"companydocs"
)

// Webhooks keeps the accounts' webhook endpoints (this file) and delivers
// the outbox to them (fanout.go): FanOutEvents turns each event into one
// delivery per endpoint that receives it, DueWebhooks and
// RecordWebhookAttempt serve the dispatcher (package webhook), which
// sends them.
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
