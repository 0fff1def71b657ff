package ordering

import (
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/messages"
)

// TestPaymentSentences: the next step and the history of an order paid
// through Stripe say the page's URL, the expiry and the refund in English
// and German, from the catalog.
func TestPaymentSentences(t *testing.T) {
	at := time.Date(2026, 11, 28, 10, 15, 0, 0, time.UTC)
	pay := &companydocs.Params{OrderID: "ord_x", Amount: "4.50", Currency: "EUR", DocumentType: "AD", CompanyName: "Rheinbahn AG",
		PaymentURL: "https://checkout.stripe.com/c/pay/cs_test_1", ExpiresAt: &at}
	refund := &companydocs.Params{RefundedAmount: "4.50", Currency: "EUR", Provider: companydocs.PaymentStripe}
	for _, tc := range []struct {
		key  string
		p    *companydocs.Params
		want map[string][]string
	}{
		{"step.pay_online", pay, map[string][]string{"en": {"4.50 EUR", "ord_x", "2026-11-28 10:15 UTC", "Rheinbahn AG"}, "de": {"Bezahlen Sie 4,50 EUR", "2026-11-28 10:15 UTC"}}},
		{"history.cancelled_by_client", refund, map[string][]string{"en": {"Refund pending: 4.50 EUR"}, "de": {"Erstattung ausstehend: 4,50 EUR"}}},
		{"history.refunded", refund, map[string][]string{"en": {"Refunded: 4.50 EUR"}, "de": {"Erstattet: 4,50 EUR"}}},
		{"history.paid_online", &companydocs.Params{Amount: "4.50", Currency: "EUR", Provider: companydocs.PaymentStripe}, map[string][]string{"en": {"Paid 4.50 EUR online."}, "de": {"4,50 EUR online bezahlt."}}},
		{"history.payment_mismatch", &companydocs.Params{Amount: "4.00", Currency: "USD", Provider: companydocs.PaymentStripe}, map[string][]string{"en": {"4.00 USD", "not paid"}, "de": {"4,00 USD", "nicht bezahlt"}}},
	} {
		for _, lang := range messages.Languages {
			got := companydocs.SayIn(lang, tc.key, tc.p)
			for _, w := range tc.want[lang] {
				if !strings.Contains(got, w) {
					t.Errorf("%s in %s: %q lacks %q", tc.key, lang, got, w)
				}
			}
			if strings.Contains(got, "{") {
				t.Errorf("%s in %s: %q has a placeholder left", tc.key, lang, got)
			}
		}
	}
}

// TestPaymentProviderMissingRefusesTheOrder: a plan paid through a
// provider the program did not wire is refused (service_unavailable) and
// stores nothing, rather than falling back to another way of paying.
func TestPaymentProviderMissingRefusesTheOrder(t *testing.T) {
	forEachStore(t, testPaymentProviderMissingRefusesTheOrder)
}

func testPaymentProviderMissingRefusesTheOrder(t *testing.T) {
	fx := realFixture(t)
	plans, err := ParsePlans("plans.json", []byte(`{"plans":[{"id":"card","name":"C","kind":"one_off","document_types":["AD"],"currency":"EUR","price":"4.50","credit_cost":0,"payment":"stripe"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	s := MustOpen(t, fx.profiles, plans, Options{})
	acct := MustAccount(t, s, "payer", 0)
	_, err = s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "card"), "")
	wantCode(t, err, companydocs.EUNAVAILABLE)
	if list, _, err := s.List(ctx, acct, "", "", 0); err != nil || len(list) != 0 {
		t.Errorf("orders after the refusal: %d, %v", len(list), err)
	}
}
