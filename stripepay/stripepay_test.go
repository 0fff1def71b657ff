package stripepay

import (
	"context"
	"strings"
	"testing"

	"companydocs/internal/stripemocktest"
	"companydocs/ordering"
)

// TestStripeRefundLookup asks stripe-mock, which checks every request
// against Stripe's OpenAPI document, for a refund and for the refunds of
// a payment intent. Its list answers one refund of 1.00 without an order
// in its metadata (as one made by hand in Stripe's dashboard): it counts
// for a payment of 1.00, which it pays back whole, and not for one of
// 4.50, which is then not refunded.
func TestStripeRefundLookup(t *testing.T) {
	mock := stripemocktest.Start(t)
	p, err := New(Config{SecretKey: "sk_test_lookup", WebhookSecret: stripemocktest.Secret, SuccessURL: "https://docs.example.com/ok",
		CancelURL: "https://docs.example.com/back", APIURL: mock.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := ordering.RefundRequest{OrderID: "ord_lookup", PaymentID: "pi_test_lookup", AmountCents: 100, Currency: "EUR", IdempotencyKey: "companydocs-refund-ord_lookup"}
	made, err := p.Refund(ctx, req)
	if err != nil || !strings.HasPrefix(made, "re_") {
		t.Fatalf("refund: %q, %v", made, err)
	}
	found, err := p.FindRefund(ctx, req)
	if err != nil || !strings.HasPrefix(found, "re_") {
		t.Errorf("a payment of 1.00 refunded by 1.00: found %q, %v", found, err)
	}
	req.AmountCents = 450
	if found, err := p.FindRefund(ctx, req); err != nil || found != "" {
		t.Errorf("a payment of 4.50 refunded by 1.00: found %q, %v; want none", found, err)
	}
}
