package ordering

import (
	"context"
	"fmt"
	"strings"

	"companydocs"
)

// Blocker codes: why a preview is not orderable. Each comes with a sentence
// in companydocs.Blocker.Message. The first six are company problems
// (verified_company_required on create), the next three are problems of the
// plan choice (validation_error on create), the last two are found in the
// account (insufficient_credits and duplicate_order on create).
const (
	BlockerProfileIDMissing     = "company_profile_id_missing"
	BlockerCompanyNotFound      = "company_not_found"
	BlockerCompanyNotVerified   = "company_not_verified"
	BlockerCompanyRemoved       = "company_removed"
	BlockerDocumentNotAvailable = "document_not_available"
	BlockerDocumentNotOrderable = "document_type_not_orderable"
	BlockerPlanNotFound         = "plan_not_found"
	BlockerDocumentNotInPlan    = "document_not_in_plan"
	BlockerNoPlanConfigured     = "plan_configuration_missing"
	BlockerInsufficientCredits  = "insufficient_credits"
	BlockerOpenOrderExists      = "duplicate_order"
)

// assessment is what the gate found out about a request before touching
// the account: the plan, the profile and the blockers in the order the
// client should fix them.
type assessment struct {
	plan      companydocs.Plan
	cents     int64
	planFound bool
	profile   *companydocs.Profile
	company   []companydocs.Blocker // company problems
	choice    []companydocs.Blocker // plan / document-type problems
}

// Preview answers "could this account order this?" without ordering. It
// never fails for a missing, unknown, unverified or removed company, an
// unknown plan or a document the plan or the register does not cover:
// those come back as blockers with ordering_eligible false. Only a
// malformed request is a validation_error.
func (s *Orders) Preview(ctx context.Context, account string, req companydocs.OrderRequest) (*companydocs.Preview, error) {
	if err := s.requireRole(account, companydocs.RoleClient); err != nil {
		return nil, err
	}
	if err := validateRequest(&req); err != nil {
		return nil, err
	}
	a, err := s.assess(req)
	if err != nil {
		return nil, err
	}
	p := a.preview(req)
	err = s.store.View(ctx, func(tx Tx) error {
		b, err := accountBlockers(tx, account, req, a.plan.CreditCost)
		p.Blockers = append(p.Blockers, b...)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.OrderingEligible = len(p.Blockers) == 0
	return p, nil
}

func (a *assessment) preview(req companydocs.OrderRequest) *companydocs.Preview {
	p := &companydocs.Preview{
		CompanyProfileID: req.CompanyProfileID,
		DocumentType:     req.DocumentType,
		PlanID:           req.PlanID,
		EstimatedTotal:   formatCents(a.cents),
		Currency:         a.plan.Currency,
		CreditCost:       a.plan.CreditCost,
		Blockers:         append(append([]companydocs.Blocker{}, a.company...), a.choice...),
	}
	if a.profile != nil && a.profile.Verified {
		snap := companydocs.SnapshotOf(a.profile)
		p.Company = &snap
	}
	return p
}

// validateRequest rejects what is malformed rather than not orderable: a
// missing or unknown document type, a missing plan id, overlong fields.
func validateRequest(req *companydocs.OrderRequest) error {
	for _, f := range []struct {
		name, value string
		limit       int
	}{
		{"company_profile_id", req.CompanyProfileID, companydocs.MaxRequestField},
		{"discovery_candidate_id", req.DiscoveryCandidateID, companydocs.DiscoveryIDLength},
		{"document_type", string(req.DocumentType), companydocs.MaxRequestField},
		{"plan_id", req.PlanID, companydocs.MaxRequestField},
	} {
		if err := companydocs.CheckLength(f.name, f.value, f.limit); err != nil {
			return err
		}
	}
	switch {
	case req.DocumentType == "":
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.document_type_required", nil)
	case !knownDocumentType(req.DocumentType):
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.unknown_document_type", companydocs.Args{"document_type": req.DocumentType})
	case strings.TrimSpace(req.PlanID) == "":
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.plan_id_required", nil).WithHint(companydocs.HintListPlans)
	case req.DiscoveryCandidateID != "" && !companydocs.IsDiscoveryID(req.DiscoveryCandidateID):
		// The value is not repeated: it is not an id, and may be markup.
		return companydocs.Refusal(companydocs.EVALIDATION, "refusal.bad_discovery_id", nil)
	}
	return nil
}

var knownDocumentTypes = []companydocs.DocumentType{
	companydocs.DocumentAD, companydocs.DocumentCD, companydocs.DocumentHD, companydocs.DocumentDK,
	companydocs.DocumentSI, companydocs.DocumentUT, companydocs.DocumentVO,
}

func knownDocumentType(t companydocs.DocumentType) bool {
	for _, k := range knownDocumentTypes {
		if k == t {
			return true
		}
	}
	return false
}

// assess runs the verified-profile gate and the plan checks.
func (s *Orders) assess(req companydocs.OrderRequest) (*assessment, error) {
	a := &assessment{}
	a.choice = s.assessPlan(a, req)
	if err := s.assessCompany(a, req); err != nil {
		return nil, err
	}
	return a, nil
}

func (s *Orders) assessPlan(a *assessment, req companydocs.OrderRequest) []companydocs.Blocker {
	var out []companydocs.Blocker
	if !req.DocumentType.IsOrderable() {
		out = append(out, blocker(BlockerDocumentNotOrderable, &companydocs.Params{DocumentType: req.DocumentType}))
	}
	if s.plans.Len() == 0 {
		return append(out, blocker(BlockerNoPlanConfigured, nil))
	}
	a.plan, a.cents, a.planFound = s.plans.Plan(req.PlanID)
	if !a.planFound {
		return append(out, blocker(BlockerPlanNotFound, &companydocs.Params{PlanID: req.PlanID}))
	}
	if req.DocumentType.IsOrderable() && !a.plan.Covers(req.DocumentType) {
		out = append(out, blocker(BlockerDocumentNotInPlan, &companydocs.Params{PlanID: a.plan.ID, DocumentType: req.DocumentType, DocumentTypes: a.plan.DocumentTypes}))
	}
	return out
}

func (s *Orders) assessCompany(a *assessment, req companydocs.OrderRequest) error {
	id := req.CompanyProfileID
	if id == "" {
		a.company = []companydocs.Blocker{blocker(BlockerProfileIDMissing, nil)}
		return nil
	}
	p, err := s.profile(id)
	if err != nil {
		return err
	}
	a.profile = p
	a.company = companyBlockers(p, id, req.DocumentType)
	return checkDiscoveryCandidate(p, req)
}

// checkDiscoveryCandidate refuses a discovery_candidate_id that does not
// belong to the ordered profile, so that an order never records another
// company's candidate as its audit context. Without a profile the company
// blockers already refuse the request.
func checkDiscoveryCandidate(p *companydocs.Profile, req companydocs.OrderRequest) error {
	if p == nil || req.DiscoveryCandidateID == "" || p.HasDiscoveryID(req.DiscoveryCandidateID) {
		return nil
	}
	return companydocs.Refusal(companydocs.EVALIDATION, "refusal.discovery_id_mismatch", companydocs.Args{"discovery_candidate_id": req.DiscoveryCandidateID, "company_profile_id": p.ID})
}

// profile looks an id up; ids without a known prefix are not looked up.
func (s *core) profile(id string) (*companydocs.Profile, error) {
	if s.profiles == nil || !(strings.HasPrefix(id, "dp_") || strings.HasPrefix(id, "dc_")) {
		return nil, nil
	}
	p, err := s.profiles.Profile(id)
	if err != nil {
		return nil, fmt.Errorf("look up profile %q: %w", id, err)
	}
	return p, nil
}

// companyBlockers is the verified-profile gate for one document type.
func companyBlockers(p *companydocs.Profile, id string, t companydocs.DocumentType) []companydocs.Blocker {
	if p == nil {
		return []companydocs.Blocker{blocker(BlockerCompanyNotFound, &companydocs.Params{ProfileID: id})}
	}
	var out []companydocs.Blocker
	if !p.Verified {
		out = append(out, blocker(BlockerCompanyNotVerified, &companydocs.Params{CompanyName: p.Name}))
	}
	if p.Removed {
		out = append(out, blocker(BlockerCompanyRemoved, &companydocs.Params{CompanyName: p.Name}))
	}
	if t.IsOrderable() && !p.HasDocument(t) {
		out = append(out, blocker(BlockerDocumentNotAvailable, &companydocs.Params{DocumentType: t, CompanyName: p.Name, DocumentTypes: heldTypes(p)}))
	}
	return out
}

// heldTypes lists the orderable documents the register holds for p.
func heldTypes(p *companydocs.Profile) []companydocs.DocumentType {
	var held []companydocs.DocumentType
	for _, t := range companydocs.OrderableDocumentTypes {
		if p.HasDocument(t) {
			held = append(held, t)
		}
	}
	return held
}

// accountBlockers checks the balance and open orders of the account.
func accountBlockers(tx Tx, account string, req companydocs.OrderRequest, cost int64) ([]companydocs.Blocker, error) {
	rec, err := getAccount(tx, account)
	if err != nil {
		return nil, err
	}
	var out []companydocs.Blocker
	if rec.Credits < cost {
		out = append(out, blocker(BlockerInsufficientCredits, &companydocs.Params{Credits: cost, Balance: &rec.Credits}))
	}
	id, err := tx.OpenOrder(openSlot(account, req))
	if err != nil {
		return nil, err
	}
	if id != "" {
		out = append(out, blocker(BlockerOpenOrderExists, &companydocs.Params{OrderID: id}))
	}
	return out, nil
}

// blocker is a blocker's code, the values its sentence names and the
// sentence in English from the catalog ("blocker.<code>"); params is
// never null in the answer.
func blocker(code string, params *companydocs.Params) companydocs.Blocker {
	if params == nil {
		params = &companydocs.Params{}
	}
	return companydocs.Blocker{Code: code, Params: *params, Message: say("blocker."+code, params)}
}
