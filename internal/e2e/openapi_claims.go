package e2e

func OrderBody(profile, doc, plan string) map[string]any {
	return map[string]any{"company_profile_id": profile, "document_type": doc, "plan_id": plan}
}
