package ordering

import (
	"encoding/json"
	"strings"
	"testing"

	"companydocs"
	"companydocs/internal/reasoncodes"
)

// paramKeys are the params each blocker and next-step code carries: the
// page says the sentence in its own language from exactly these.
var paramKeys = map[string][]string{
	BlockerProfileIDMissing:     {},
	BlockerCompanyNotFound:      {"profile_id"},
	BlockerCompanyNotVerified:   {"company_name"},
	BlockerCompanyRemoved:       {"company_name"},
	BlockerDocumentNotAvailable: {"document_type", "company_name", "document_types?"}, // ? when it may be left out: the register holds none
	BlockerDocumentNotOrderable: {"document_type"},
	BlockerNoPlanConfigured:     {},
	BlockerPlanNotFound:         {"plan_id"},
	BlockerDocumentNotInPlan:    {"plan_id", "document_type", "document_types"},
	BlockerInsufficientCredits:  {"credits", "balance"},
	BlockerOpenOrderExists:      {"order_id"},
	StepPaymentDue:              {"order_id", "amount", "currency", "document_type", "company_name"},
	StepPaidWithCredits:         {"credits", "document_type", "company_name"},
	StepPaid:                    {"document_type", "company_name"},
	StepRequested:               {},
	StepDelivered:               {},
}

// checkParams asserts that a code carries its params and that each value
// is one the English sentence names, so that code and params say the same
// as the message. Failed and cancelled steps carry the note and what was
// refunded (credits, or an amount with its currency), if anything.
func checkParams(t *testing.T, code string, p *companydocs.Params, message string) {
	t.Helper()
	if p == nil {
		t.Errorf("%s: params missing (%q)", code, message)
		return
	}
	params := asJSON(t, p)
	keys, known := paramKeys[code]
	switch {
	case code == StepFailed || code == StepCancelled:
		if _, ok := params["note"]; !ok && code == StepFailed {
			t.Errorf("%s: no reason in params %v", code, params)
		}
		return // the note and the refund are said in the message in other words
	case !known:
		t.Errorf("code %q has no entry in paramKeys", code)
	}
	checkParamKeys(t, code, keys, known, params, message)
}

// checkParamKeys asserts that params hold the keys (a trailing ? on an
// optional one) and, when the keys are known, no others, and that each
// value is in the message.
func checkParamKeys(t *testing.T, code string, keys []string, known bool, params map[string]any, message string) {
	t.Helper()
	wanted := map[string]bool{}
	for _, k := range keys {
		optional := strings.HasSuffix(k, "?")
		k = strings.TrimSuffix(k, "?")
		wanted[k] = true
		if _, ok := params[k]; !ok && !optional {
			t.Errorf("%s: params %v lack %q", code, params, k)
		}
	}
	for k := range params {
		if known && !wanted[k] {
			t.Errorf("%s: params %v carry %q, which its sentence does not name", code, params, k)
		}
	}
	for k, v := range params {
		for _, word := range reasoncodes.Words(v) {
			if !strings.Contains(message, word) {
				t.Errorf("%s: param %s=%q is not in the sentence %q", code, k, word, message)
			}
		}
	}
}

// asJSON is the params as a client reads them.
func asJSON(t *testing.T, p *companydocs.Params) map[string]any {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
