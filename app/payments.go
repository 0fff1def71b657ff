package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"companydocs"
	"companydocs/ordering"
	"companydocs/stripepay"
)

// Stripe's configuration. The two keys are secrets: they come from the
// environment or from files only (never flags, which ps shows and the
// usage would print as defaults), are kept apart from Config (stripeKeys),
// and are never logged, echoed or put in /metrics.
const (
	EnvStripeSecretKey     = envPrefix + "STRIPE_SECRET_KEY"
	EnvStripeWebhookSecret = envPrefix + "STRIPE_WEBHOOK_SECRET"
)

// stripeKeys are Stripe's secrets, read by ParseFlags. They live in Main,
// not in Config, so that a printed configuration cannot show them.
type stripeKeys struct {
	secretKey, webhookSecret string
}

// StripeConfig is how serve reaches Stripe, for plans paid through it.
type StripeConfig struct {
	// SuccessURL and CancelURL are where Stripe's payment page sends the
	// customer ("{ORDER_ID}" is replaced); SessionTTL how long a page
	// stays open; APIURL replaces Stripe's address (tests: stripe-mock).
	SuccessURL, CancelURL string
	SessionTTL            time.Duration
	APIURL                string
	// RefundRetryBase is the wait after a refund's first failed attempt;
	// RefundLease how long a refund claimed on a shared store stays with
	// the node asking for it.
	RefundRetryBase time.Duration
	RefundLease     time.Duration
}

// stripeFlags adds the flags of StripeConfig but the secrets.
func stripeFlags(fs *flagSet, c *Config) {
	fs.String(&c.Stripe.SuccessURL, "stripe-success-url", "", "where Stripe's payment page sends the customer after paying; {ORDER_ID} is replaced by the order's id (a _FILE variable may name a file holding it)")
	fs.String(&c.Stripe.CancelURL, "stripe-cancel-url", "", "where Stripe's payment page sends the customer who goes back without paying; {ORDER_ID} is replaced (a _FILE variable may name a file holding it)")
	fs.Duration(&c.Stripe.SessionTTL, "stripe-session-ttl", stripepay.DefaultSessionTTL, "how long an order's Stripe payment page stays open (30m to 24h); the order holds its slot as long")
	fs.String(&c.Stripe.APIURL, "stripe-api-url", "", "Stripe's API address; empty is Stripe's own (for tests against stripe-mock)")
	fs.Duration(&c.Stripe.RefundRetryBase, "refund-retry-base", ordering.DefaultRefundRetryBase, "wait after a refund's first failed attempt at the payment provider; it doubles per attempt up to 6 hours")
	fs.Duration(&c.Stripe.RefundLease, "refund-lease", ordering.DefaultRefundLease, "on PostgreSQL, how long a refund a node claimed stays with it: a node killed mid-ask leaves the refund to be looked up after it (keep it above Stripe's 80 s call timeout)")
}

// validateStripe checks the Stripe flags that need no plan to judge.
func (c *Config) validateStripe(bad badValue) {
	if ttl := c.Stripe.SessionTTL; ttl < 30*time.Minute || ttl > 24*time.Hour {
		bad("stripe-session-ttl", "must be 30m to 24h (Stripe's bounds), got %s", ttl)
	}
	if c.Stripe.RefundRetryBase <= 0 {
		bad("refund-retry-base", "must be longer than 0, got %s", c.Stripe.RefundRetryBase)
	}
	if c.Stripe.RefundLease < time.Second {
		bad("refund-lease", "must be 1s or longer, got %s", c.Stripe.RefundLease)
	}
}

// stripeFromEnv reads the secrets, and the URLs a flag did not set, from
// COMPANYDOCS_STRIPE_* or from the file COMPANYDOCS_STRIPE_*_FILE names.
func stripeFromEnv(c *Config, keys *stripeKeys) error {
	var errs []error
	read := func(name string) string {
		v, err := envOrFile(name)
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	keys.secretKey = read(EnvStripeSecretKey)
	keys.webhookSecret = read(EnvStripeWebhookSecret)
	if c.Stripe.SuccessURL == "" {
		c.Stripe.SuccessURL = read(envName("stripe-success-url"))
	}
	if c.Stripe.CancelURL == "" {
		c.Stripe.CancelURL = read(envName("stripe-cancel-url"))
	}
	return errors.Join(errs...)
}

// envOrFile returns the variable name, or the trimmed content of the file
// name_FILE names; both set is an error. The error names the variables
// and the file, never a value.
func envOrFile(name string) (string, error) {
	v, set := os.LookupEnv(name)
	path, fileSet := os.LookupEnv(name + "_FILE")
	switch {
	case set && fileSet:
		return "", fmt.Errorf("both %s and %s_FILE are set; set one: %w", name, name, errUsage)
	case fileSet:
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("%s_FILE: read %q: %w", name, path, errors.Unwrap(err))
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(v), nil
}

// paymentProviders makes the providers the plans are paid through: none
// when no plan is paid through Stripe (--demo, the embedded plans),
// Stripe when one is, and then every piece of its configuration must be
// there; the error names what is missing.
func (m *Main) paymentProviders(plans *ordering.Plans) (map[string]ordering.PaymentProvider, error) {
	ids := plans.PaidThrough(companydocs.PaymentStripe)
	if len(ids) == 0 {
		return nil, nil
	}
	c := m.Config.Stripe
	var missing []string
	for _, v := range []struct{ name, value string }{
		{EnvStripeSecretKey, m.stripeKeys.secretKey}, {EnvStripeWebhookSecret, m.stripeKeys.webhookSecret},
		{envName("stripe-success-url"), c.SuccessURL}, {envName("stripe-cancel-url"), c.CancelURL},
	} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("plan %s is paid through Stripe, but %s is not set (set it, or name a file holding it in %s_FILE): %w",
			strings.Join(ids, ", "), strings.Join(missing, ", "), missing[0], errUsage)
	}
	p, err := stripepay.New(stripepay.Config{SecretKey: m.stripeKeys.secretKey, WebhookSecret: m.stripeKeys.webhookSecret,
		SuccessURL: c.SuccessURL, CancelURL: c.CancelURL, SessionTTL: c.SessionTTL, APIURL: c.APIURL})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, errUsage)
	}
	return map[string]ordering.PaymentProvider{companydocs.PaymentStripe: p}, nil
}

// startRefunds runs the refunder, which asks payment providers for the
// refunds due, until Close.
func (m *Main) startRefunds() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	m.refunds = &refunder{wake: make(chan struct{}, 1), stop: cancel, done: done}
	if n, err := m.Ordering.Payments.RefundsPending(); err == nil {
		m.Metrics.SetRefundsPending(n)
	}
	go func() {
		defer close(done)
		m.Ordering.Payments.RunRefunds(ctx, m.refunds.wake)
	}()
}

// refunder is the running refund loop.
type refunder struct {
	wake chan struct{}
	stop context.CancelFunc
	done chan struct{}
}

// wakeRefunds makes the refunder look at the schedule now.
func (m *Main) wakeRefunds() {
	if r := m.refunds; r != nil {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// observeRefund counts a refund attempt and sets the pending gauge.
func (m *Main) observeRefund(outcome string) {
	m.Metrics.ObserveRefund(outcome)
	if n, err := m.Ordering.Payments.RefundsPending(); err == nil {
		m.Metrics.SetRefundsPending(n)
	}
}

// stopRefunds stops the refunder and waits for it; an attempt cut short
// is looked up at the provider after the next start (or its lease), and
// asked again only if the provider has no refund.
func (m *Main) stopRefunds() {
	if r := m.refunds; r != nil {
		r.stop()
		<-r.done
	}
}
