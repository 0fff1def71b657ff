package companydocs

import (
	"strings"
	"time"

	"companydocs/messages"
)

// SayIn says the catalog's sentence key with the params p in lang: the
// message of a blocker, a next step or a history entry.
func SayIn(lang, key string, p *Params) string {
	return strings.TrimSpace(messages.Say(lang, key, paramArgs(lang, p)))
}

// paramArgs turns the params of a blocker, next step or history entry
// into the words their sentences use in lang: names of documents, money,
// credits, and a person's note quoted, never spliced into the sentence.
func paramArgs(lang string, p *Params) messages.Args {
	if p == nil {
		p = &Params{}
	}
	en := func(key string, args messages.Args) string { return messages.Say(lang, key, args) }
	documentName := func(t DocumentType) string { return documentNameIn(lang, t) }
	creditWords := func(n int64) string { return creditWordsIn(lang, n) }
	docs := make([]string, len(p.DocumentTypes))
	for i, t := range p.DocumentTypes {
		docs[i] = documentName(t)
	}
	a := messages.Args{
		"company": p.CompanyName, "profile_id": p.ProfileID, "order": p.OrderID, "plan_id": p.PlanID, "plan": p.PlanID,
		"document": documentName(p.DocumentType), "documents": strings.Join(docs, ", "), "held": "",
		"amount": moneyIn(lang, p.Amount, p.Currency), "credits": creditWords(p.Credits), "note": "", "refund": "",
	}
	if len(docs) > 0 {
		a["held"] = en("blocker.held", messages.Args{"documents": a["documents"]})
	}
	if p.Balance != nil {
		a["balance"] = creditWords(*p.Balance)
	}
	if p.Note != "" {
		a["note"] = en("note.quoted", messages.Args{"text": p.Note})
		if !strings.ContainsAny(p.Note[len(p.Note)-1:], ".!?") {
			a["note"] = a["note"].(string) + "."
		}
	}
	switch {
	case p.RefundedCredits > 0:
		a["refund"] = " " + en("refund.credits", messages.Args{"credits": creditWords(p.RefundedCredits)})
	case p.RefundedAmount != "" && p.Provider != "":
		a["refund"] = " " + en("refund.provider", messages.Args{"amount": moneyIn(lang, p.RefundedAmount, p.Currency)})
	case p.RefundedAmount != "":
		a["refund"] = " " + en("refund.payment", messages.Args{"amount": moneyIn(lang, p.RefundedAmount, p.Currency)})
	}
	a["refunded"] = moneyIn(lang, p.RefundedAmount, p.Currency)
	a["payment_url"] = p.PaymentURL
	if p.ExpiresAt != nil {
		a["expires"] = dateTimeIn(lang, *p.ExpiresAt)
	}
	return a
}

// dateTimeIn writes a moment in UTC as the page writes dates in the
// language: "28 Nov 2026, 10:15 UTC", "28.11.2026, 10:15 UTC" (a German
// panel that said "2026-11-28 10:15 UTC" beside the page's "28.11.2026,
// 10:15" mixed two ways of writing a date).
func dateTimeIn(lang string, t time.Time) string {
	if lang == "de" {
		return t.UTC().Format("02.01.2006, 15:04 UTC")
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}

// creditWordsIn counts credits in words: "1 credit", "5 credits".
func creditWordsIn(lang string, n int64) string {
	if n == 1 {
		return messages.Say(lang, "credits.one", nil)
	}
	return messages.Say(lang, "credits.many", messages.Args{"n": n})
}

// moneyIn writes an amount with its currency: "4.50 EUR", in German
// with a decimal comma ("4,50 EUR").
func moneyIn(lang, amount, currency string) string {
	if lang == messages.German {
		amount = strings.Replace(amount, ".", ",", 1)
	}
	return strings.TrimSpace(amount + " " + currency)
}

// documentNameIn names a document type: "Current printout (AD)".
func documentNameIn(lang string, t DocumentType) string {
	if key := "doc." + string(t); messages.Has(key) {
		return messages.Say(lang, key, nil)
	}
	return string(t)
}

// The service stores and sends its sentences in English (webhook events,
// stored orders); an answer to a person's request says them in the
// language the request asks for. These functions return copies with the
// coded sentences said in lang; what has no code (an order stored before
// codes existed) keeps its English.

// OrderIn returns o with its next step and its coded history notes said
// in lang; o itself is not changed.
func OrderIn(lang string, o *Order) *Order {
	if o == nil || lang == messages.English {
		return o
	}
	c := *o
	if c.NextStep.Code != "" {
		c.NextStep.Message = SayIn(lang, "step."+c.NextStep.Code, c.NextStep.Params)
	}
	c.History = make([]HistoryEntry, len(o.History))
	for i, h := range o.History {
		if h.Code != "" {
			h.Note = SayIn(lang, "history."+h.Code, h.Params)
		}
		c.History[i] = h
	}
	return &c
}

// OrdersIn says every order of a list in lang (OrderIn).
func OrdersIn(lang string, orders []*Order) []*Order {
	out := make([]*Order, len(orders))
	for i, o := range orders {
		out[i] = OrderIn(lang, o)
	}
	return out
}

// PreviewIn returns p with its blockers said in lang.
func PreviewIn(lang string, p *Preview) *Preview {
	if p == nil || lang == messages.English {
		return p
	}
	c := *p
	c.Blockers = make([]Blocker, len(p.Blockers))
	for i, b := range p.Blockers {
		b.Message = SayIn(lang, "blocker."+b.Code, &b.Params)
		c.Blockers[i] = b
	}
	return &c
}

// SaidPlan is a plan as GET /documents/plans/ answers it: with Label, the
// short name a person chooses it by, in the request's language.
type SaidPlan struct {
	Plan
	Label string `json:"label"`
}

// PlansIn gives each plan its label in lang: its documents, its kind and
// its price ("AD, one-off: 4.50 EUR"), short enough for a phone's
// select box.
func PlansIn(lang string, plans []Plan) []SaidPlan {
	out := make([]SaidPlan, len(plans))
	for i, p := range plans {
		docs := make([]string, len(p.DocumentTypes))
		for k, t := range p.DocumentTypes {
			docs[k] = string(t)
		}
		kind := p.Kind
		if key := "plan.kind." + p.Kind; messages.Has(key) {
			kind = messages.Say(lang, key, nil)
		}
		price := moneyIn(lang, p.Price, p.Currency)
		if p.CreditCost > 0 && strings.Trim(p.Price, "0.") == "" {
			price = creditWordsIn(lang, p.CreditCost)
		}
		out[i] = SaidPlan{Plan: p, Label: messages.Say(lang, "plan.label",
			messages.Args{"documents": strings.Join(docs, " + "), "kind": kind, "price": price})}
	}
	return out
}

// OperatorStep is what an operator does next with an order: the first
// action the service allows the operator now ("none" when nothing is
// left), and its sentence.
type OperatorStep struct {
	Action  string `json:"action"`
	Message string `json:"message"`
}

// OperatorStepIn says the operator's next step with o in lang; o's
// AllowedActions are the operator's.
func OperatorStepIn(lang string, o *Order) OperatorStep {
	action := "none"
	if len(o.AllowedActions) > 0 {
		action = o.AllowedActions[0]
	}
	key := "operatorStep." + action
	if !messages.Has(key) {
		key = "operatorStep.none"
	}
	args := messages.Args{"amount": moneyIn(lang, o.Total, o.Currency), "document": documentNameIn(lang, o.DocumentType), "company": o.Company.Name}
	if p := o.Payment; p != nil && p.Status == PaymentOpen && o.Status == OrderStatusPreviewReady {
		key = "operatorStep.awaiting_payment" // the client pays on the provider's page; its event pays the order
		args["expires"] = dateTimeIn(lang, p.ExpiresAt)
	}
	return OperatorStep{Action: action, Message: messages.Say(lang, key, args)}
}
