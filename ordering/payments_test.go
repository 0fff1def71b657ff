package ordering

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"companydocs"
	"companydocs/internal/testclock"
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
		{"step.pay_online", pay, map[string][]string{"en": {"4.50 EUR", "ord_x", "28 Nov 2026, 10:15 UTC", "Rheinbahn AG"}, "de": {"Bezahlen Sie 4,50 EUR", "28.11.2026, 10:15 UTC"}}},
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

// TestPaymentEventsPruned: the ids of payment events applied more than
// paymentEventsKept ago are deleted (in batches, so more than one batch
// goes), the younger ones stay; an id pruned may be claimed again, one
// kept is still a replay.
func TestPaymentEventsPruned(t *testing.T) { forEachStore(t, testPaymentEventsPruned) }

func testPaymentEventsPruned(t *testing.T) {
	c := testclock.New()
	s := MustOpen(t, nil, nil, Options{Now: c.Now})
	start := c.Now()
	claim := func(id string, at time.Time) bool {
		t.Helper()
		var claimed bool
		if err := s.store.Update(ctx, func(tx Tx) error {
			var err error
			claimed, err = tx.ClaimPaymentEvent("stripe", id, at)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return claimed
	}
	old := pruneBatch + 3
	if err := s.store.Update(ctx, func(tx Tx) error {
		for i := range old {
			if _, err := tx.ClaimPaymentEvent("stripe", fmt.Sprintf("evt_old_%d", i), start); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	claim("evt_young", start.Add(10*24*time.Hour))
	c.Advance(paymentEventsKept + time.Hour)
	n, err := s.prunePaymentEvents(ctx)
	if err != nil || n != old {
		t.Fatalf("pruned %d (%v), want the %d older than %s", n, err, old, paymentEventsKept)
	}
	if claim("evt_young", c.Now()) {
		t.Errorf("an id applied 21 days ago was pruned: a replay of it would apply again")
	}
	if !claim("evt_old_7", c.Now()) {
		t.Errorf("an id applied 30 days and an hour ago is still kept")
	}
	if n, err := s.prunePaymentEvents(ctx); err != nil || n != 0 {
		t.Errorf("a second prune deleted %d (%v)", n, err)
	}
}
