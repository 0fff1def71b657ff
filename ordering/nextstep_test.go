package ordering

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"companydocs"
)

// TestNextStepsReadAsWords follows orders through every status and reads
// each next step as a person would: no status code, no API path, no JSON
// field name, and "1 credit" in the singular.
func TestNextStepsReadAsWords(t *testing.T) { forEachStore(t, testNextStepsReadAsWords) }

func testNextStepsReadAsWords(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	var steps []companydocs.NextStep
	seen := func(o *companydocs.Order, err error) *companydocs.Order {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, o.NextStep)
		return o
	}
	one := seen(s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), ""))
	credit := seen(s.CreateOrder(ctx, acct, request(fx.live[1], "AD", "subscription-basic"), ""))
	seen(s.Order(ctx, acct, credit.ID))
	seen(s.OperatorAction(ctx, op, one.ID, ActionPay, ""))
	seen(s.OperatorAction(ctx, op, one.ID, ActionRequest, ""))
	seen(s.Deliver(ctx, op, one.ID, bytes.NewReader(testPDF)))
	seen(s.OperatorAction(ctx, op, credit.ID, ActionRequest, ""))
	seen(s.OperatorAction(ctx, op, credit.ID, ActionFail, "The register has no such entry."))
	cancelled := seen(s.CreateOrder(ctx, acct, request(fx.live[2], "AD", "ad-single"), ""))
	seen(s.CancelOrder(ctx, acct, cancelled.ID, ""))

	kinds, codes := map[string]bool{}, map[string]bool{}
	for _, step := range steps {
		kinds[step.Kind] = true
		codes[step.Code] = true
		checkParams(t, step.Code, step.Params, step.Message)
		for _, raw := range append([]string{"/api/", "GET ", "POST ", "download_url", "_url", "1 credits", "workflow"}, companydocs.OrderStatuses...) {
			if strings.Contains(step.Message, raw) {
				t.Errorf("next step %q (%s) contains %q", step.Message, step.Kind, raw)
			}
		}
	}
	for _, kind := range []string{NextStepPayment, NextStepDelivery, NextStepDownload, NextStepNone} {
		if !kinds[kind] {
			t.Errorf("no next step of kind %q was read", kind)
		}
	}
	for _, code := range []string{StepPaymentDue, StepPaidWithCredits, StepPaid, StepRequested, StepDelivered, StepFailed, StepCancelled} {
		if !codes[code] {
			t.Errorf("no next step with code %q was read", code)
		}
	}
	if failed := steps[7]; failed.Params == nil || failed.Params.Note != "The register has no such entry." || failed.Params.RefundedCredits != 1 {
		t.Errorf("failed credit order's step params = %v, want the reason as note and 1 credit refunded", failed.Params)
	}
	// a person's words are quoted as theirs, never spliced into the sentence
	if want := "The order failed. Reason: “The register has no such entry.” 1 credit refunded to the account. Order again once the reason is resolved."; steps[7].Message != want {
		t.Errorf("failed credit order's step says %q, want %q", steps[7].Message, want)
	}
}

// historyParamKeys are the params each history code carries beside what a
// transition refunded (refundKeys, any code may carry them).
var historyParamKeys = map[string][]string{
	HistoryCreated:             {},
	HistoryPaidAtCreation:      {"credits"},
	HistoryPaymentConfirmed:    {},
	HistoryRequested:           {},
	HistoryDelivered:           {},
	HistoryCancelledByClient:   {},
	HistoryCancelledByOperator: {},
	HistoryNoteGiven:           {"note"},
}

var refundKeys = []string{"refunded_credits?", "refunded_amount?", "currency?"}

// TestHistorySaysCodes follows orders through every transition: each
// history entry carries the code of its note with the params the note
// names (a person's note as written, what was refunded), so that a client
// can say it in its own language.
func TestHistorySaysCodes(t *testing.T) { forEachStore(t, testHistorySaysCodes) }

func testHistorySaysCodes(t *testing.T) {
	s, fx, acct, op := lifecycleService(t)
	var orders []*companydocs.Order
	keep := func(o *companydocs.Order, err error) *companydocs.Order {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		orders = append(orders, o)
		return o
	}
	one := keep(s.CreateOrder(ctx, acct, request(fx.live[0], "AD", "ad-single"), ""))
	keep(s.OperatorAction(ctx, op, one.ID, ActionPay, ""))
	keep(s.OperatorAction(ctx, op, one.ID, ActionRequest, ""))
	keep(s.Deliver(ctx, op, one.ID, bytes.NewReader(testPDF)))
	credit := keep(s.CreateOrder(ctx, acct, request(fx.live[1], "AD", "subscription-basic"), ""))
	keep(s.OperatorAction(ctx, op, credit.ID, ActionFail, "The register has no such entry."))
	mine := keep(s.CreateOrder(ctx, acct, request(fx.live[2], "AD", "ad-single"), ""))
	keep(s.CancelOrder(ctx, acct, mine.ID, ""))
	paid := keep(s.CreateOrder(ctx, acct, request(fx.live[3], "AD", "ad-single"), ""))
	keep(s.OperatorAction(ctx, op, paid.ID, ActionPay, ""))
	keep(s.OperatorAction(ctx, op, paid.ID, ActionCancel, ""))

	codes := map[string]bool{}
	for _, o := range orders {
		for _, h := range o.History {
			codes[h.Code] = true
			keys, ok := historyParamKeys[h.Code]
			if !ok {
				t.Errorf("history entry %q has code %q, which is not a history code", h.Note, h.Code)
				continue
			}
			if h.Params == nil {
				t.Errorf("%s: params missing (%q)", h.Code, h.Note)
				continue
			}
			checkParamKeys(t, h.Code, append(slices.Clone(keys), refundKeys...), true, asJSON(t, h.Params), h.Note)
		}
	}
	for code := range historyParamKeys {
		if !codes[code] {
			t.Errorf("no history entry with code %q was read", code)
		}
	}
	last := orders[len(orders)-1].History
	if got := last[len(last)-1]; got.Params == nil || got.Params.RefundedAmount == "" || got.Params.Currency == "" {
		t.Errorf("a paid one-off order cancelled by the operator: history params %+v, want the refunded payment", got.Params)
	}
}
