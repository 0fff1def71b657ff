package ordering

import (
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
	seen(s.Deliver(ctx, op, one.ID, testPDF))
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
}
