package orders

import (
	"bytes"
	"strings"
	"testing"

	"companydocs/app"
	"companydocs/internal/e2e"
	"companydocs/sheet"
)

// TestSendTestEventPaysAnOrder: against a server whose Stripe is
// stripe-mock, "companydocs payments send-test-event" reads an order
// waiting for its payment with the client's API key, signs the event
// that pays it with the server's webhook secret and posts it: the order
// is PAID, with the payment id the event named; --expired closes another
// order's page, cancelling it. A wrong webhook secret is refused by the
// server and said.
func TestSendTestEventPaysAnOrder(t *testing.T) {
	front := e2e.StartStripeFront(t, 1)
	_, flags := e2e.StripeEnv(t, front)
	ts, _ := e2e.FlowServer(t, flags...)
	profile := ts.FlowSearch(t, "HRB 562 Düsseldorf").Candidates[0].ProfileID
	key, err := ts.Accounts.CreateAccount("tryer", 0)
	if err != nil {
		t.Fatal(err)
	}
	var session struct{ Token string }
	if status, raw := ts.Call(t, "POST", "/api/v1/auth/sessions/", "", map[string]string{"api_key": key}, &session); status != 201 {
		t.Fatalf("sign in: %d %s", status, raw)
	}
	client := session.Token
	t.Setenv(sheet.APIKeyEnv, key)
	send := func(args ...string) (string, int) {
		var stdout, stderr bytes.Buffer
		code := app.Run(t.Context(), append([]string{"payments", "send-test-event", "--server", ts.Base}, args...), &stdout, &stderr)
		return stdout.String() + stderr.String(), code
	}

	paid := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "AD", "stripe-single"))
	if out, code := send(paid.ID); code != 0 || !strings.Contains(out, "checkout.session.completed") || !strings.Contains(out, "applied") {
		t.Fatalf("send-test-event %s: exit %d, %s", paid.ID, code, out)
	}
	if got := ts.Act(t, 200, "GET", "/api/v1/documents/orders/"+paid.ID+"/", client, nil); got.Status != "PAID" ||
		got.Payment == nil || !strings.HasPrefix(got.Payment.PaymentID, "pi_test_") {
		t.Fatalf("after the test event: %s, payment %+v; want PAID with the event's payment id", got.Status, got.Payment)
	}

	closed := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	if out, code := send("--expired", closed.ID); code != 0 || !strings.Contains(out, "checkout.session.expired") {
		t.Fatalf("send-test-event --expired: exit %d, %s", code, out)
	}
	if got := ts.Act(t, 200, "GET", "/api/v1/documents/orders/"+closed.ID+"/", client, nil); got.Status != "CANCELLED" {
		t.Fatalf("after the expiry event: %s, want CANCELLED", got.Status)
	}

	t.Setenv(app.EnvStripeWebhookSecret, "whsec_not_the_servers")
	third := ts.Act(t, 201, "POST", "/api/v1/documents/orders/", client, e2e.OrderJSON(profile, "CD", "stripe-single"))
	if out, code := send(third.ID); code != 1 || !strings.Contains(out, "400") || !strings.Contains(out, "invalid_signature") {
		t.Fatalf("with another secret: exit %d, %s; want 1 and the server's invalid_signature", code, out)
	}
}
