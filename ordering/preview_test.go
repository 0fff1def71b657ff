package ordering

import (
	"slices"
	"strings"
	"testing"

	"companydocs"
)

func TestPreviewBlockers(t *testing.T) { forEachStore(t, testPreviewBlockers) }

func testPreviewBlockers(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	rich := MustAccount(t, s, "rich", 10)
	broke := MustAccount(t, s, "broke", 0)
	live := fx.live[0]
	for _, tc := range []struct {
		name    string
		account string
		req     companydocs.OrderRequest
		want    []string
	}{
		{"eligible one-off", rich, request(live, "AD", "ad-single"), nil},
		{"eligible subscription", rich, request(live, "CD", "subscription-basic"), nil},
		{"profile id missing", rich, companydocs.OrderRequest{DocumentType: "AD", PlanID: "ad-single"}, []string{BlockerProfileIDMissing}},
		{"unknown profile id", rich, companydocs.OrderRequest{CompanyProfileID: "dp_doesnotexist", DocumentType: "AD", PlanID: "ad-single"}, []string{BlockerCompanyNotFound}},
		{"company name sent as profile id", rich, companydocs.OrderRequest{CompanyProfileID: live.Name, DocumentType: "AD", PlanID: "ad-single"}, []string{BlockerCompanyNotFound}},
		{"removed, AD not held", rich, request(fx.removedCD, "AD", "ad-single"), []string{BlockerCompanyRemoved, BlockerDocumentNotAvailable}},
		{"removed, CD held", rich, request(fx.removedCD, "CD", "cd-single"), []string{BlockerCompanyRemoved}},
		{"removed, nothing held", rich, request(fx.removedNo, "CD", "cd-single"), []string{BlockerCompanyRemoved, BlockerDocumentNotAvailable}},
		{"unverified discovery record", rich, request(fx.unverified, "AD", "ad-single"), []string{BlockerCompanyNotVerified, BlockerDocumentNotAvailable}},
		{"document not in plan", rich, request(live, "CD", "ad-single"), []string{BlockerDocumentNotInPlan}},
		{"document type not sold", rich, request(live, "HD", "ad-single"), []string{BlockerDocumentNotOrderable}},
		{"unknown plan", rich, request(live, "AD", "gold"), []string{BlockerPlanNotFound}},
		{"insufficient credits", broke, request(live, "AD", "subscription-basic"), []string{BlockerInsufficientCredits}},
		{"free plan without credits", broke, request(live, "AD", "ad-single"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Preview(ctx, tc.account, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range p.Blockers {
				got = append(got, b.Code)
				if b.Message == "" {
					t.Errorf("blocker %s has no message", b.Code)
				}
				checkParams(t, b.Code, &b.Params, b.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("blockers = %v, want %v", got, tc.want)
			}
			if p.OrderingEligible != (len(tc.want) == 0) {
				t.Errorf("ordering_eligible = %v with blockers %v", p.OrderingEligible, got)
			}
			if p.CompanyProfileID != tc.req.CompanyProfileID || p.DocumentType != tc.req.DocumentType {
				t.Errorf("preview echoes %q/%q, want %q/%q", p.CompanyProfileID, p.DocumentType, tc.req.CompanyProfileID, tc.req.DocumentType)
			}
		})
	}
}

func TestPreviewPriceAndSnapshot(t *testing.T) { forEachStore(t, testPreviewPriceAndSnapshot) }

func testPreviewPriceAndSnapshot(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 0)
	live := fx.live[1]
	p, err := s.Preview(ctx, acct, request(live, "AD", "ad-single"))
	if err != nil {
		t.Fatal(err)
	}
	plan, _, _ := shippedPlans(t).Plan("ad-single")
	if p.EstimatedTotal != plan.Price || p.Currency != plan.Currency {
		t.Errorf("estimated %s %s, want the plan's %s %s", p.EstimatedTotal, p.Currency, plan.Price, plan.Currency)
	}
	if p.Company == nil || p.Company.Name != live.Name || p.Company.ProfileID != live.ID {
		t.Errorf("company snapshot = %+v, want %q", p.Company, live.Name)
	}
	u, err := s.Preview(ctx, acct, request(fx.unverified, "AD", "ad-single"))
	if err != nil {
		t.Fatal(err)
	}
	if u.Company != nil {
		t.Errorf("unverified record shown as company %+v", u.Company)
	}
}

func TestPreviewRejectsMalformedRequests(t *testing.T) {
	forEachStore(t, testPreviewRejectsMalformedRequests)
}

func testPreviewRejectsMalformedRequests(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 0)
	long := string(make([]byte, companydocs.MaxRequestField+1))
	for name, req := range map[string]companydocs.OrderRequest{
		"document type missing":       {CompanyProfileID: fx.live[0].ID, PlanID: "ad-single"},
		"document type unknown":       {CompanyProfileID: fx.live[0].ID, DocumentType: "XY", PlanID: "ad-single"},
		"document type lower case":    {CompanyProfileID: fx.live[0].ID, DocumentType: "ad", PlanID: "ad-single"},
		"plan id missing":             {CompanyProfileID: fx.live[0].ID, DocumentType: "AD"},
		"profile id over 200 bytes":   {CompanyProfileID: long, DocumentType: "AD", PlanID: "ad-single"},
		"discovery id over 200 bytes": {CompanyProfileID: fx.live[0].ID, DiscoveryCandidateID: long, DocumentType: "AD", PlanID: "ad-single"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Preview(ctx, acct, req)
			wantCode(t, err, companydocs.EVALIDATION)
		})
	}
}

// TestDiscoveryCandidateIDMustBelongToTheProfile orders a real live
// registry profile with discovery_candidate_id values that are not its
// own: the id of a real, unrelated GLEIF record, a malformed id and
// markup. Preview and create both answer validation_error naming the
// field, and nothing is stored.
func TestDiscoveryCandidateIDMustBelongToTheProfile(t *testing.T) {
	forEachStore(t, testDiscoveryCandidateIDMustBelongToTheProfile)
}

func testDiscoveryCandidateIDMustBelongToTheProfile(t *testing.T) {
	fx := realFixture(t)
	s := MustOpen(t, fx.profiles, shippedPlans(t), Options{})
	acct := MustAccount(t, s, "acme", 5)
	live := fx.live[3]
	for _, id := range []string{fx.unverified.ID, "dc_123", "<img src=x onerror=alert(1)>", live.ID} {
		req := request(live, "AD", "ad-single")
		req.DiscoveryCandidateID = id
		_, err := s.Preview(ctx, acct, req)
		if e := wantCode(t, err, companydocs.EVALIDATION); !strings.Contains(e.Message, `"discovery_candidate_id"`) {
			t.Errorf("preview with %q: message %q does not name the field", id, e.Message)
		}
		_, err = s.CreateOrder(ctx, acct, req, "")
		if e := wantCode(t, err, companydocs.EVALIDATION); strings.Contains(e.Message, "<img") {
			t.Errorf("create with %q: message %q repeats the markup", id, e.Message)
		}
	}
	if orders, _, err := s.List(ctx, acct, "", "", 0); err != nil || len(orders) != 0 {
		t.Errorf("orders stored: %d, %v", len(orders), err)
	}
	if p, err := s.Preview(ctx, acct, request(live, "AD", "ad-single")); err != nil || !p.OrderingEligible {
		t.Errorf("preview without the field: %+v, %v", p, err)
	}
}
