package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"companydocs"
	"companydocs/sheet"
	"companydocs/stripepay/signedevent"
)

const paymentsUsage = `usage: companydocs payments send-test-event [--server URL] [--expired] ORDER_ID

Signs and posts to a running server the Stripe event that pays the order
(checkout.session.completed for its Checkout Session, its price paid), or
with --expired the one that closes its payment page unpaid: the payment
flow tried without Stripe's servers. It starts nothing. The order is read
from the server with the API key in ` + sheet.APIKeyEnv + ` (its client's,
or an operator's); the event is signed with the webhook secret the server
has (` + EnvStripeWebhookSecret + `, or the file ` + EnvStripeWebhookSecret + `_FILE names).`

// runPayments runs "companydocs payments send-test-event".
func runPayments(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprintln(stdout, paymentsUsage)
		return flag.ErrHelp
	case len(args) == 0 || args[0] != "send-test-event":
		fmt.Fprintln(stderr, paymentsUsage)
		return errUsage
	}
	var server string
	var expired bool
	fs := newFlagSet("payments send-test-event", stdout, stderr)
	fs.Synopsis = paymentsUsage
	fs.StringVar(&server, "server", "http://127.0.0.1:8080", "the server's address, which receives the event at /api/v1/payments/stripe/events")
	fs.BoolVar(&expired, "expired", false, "send checkout.session.expired (the page closed unpaid) instead of the payment")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("send-test-event takes one order id, got %d arguments: %w", fs.NArg(), errUsage)
	}
	secret, err := envOrFile(EnvStripeWebhookSecret)
	if err != nil {
		return err
	}
	apiKey, _ := envOrFile(sheet.APIKeyEnv)
	if secret == "" || apiKey == "" {
		return fmt.Errorf("send-test-event needs %s (the server's webhook secret) and %s (a key that may read the order): %w", EnvStripeWebhookSecret, sheet.APIKeyEnv, errUsage)
	}
	c := testEventClient{server: strings.TrimRight(server, "/"), http: &http.Client{Timeout: 30 * time.Second}}
	return c.send(ctx, fs.Arg(0), apiKey, secret, expired, stdout)
}

// testEventClient talks to the server a test event is sent to.
type testEventClient struct {
	server string
	http   *http.Client
}

// send reads the order, signs its event and posts it, saying the
// server's answer.
func (c testEventClient) send(ctx context.Context, orderID, apiKey, secret string, expired bool, stdout io.Writer) error {
	order, err := c.order(ctx, orderID, apiKey)
	if err != nil {
		return err
	}
	event, err := checkoutEventOf(order, expired)
	if err != nil {
		return err
	}
	body, signature := signedevent.Checkout(event.id, event.typ, event.session, secret, time.Now())
	var answer struct {
		Outcome string `json:"outcome"`
	}
	status, raw, err := c.do(ctx, "POST", "/api/v1/payments/stripe/events", body, "Stripe-Signature", signature)
	if err != nil {
		return err
	}
	if status != http.StatusOK || json.Unmarshal(raw, &answer) != nil {
		return fmt.Errorf("the server answered the %s event for order %s with %d: %s", event.typ, orderID, status, bytes.TrimSpace(raw))
	}
	fmt.Fprintf(stdout, "Sent %s %s for order %s (session %s): the server answered %s.\n", event.typ, event.id, orderID, event.session.ID, answer.Outcome)
	return nil
}

// testEvent is the event send-test-event signs.
type testEvent struct {
	id, typ string
	session signedevent.Session
}

// checkoutEventOf is the event that pays order at its price (its
// payment page's amount), or closes the page unpaid.
func checkoutEventOf(order companydocs.Order, expired bool) (testEvent, error) {
	p := order.Payment
	if p == nil || p.SessionID == "" {
		return testEvent{}, fmt.Errorf("order %s has no payment page: only an order on a plan paid through Stripe has one", order.ID)
	}
	cents, err := strconv.ParseInt(strings.Replace(p.Amount, ".", "", 1), 10, 64)
	if err != nil {
		return testEvent{}, fmt.Errorf("order %s: amount %q: %w", order.ID, p.Amount, err)
	}
	suffix := make([]byte, 8)
	rand.Read(suffix)
	e := testEvent{id: "evt_test_" + hex.EncodeToString(suffix), typ: "checkout.session.completed",
		session: signedevent.Session{ID: p.SessionID, OrderID: order.ID, AmountCents: cents, Currency: strings.ToLower(p.Currency),
			PaymentIntent: "pi_test_" + hex.EncodeToString(suffix)}}
	if expired {
		e.typ, e.session.PaymentIntent = "checkout.session.expired", ""
	}
	return e, nil
}

// order signs in with apiKey and reads the order.
func (c testEventClient) order(ctx context.Context, id, apiKey string) (companydocs.Order, error) {
	var order companydocs.Order
	key, _ := json.Marshal(map[string]string{"api_key": apiKey})
	status, raw, err := c.do(ctx, "POST", "/api/v1/auth/sessions/", key)
	var session companydocs.Session
	if err == nil && (status != http.StatusCreated || json.Unmarshal(raw, &session) != nil) {
		err = fmt.Errorf("signing in with %s: %d %s", sheet.APIKeyEnv, status, bytes.TrimSpace(raw))
	}
	if err != nil {
		return order, err
	}
	status, raw, err = c.do(ctx, "GET", "/api/v1/documents/orders/"+id+"/", nil, "Authorization", "Bearer "+session.Token)
	if err == nil && (status != http.StatusOK || json.Unmarshal(raw, &order) != nil) {
		err = fmt.Errorf("reading order %s: %d %s", id, status, bytes.TrimSpace(raw))
	}
	return order, err
}

// do sends a request with a JSON body (nil: none) and headers given as
// name, value pairs; it returns the status and at most 1 MiB of the body.
func (c testEventClient) do(ctx context.Context, method, path string, body []byte, headers ...string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("the server %s did not answer: %w", c.server, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, raw, err
}
