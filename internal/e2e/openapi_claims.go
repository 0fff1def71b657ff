package e2e

// OrderBody is the body of an order of document doc of profile on plan.
func OrderBody(profile, doc, plan string) map[string]any {
	return map[string]any{"company_profile_id": profile, "document_type": doc, "plan_id": plan}
}
