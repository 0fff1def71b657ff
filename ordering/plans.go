package ordering

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"companydocs"
)

// Plans is the validated plan configuration of a deployment. A nil or empty
// *Plans is valid: every lookup then reports plan_configuration_missing.
type Plans struct {
	source string
	list   []companydocs.Plan
	cents  map[string]int64 // plan id -> price in cents
}

// planFile is the JSON shape of a plans file.
type planFile struct {
	Plans []json.RawMessage `json:"plans"`
}

var (
	planIDPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
)

// NoPlans returns the Plans of a deployment whose plans file source
// does not exist: every lookup reports plan_configuration_missing, and
// Source names the file that was looked for.
func NoPlans(source string) *Plans {
	return &Plans{source: source}
}

// ParsePlans validates the JSON text of a plans file; name is used in
// error messages. Every problem found is reported, not only the first.
func ParsePlans(name string, data []byte) (*Plans, error) {
	var file planFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("plans file %q: not a JSON object {\"plans\": [...]}: %w", name, err)
	}
	p := &Plans{source: name, cents: make(map[string]int64)}
	var problems []error
	for i, raw := range file.Plans {
		plan, cents, err := parsePlan(raw, p.cents)
		if err != nil {
			problems = append(problems, fmt.Errorf("plans file %q: plan %d%s: %w", name, i+1, planLabel(plan.ID), err))
			continue
		}
		p.list = append(p.list, plan)
		p.cents[plan.ID] = cents
	}
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return p, nil
}

func planLabel(id string) string {
	if id == "" {
		return ""
	}
	return fmt.Sprintf(" (%q)", id)
}

// parsePlan decodes and validates one plan; seen holds the ids before it.
func parsePlan(raw json.RawMessage, seen map[string]int64) (companydocs.Plan, int64, error) {
	var plan companydocs.Plan
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&plan); err != nil {
		return plan, 0, fmt.Errorf("not a plan object: %w", err)
	}
	if err := validatePlan(&plan, seen); err != nil {
		return plan, 0, err
	}
	cents, err := parseCents(plan.Price)
	if err != nil {
		return plan, 0, fmt.Errorf("field \"price\": %q is %w", plan.Price, err)
	}
	if err := settlePayment(&plan, cents); err != nil {
		return plan, 0, err
	}
	return plan, cents, nil
}

// MaxPlanSearchRate bounds a plan's search_rate: a node resolves a few
// hundred batch searches a second (BENCHMARKS.md), so a higher rate is a
// typing error, not a promise.
const MaxPlanSearchRate = 10_000

// validatePlan checks every field but the price.
func validatePlan(plan *companydocs.Plan, seen map[string]int64) error {
	switch {
	case plan.ID == "":
		return errors.New(`field "id": empty; give the plan an id such as "ad-single"`)
	case !planIDPattern.MatchString(plan.ID):
		return fmt.Errorf(`field "id": %q must be 1 to 64 lower-case letters, digits, '.', '_' or '-'`, plan.ID)
	case hasKey(seen, plan.ID):
		return fmt.Errorf(`field "id": %q is used by an earlier plan`, plan.ID)
	case plan.Name == "":
		return errors.New(`field "name": empty`)
	case plan.Kind != companydocs.PlanOneOff && plan.Kind != companydocs.PlanSubscription:
		return fmt.Errorf(`field "kind": %q is neither %q nor %q`, plan.Kind, companydocs.PlanOneOff, companydocs.PlanSubscription)
	case !currencyPattern.MatchString(plan.Currency):
		return fmt.Errorf(`field "currency": %q is not a three-letter upper-case ISO 4217 code such as "EUR"`, plan.Currency)
	case plan.CreditCost < 0:
		return fmt.Errorf(`field "credit_cost": %d is negative`, plan.CreditCost)
	case plan.WatchLimit < 0:
		return fmt.Errorf(`field "watch_limit": %d is negative`, plan.WatchLimit)
	case plan.SearchRate < 0 || plan.SearchRate > MaxPlanSearchRate:
		return fmt.Errorf(`field "search_rate": %v must be 0 to %d searches a second`, plan.SearchRate, MaxPlanSearchRate)
	case plan.WatchLimit > 0 && plan.Kind != companydocs.PlanSubscription:
		return fmt.Errorf(`field "watch_limit": only a %q plan includes watches; this plan is %q`, companydocs.PlanSubscription, plan.Kind)
	}
	return validateDocumentTypes(plan.DocumentTypes)
}

// settlePayment checks how the plan is paid, or says it when the file
// does not: a priced one-off plan as agreed with the operator (as before
// plans named it), every other with credits (the debit at creation pays
// it, or it costs nothing). Only a priced one-off plan
// in EUR, with no credit cost, can be paid through Stripe.
func settlePayment(plan *companydocs.Plan, cents int64) error {
	switch plan.Payment {
	case "":
		plan.Payment = companydocs.PaymentCredits
		if plan.Kind == companydocs.PlanOneOff && cents > 0 {
			plan.Payment = companydocs.PaymentOperator
		}
		return nil
	case companydocs.PaymentCredits, companydocs.PaymentOperator:
		return nil
	case companydocs.PaymentStripe:
		if plan.Kind != companydocs.PlanOneOff || cents <= 0 || plan.CreditCost != 0 || plan.Currency != "EUR" {
			return fmt.Errorf(`field "payment": %q needs a %q plan with a price above 0 in "EUR" and a credit_cost of 0`, plan.Payment, companydocs.PlanOneOff)
		}
		return nil
	}
	return fmt.Errorf(`field "payment": %q is none of %q, %q or %q`, plan.Payment, companydocs.PaymentCredits, companydocs.PaymentOperator, companydocs.PaymentStripe)
}

// PaidThrough lists the ids of the plans paid through provider
// ("stripe"), so that serve refuses to start without its keys.
func (p *Plans) PaidThrough(provider string) []string {
	var ids []string
	for i := range p.Len() {
		if p.list[i].Payment == provider {
			ids = append(ids, p.list[i].ID)
		}
	}
	return ids
}

func hasKey(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

func validateDocumentTypes(types []companydocs.DocumentType) error {
	if len(types) == 0 {
		return errors.New(`field "document_types": empty; list at least one of "AD", "CD"`)
	}
	for i, t := range types {
		if !t.IsOrderable() {
			return fmt.Errorf(`field "document_types": %q is not a document type this service sells (AD, CD)`, t)
		}
		if slices.Contains(types[:i], t) {
			return fmt.Errorf(`field "document_types": %q is listed twice`, t)
		}
	}
	return nil
}

// Source returns the file the plans were read from ("" when none).
func (p *Plans) Source() string {
	if p == nil {
		return ""
	}
	return p.source
}

// Len returns the number of configured plans.
func (p *Plans) Len() int {
	if p == nil {
		return 0
	}
	return len(p.list)
}

// ids returns the ids of the configured plans in file order (empty, not
// nil, when there is none).
func (p *Plans) ids() []string {
	out := make([]string, 0, p.Len())
	for i := range p.Len() {
		out = append(out, p.list[i].ID)
	}
	return out
}

// Plans returns a copy of the configured plans in file order, or
// plan_configuration_missing when there is none.
func (p *Plans) Plans() ([]companydocs.Plan, error) {
	if p.Len() == 0 {
		return nil, errPlanMissing()
	}
	out := make([]companydocs.Plan, len(p.list))
	for i, plan := range p.list {
		plan.DocumentTypes = slices.Clone(plan.DocumentTypes)
		out[i] = plan
	}
	return out, nil
}

// Plan returns the plan with the given id and its price in cents.
func (p *Plans) Plan(id string) (companydocs.Plan, int64, bool) {
	if p == nil {
		return companydocs.Plan{}, 0, false
	}
	for _, plan := range p.list {
		if plan.ID == id {
			plan.DocumentTypes = slices.Clone(plan.DocumentTypes)
			return plan, p.cents[id], true
		}
	}
	return companydocs.Plan{}, 0, false
}

func errPlanMissing() error {
	return companydocs.Refusal(companydocs.EPLANMISSING, "refusal.no_plans", nil)
}

// WatchLimit is how many companies an account that may use every
// configured plan may watch: the highest watch_limit of the subscription
// plans, 0 when none includes watches.
func (p *Plans) WatchLimit() int {
	limit := 0
	for i := range p.Len() {
		if p.list[i].Kind == companydocs.PlanSubscription {
			limit = max(limit, p.list[i].WatchLimit)
		}
	}
	return limit
}
